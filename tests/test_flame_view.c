/* test_flame_view.c - the flame graph screen (G) without the engine: a
 * fixed snapshot's stacks drawn headlessly at 80x24 and 200x50 (UTF-8 and
 * ASCII), block widths checked against their shares, the arrows, zoom
 * and the status row, a refresh that must not move the blocks, and a
 * hostile name shown escaped in the graph, its status and the tree. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "stack_fixture.h"
#include "../ui/crt.h"
#include "../ui/flame_screen.h"
#include "../ui/keys.h"
#include "../ui/text.h"
#include "../ui/tui_state.h"

#define K(k) CRT_KEYCODE(k)

static struct snapshot fixture(void)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 0);

	sf_stack(&s, "main:3 handle:12 parse:21", 500, 1, 4242);
	sf_stack(&s, "main:3 handle:14 render:31", 200, 1, 4242);
	sf_stack(&s, "main:5 idle:42", 100, 2, 4242);
	sf_stack(&s, "main:3 handle:12 parse:22 parse:25", 100, 1, 4242);
	sf_stack(&s, "!", 100, 1, 4242);
	return s;
}

/* Row y's blocks: the columns where each starts (its separator). */
static int block_starts(int y, const char *sep, int *x, int max)
{
	const char *row = headless_row(y), *p = row;
	int n = 0;

	while ((p = strstr(p, sep)) != NULL && n < max) {
		char before[1024];
		snprintf(before, sizeof before, "%.*s", (int)(p - row), row);
		x[n++] = text_width(before, true);
		p += strlen(sep);
	}
	return n;
}

/* A row of blocks: "label", width, ..., NULL; "▏" before each, "-"
 * after the label (a static buffer). */
static const char *blocks(const char *label, int width, ...)
{
	static char row[4096];
	size_t len = 0;
	va_list ap;

	va_start(ap, width);
	for (; label != NULL; label = va_arg(ap, const char *),
	     width = label != NULL ? va_arg(ap, int) : 0) {
		len += (size_t)snprintf(row + len, sizeof row - len, "▏%s", label);
		for (int i = 1 + text_width(label, true); i < width; i++)
			row[len++] = '-';
		row[len] = '\0';
	}
	va_end(ap);
	return row;
}

static void start(struct tui_state *st, bool utf8)
{
	struct snapshot s = fixture();

	headless_start(st, &s, utf8);
	cr_assert_eq(keys_handle(st, 'G'), REACT_REDRAW);
	headless_draw(st);
}

TestSuite(flame, .init = headless_up, .fini = headless_down);

Test(flame, icicle_at_80x24_sized_by_share)
{
	struct tui_state st;

	start(&st, true);
	cr_assert_eq(st.view, &flame_screen_ops);
	cr_expect_str_eq(headless_row(0), "Flame (-Py =Nat #Sys) since start, % "
	                 "of 1,000 samples of running threads");
	cr_expect_str_eq(headless_row(1), "▏all-------------------------------"
	                 "---------------------------------------------");
	cr_expect_str_eq(headless_row(2), "▏main------------------------------"
	                 "-------------------------------------▏[other…");
	cr_expect_str_eq(headless_row(3), "▏handle----------------------------"
	                 "-----------------------------▏idle---");
	cr_expect_str_eq(headless_row(4), "▏parse-----------------------------"
	                 "-------------▏render---------");
	cr_expect_str_eq(headless_row(5), "▏parse--");
	cr_expect_str_eq(headless_row(6), "");
	cr_expect_str_eq(headless_row(22), "all  %Total 100.0  %Own 0.0  under "
	                 "it: Py 75.0 Nat 25.0 Sys 0.0");
	cr_expect_str_eq(headless_row(23), "F1Help  Enter Zoom  Esc Out   G Back"
	                 "  p Pause r Reset F10Quit");
	for (int y = 0; y < LINES; y++)
		cr_expect_leq(text_width(headless_row(y), true), 80, "row %d", y);
	headless_stop(&st);
}

/* 200 columns: each block's width is its share, to the column. */
Test(flame, widths_are_shares_at_200x50)
{
	struct tui_state st;
	int x[8];

	resizeterm(50, 200);
	start(&st, true);
	cr_assert_eq(block_starts(2, "▏", x, 8), 2);
	cr_expect_eq(x[1] - x[0], 180, "main: 90%% of 200");
	cr_assert_eq(block_starts(3, "▏", x, 8), 2);
	cr_expect_eq(x[1] - x[0], 160, "handle: 80%% of 200");
	cr_assert_eq(block_starts(4, "▏", x, 8), 2);
	cr_expect_eq(x[1] - x[0], 120, "parse: 60%% of 200");
	cr_expect_str_eq(headless_row(4), blocks("parse", 120, "render", 40,
	                                         NULL));
	cr_expect_eq(text_width(headless_row(5), true), 20, "parse in parse");
	cr_expect_str_eq(headless_row(49), "F1Help  Enter Zoom  Esc Out   G Back"
	                 "  p Pause r Reset F10Quit");
	headless_stop(&st);
	resizeterm(24, 80);
}

Test(flame, arrows_select_and_the_status_names_it_in_ascii)
{
	struct tui_state st;

	start(&st, false);
	cr_expect_str_eq(headless_row(3), "|handle----------------------------"
	                 "-----------------------------|idle---");
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_DOWN)); /* the hottest path: parse */
	headless_draw(&st);
	cr_expect_str_eq(headless_row(22), "parse (app.py:21)  %Total 60.0  %Own "
	                 "50.0  under it: Py 45.0 Nat 15.0 Sys 0.0");
	keys_handle(&st, K(KEY_RIGHT));
	headless_draw(&st);
	cr_expect_str_eq(flamescr_selected(&st.fg)->name, "render");
	keys_handle(&st, K(KEY_RIGHT)); /* the row's last block: stays */
	cr_expect_str_eq(flamescr_selected(&st.fg)->name, "render");
	keys_handle(&st, K(KEY_UP));
	cr_expect_str_eq(flamescr_selected(&st.fg)->name, "handle");
	keys_handle(&st, K(KEY_RIGHT));
	cr_expect_str_eq(flamescr_selected(&st.fg)->name, "idle");
	headless_stop(&st);
}

Test(flame, enter_zooms_and_esc_zooms_out)
{
	struct tui_state st;

	start(&st, true);
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_DOWN)); /* handle */
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW);
	headless_draw(&st);
	cr_expect_str_eq(headless_row(0), "Flame (-Py =Nat #Sys) since start, % "
	                 "of 1,000 samples of running threads, in ha…");
	cr_expect_str_eq(headless_row(1), blocks("handle", 80, NULL));
	/* 600 and 200 of handle's 800 */
	cr_expect_str_eq(headless_row(2), blocks("parse", 60, "render", 20,
	                                         NULL));
	cr_expect_str_eq(headless_row(3), blocks("parse", 10, NULL));
	keys_handle(&st, 27); /* out a step: main */
	headless_draw(&st);
	cr_expect_eq(st.view, &flame_screen_ops);
	cr_expect_str_eq(headless_row(1), blocks("main", 80, NULL));
	keys_handle(&st, 27);
	headless_draw(&st);
	cr_expect_str_eq(headless_row(1), blocks("all", 80, NULL));
	keys_handle(&st, 27); /* not zoomed: back to the functions */
	cr_expect_eq(st.view, &functions_screen_ops);
	headless_stop(&st);
}

/* A new snapshot in which render outgrows parse: the blocks keep their
 * order (by name), the selection and the zoom stay on their nodes. */
Test(flame, refreshes_do_not_move_the_blocks)
{
	struct tui_state st;
	struct snapshot s2 = fixture();
	int x[8];

	start(&st, true);
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, '\r'); /* in handle */
	keys_handle(&st, K(KEY_DOWN)); /* parse */
	sf_stack(&s2, "main:3 handle:14 render:31", 1000, 1, 4242);
	tui_show(&st, &s2);
	headless_draw(&st);
	cr_expect_str_eq(flamescr_selected(&st.fg)->name, "parse");
	cr_expect_eq(st.fg.zoom, st.fg.tree.nodes[st.fg.sel].parent);
	cr_expect(strncmp(headless_row(2), "▏parse", strlen("▏parse")) == 0,
	          "%s", headless_row(2));
	cr_assert_eq(block_starts(2, "▏", x, 8), 2);
	cr_expect_eq(x[1] - x[0], 80 * 600 / 1800, "parse: 600 of 1800");
	headless_stop(&st);
}

/* A name from the target is text for the terminal, never commands. */
Test(flame, a_hostile_name_is_shown_escaped)
{
	struct tui_state st;
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 0);

	sf_stack(&s, "main:1 evil\x1b[2J\x07:11", 10, 1, 4242);
	headless_start(&st, &s, true);
	keys_handle(&st, 'G');
	keys_handle(&st, K(KEY_END));
	headless_draw(&st);
	cr_expect_str_eq(headless_row(3), blocks("evil?[2J?", 80, NULL));
	cr_expect(strncmp(headless_row(22), "evil?[2J? (app.py:11)", 21) == 0,
	          "%s", headless_row(22));
	keys_handle(&st, 'G');
	keys_handle(&st, 'T');
	headless_draw(&st);
	cr_expect_not_null(strstr(headless_row(3), "  evil?[2J? (app.py:11)"),
	                   "%s", headless_row(3));
	headless_stop(&st);
}
