/* test_source_scroll.c - the lines view scrolls its source sideways (issue
 * 11 item 6): at 80 columns a long line is cut on the right; Right shows
 * what was cut, the Source title says from which column, Left scrolls
 * back and, at the first column, leaves the view as before. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/crt.h"
#include "../ui/keys.h"
#include "../ui/lines_screen.h"
#include "../ui/tui_state.h"

static const char program[] =
	"def work(n):\n"                                                    /* 1 */
	"    return sum(i * i for i in range(n)) + len('the end of this "
	"long line is far beyond eighty columns: TAIL-MARK')\n";           /* 2 */

static char g_path[64];

static void up(void)
{
	int fd;

	headless_up();
	snprintf(g_path, sizeof g_path, "/tmp/pytop-scroll-XXXXXX");
	fd = mkstemp(g_path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, program, sizeof program - 1),
	             (ssize_t)(sizeof program - 1));
	close(fd);
}

static void down(void)
{
	headless_down();
	unlink(g_path);
}

static void open_work(struct tui_state *st)
{
	/* The source is read through the target's root: this process's. */
	struct snapshot s = sb_snapshot(getpid(), "python3 w.py", "3.11.7", 100);
	struct snap_counts c = { .own = 100, .total = 100 };

	*sb_funcs(&s, 1) = (struct snap_func){ .name = "work", .file = g_path,
	                                       .line = 1, .c = c };
	*sb_lines(&s, 1) = (struct snap_line){ .name = "work", .file = g_path,
	                                       .line = 2, .c = c };
	headless_start(st, &s, true);
	keys_handle(st, '\r');
	cr_assert_eq(st->view, &lines_screen_ops);
	headless_draw(st);
}

/* The screen row showing source line 2. */
static const char *line2(void)
{
	for (int y = 0; y < 24; y++)
		if (strncmp(headless_row(y), "    2 ", 6) == 0)
			return headless_row(y);
	cr_assert_fail("no row for line 2");
	return "";
}

TestSuite(scroll, .init = up, .fini = down);

Test(scroll, right_shows_the_cut_end_left_goes_back)
{
	struct tui_state st;
	int rights = 0;

	open_work(&st);
	cr_assert_null(strstr(line2(), "TAIL-MARK"), "%s", line2());
	cr_assert_not_null(strstr(line2(), "return sum("), "%s", line2());
	/* Right until the end of the line is in view (a few steps). */
	while (strstr(line2(), "TAIL-MARK") == NULL && rights < 20) {
		cr_assert_eq(keys_handle(&st, CRT_KEYCODE(KEY_RIGHT)), REACT_REDRAW);
		headless_draw(&st);
		rights++;
	}
	cr_assert_not_null(strstr(line2(), "TAIL-MARK')"), "%s", line2());
	cr_assert_null(strstr(line2(), "return sum("), "%s", line2());
	cr_assert_not_null(strstr(headless_row(1), "Source from column "), "%s",
	                   headless_row(1));
	/* Left as often: back at the first column, still in the view. */
	for (int i = 0; i < rights; i++)
		keys_handle(&st, CRT_KEYCODE(KEY_LEFT));
	headless_draw(&st);
	cr_assert_eq(st.view, &lines_screen_ops);
	cr_assert_not_null(strstr(line2(), "return sum("), "%s", line2());
	cr_assert_null(strstr(headless_row(1), "from column"), "%s", headless_row(1));
	/* Left once more: back to the functions, as before. */
	keys_handle(&st, CRT_KEYCODE(KEY_LEFT));
	cr_assert_eq(st.view, &functions_screen_ops);
	headless_stop(&st);
}
