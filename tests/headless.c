/* headless.c - see headless.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "headless.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ui/json_out.h"
#include "../ui/provide_curses.h"
#include "../ui/tui_draw.h"

struct crt headless_crt;
static SCREEN *screen;
static FILE *term_out, *term_in;

void headless_utf8_locale(void)
{
	cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"));
}

void headless_up(void)
{
	headless_utf8_locale();
	term_out = fopen("/dev/null", "w");
	term_in = fopen("/dev/null", "r");
	screen = newterm("xterm", term_out, term_in);
	cr_assert_not_null(screen);
	set_term(screen);
	resizeterm(24, 80);
	memset(&headless_crt, 0, sizeof headless_crt);
	headless_crt.utf8 = true;
}

void headless_down(void)
{
	endwin();
	delscreen(screen);
	fclose(term_out);
	fclose(term_in);
}

const char *headless_row(int y)
{
	static char buf[2048];
	int n = mvinnstr(y, 0, buf, (int)sizeof buf - 1);

	cr_assert_geq(n, 0);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return buf;
}

char *headless_capture(int (*print)(FILE *, const struct snapshot *),
                       const struct snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(print(f, s), 0);
	fclose(f);
	return buf;
}

json_t *headless_json(const struct snapshot *s)
{
	char *out = headless_capture(json_out_print, s);
	json_error_t err;
	json_t *j;

	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1,
	             "not exactly one line: %s", out);
	j = json_loads(out, 0, &err);
	cr_assert_not_null(j, "%s: %s", err.text, out);
	free(out);
	return j;
}

void headless_start(struct tui_state *st, struct snapshot *s, bool utf8)
{
	headless_crt.utf8 = utf8;
	tui_state_init(st, utf8);
	tui_show(st, s);
	headless_draw(st);
}

void headless_stop(struct tui_state *st)
{
	tui_state_free(st);
}

void headless_draw(struct tui_state *st)
{
	erase();
	tui_draw_below(st, &headless_crt, 0);
}
