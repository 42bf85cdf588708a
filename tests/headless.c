/* headless.c - see headless.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "headless.h"

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "../ui/provide_curses.h"

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
