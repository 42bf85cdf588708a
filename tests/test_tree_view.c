/* test_tree_view.c - the call tree screen (T) without the engine: a
 * fixed snapshot's stacks drawn headlessly at 80x24 and 200x50 and read
 * back row by row, while keys open and close nodes, open the hottest
 * path, sort, filter, show a function's callers and open its lines. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "stack_fixture.h"
#include "../ui/crt.h"
#include "../ui/keys.h"
#include "../ui/lines_screen.h"
#include "../ui/text.h"
#include "../ui/tree_screen.h"
#include "../ui/tui_state.h"

#define K(k) CRT_KEYCODE(k)

/* 1000 samples: main calls handle (parse, which recurses once, and
 * render) and idle; 100 folded into "[other stacks]". */
static struct snapshot fixture(void)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 0);

	sf_stack(&s, "main:3 handle:12 parse:21", 500, 1, 4242);
	sf_stack(&s, "main:3 handle:14 render:31", 200, 1, 4242);
	sf_stack(&s, "main:5 idle:42", 100, 2, 4242);
	sf_stack(&s, "main:3 handle:12 parse:22 parse:25", 100, 1, 4242);
	sf_stack(&s, "!", 100, 1, 4242);
	s.split.python = 750;
	s.split.native = 250;
	return s;
}

static void start(struct tui_state *st, bool utf8)
{
	struct snapshot s = fixture();

	headless_start(st, &s, utf8);
	cr_assert_eq(keys_handle(st, 'T'), REACT_REDRAW);
	headless_draw(st);
}

/* Rows first.. of the screen are want[], exactly; every row fits. */
static void expect_rows(int first, const char *const *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(headless_row(first + (int)i), want[i], "row %d",
		                 first + (int)i);
	for (int y = 0; y < LINES; y++)
		cr_expect_leq(text_width(headless_row(y), true), COLS, "row %d", y);
}

#define EXPECT_ROWS(first, ...) do {                                      \
	static const char *const want_[] = { __VA_ARGS__ };              \
	expect_rows((first), want_, sizeof want_ / sizeof want_[0]);      \
} while (0)

TestSuite(tree, .init = headless_up, .fini = headless_down);

Test(tree, opens_at_the_hottest_path_at_80x24)
{
	struct tui_state st;

	start(&st, true);
	cr_assert_eq(st.view, &tree_screen_ops);
	EXPECT_ROWS(0,
	"Call tree since start, % of 1,000 samples of running threads, by %Total",
	" %Own %Total▼   %Py  %Nat  %Sys   Net  Faults Function (file:line)",
	"  0.0    90.0   0.0   0.0   0.0     0       0 ▾ main (app.py:1)",
	"  0.0    80.0   0.0   0.0   0.0     0       0   ▾ handle (app.py:11)",
	" 50.0    60.0  37.5  12.5   0.0  2.0M       0     ▾ parse (app.py:21)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0         parse (app.py:21)",
	" 20.0    20.0  15.0   5.0   0.0  800K       0       render (app.py:31)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0     idle (app.py:41)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0   [other stacks] (stacks folded a…",
	"");
	cr_expect_str_eq(headless_row(23), "F1Help  F4Filter F6Sort  Enter Source "
	                 "e Hot   i Callers p Pause F10Quit");
	/* the end of the hottest path is selected */
	cr_expect_str_eq(treescr_selected(&st.tr)->name, "parse");
	cr_expect_eq(treescr_selected(&st.tr)->depth, 4);
	headless_stop(&st);
}

Test(tree, every_column_at_200x50)
{
	struct tui_state st;

	resizeterm(50, 200);
	start(&st, true);
	EXPECT_ROWS(1,
	" %Own %Total▼   %Py  %Nat  %Sys  Mem+   Net  Faults  MajFlt  OwnTime  TotalTime Function (file:line)",
	"  0.0    90.0   0.0   0.0   0.0     0     0       0       0    0.00s      0.90s ▾ main (app.py:1)",
	"  0.0    80.0   0.0   0.0   0.0     0     0       0       0    0.00s      0.80s   ▾ handle (app.py:11)",
	" 50.0    60.0  37.5  12.5   0.0  2.0M  2.0M       0       0    0.50s      0.60s     ▾ parse (app.py:21)",
	" 10.0    10.0   7.5   2.5   0.0  400K  400K       0       0    0.10s      0.10s         parse (app.py:21)",
	" 20.0    20.0  15.0   5.0   0.0  800K  800K       0       0    0.20s      0.20s       render (app.py:31)",
	" 10.0    10.0   7.5   2.5   0.0  400K  400K       0       0    0.10s      0.10s     idle (app.py:41)",
	" 10.0    10.0   7.5   2.5   0.0  400K  400K       0       0    0.10s      0.10s   [other stacks] (stacks folded away)",
	"");
	cr_expect_str_eq(headless_row(49), "F1Help  F4Filter F6Sort  Enter Source "
	                 "e Hot   i Callers p Pause F10Quit");
	headless_stop(&st);
	resizeterm(24, 80);
}

Test(tree, left_right_sort_and_filter_in_ascii)
{
	struct tui_state st;

	start(&st, false);
	/* from the hottest path's end: Left to its parent, Left closes it */
	keys_handle(&st, K(KEY_LEFT));
	keys_handle(&st, '-');
	headless_draw(&st);
	EXPECT_ROWS(1,
	" %Own %Totalv   %Py  %Nat  %Sys   Net  Faults Function (file:line)",
	"  0.0    90.0   0.0   0.0   0.0     0       0 - main (app.py:1)",
	"  0.0    80.0   0.0   0.0   0.0     0       0   - handle (app.py:11)",
	" 50.0    60.0  37.5  12.5   0.0  2.0M       0     + parse (app.py:21)",
	" 20.0    20.0  15.0   5.0   0.0  800K       0       render (app.py:31)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0     idle (app.py:41)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0   [other stacks] (stacks folded a~",
	"");
	/* Right opens it, Right again goes to its child */
	keys_handle(&st, K(KEY_RIGHT));
	keys_handle(&st, '+');
	cr_expect_eq(treescr_selected(&st.tr)->depth, 4);
	/* by %Own: siblings reorder, the tree stays a tree */
	keys_handle(&st, '<');
	headless_draw(&st);
	EXPECT_ROWS(0,
	"Call tree since start, % of 1,000 samples of running threads, by %Own",
	"%Ownv  %Total   %Py  %Nat  %Sys   Net  Faults Function (file:line)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0   [other stacks] (stacks folded a~",
	"  0.0    90.0   0.0   0.0   0.0     0       0 - main (app.py:1)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0     idle (app.py:41)",
	"  0.0    80.0   0.0   0.0   0.0     0       0   - handle (app.py:11)",
	" 50.0    60.0  37.5  12.5   0.0  2.0M       0     - parse (app.py:21)",
	" 10.0    10.0   7.5   2.5   0.0  400K       0         parse (app.py:21)",
	" 20.0    20.0  15.0   5.0   0.0  800K       0       render (app.py:31)",
	"");
	/* / ren Enter: the matching nodes and the paths to them */
	keys_handle(&st, '/');
	keys_handle(&st, 'r');
	keys_handle(&st, 'e');
	keys_handle(&st, 'n');
	keys_handle(&st, '\r');
	headless_draw(&st);
	EXPECT_ROWS(2,
	"  0.0    90.0   0.0   0.0   0.0     0       0 - main (app.py:1)",
	"  0.0    80.0   0.0   0.0   0.0     0       0   - handle (app.py:11)",
	" 20.0    20.0  15.0   5.0   0.0  800K       0       render (app.py:31)",
	"");
	cr_expect(strstr(headless_row(0), "[filter: ren]") != NULL, "%s",
	          headless_row(0));
	headless_stop(&st);
}

Test(tree, callers_of_a_function_then_back)
{
	struct tui_state st;

	start(&st, true);
	cr_assert_eq(keys_handle(&st, 'i'), REACT_REDRAW);
	keys_handle(&st, 'e');
	headless_draw(&st);
	EXPECT_ROWS(0,
	"Callers of parse since start, % of 1,000 samples of running threads, by %Total",
	" %Own %Total▼   %Py  %Nat  %Sys   Net  Faults Function (file:line)",
	" 60.0    60.0  45.0  15.0   0.0  2.3M       0 ▾ parse (app.py:21)",
	" 60.0    60.0  45.0  15.0   0.0  2.3M       0   ▾ handle (app.py:11)",
	" 60.0    60.0  45.0  15.0   0.0  2.3M       0       main (app.py:1)",
	"");
	cr_expect_str_eq(headless_row(23), "F1Help  F4Filter F6Sort  Enter Source "
	                 "e Hot   i Tree  p Pause F10Quit");
	/* Esc: the whole tree again, still on this screen */
	keys_handle(&st, 27);
	headless_draw(&st);
	cr_expect_eq(st.view, &tree_screen_ops);
	cr_expect_str_eq(headless_row(2),
	"  0.0    90.0   0.0   0.0   0.0     0       0 ▾ main (app.py:1)");
	headless_stop(&st);
}

Test(tree, enter_opens_the_lines_and_esc_comes_back)
{
	struct tui_state st;

	start(&st, true);
	keys_handle(&st, K(KEY_HOME));
	keys_handle(&st, K(KEY_DOWN)); /* handle */
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW);
	cr_expect_eq(st.view, &lines_screen_ops);
	cr_expect_str_eq(st.ls.name, "handle");
	keys_handle(&st, 27);
	cr_expect_eq(st.view, &tree_screen_ops);
	cr_expect_str_eq(treescr_selected(&st.tr)->name, "handle");
	/* T goes back to the functions table */
	keys_handle(&st, 'T');
	cr_expect_eq(st.view, &functions_screen_ops);
	headless_stop(&st);
}

/* 42 levels at 80 columns: the indentation gives way, the names stay. */
Test(tree, deep_stacks_keep_their_names_at_80_columns)
{
	struct tui_state st;
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 0);
	char deep[4096] = "main:1";

	for (int i = 0; i < 40; i++)
		strcat(deep, " descend_further:51");
	strcat(deep, " leaf_function:61");
	sf_stack(&s, deep, 10, 1, 4242);
	headless_start(&st, &s, true);
	keys_handle(&st, 'T');
	keys_handle(&st, K(KEY_END));
	headless_draw(&st);
	cr_expect_str_eq(headless_row(2),
	"  0.0   100.0   0.0   0.0   0.0     0       0        ·22▾ descend_further");
	cr_expect_str_eq(headless_row(22),
	"100.0   100.0  75.0  25.0   0.0 40.0K       0        ·42  leaf_function");
	for (int y = 2; y < 22; y++)
		cr_expect(strstr(headless_row(y), " descend_further") != NULL,
		          "row %d: %s", y, headless_row(y));
	keys_handle(&st, K(KEY_HOME));
	headless_draw(&st);
	cr_expect_str_eq(headless_row(3),
	"  0.0   100.0   0.0   0.0   0.0     0       0  ▾ descend_further (app.py:51)");
	headless_stop(&st);
}
