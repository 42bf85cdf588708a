/* test_processes_view.c - the processes screen (-s) without the engine:
 * the followed family of a fixed snapshot drawn headlessly (curses on
 * /dev/null, read back with winnstr) while keys are fed to the key table.
 * The family: a target with two pool workers, one of which started a
 * non-Python child, a non-Python child, an exited child with a
 * grandchild, one still being looked at and one that cannot be read. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/snapshot.h"
#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/batch_text.h"
#include "../ui/crt.h"
#include "../ui/function_bar.h"
#include "../ui/functions_screen.h"
#include "../ui/header.h"
#include "../ui/help_screen.h"
#include "../ui/keys.h"
#include "../ui/process_table.h"
#include "../ui/processes_screen.h"
#include "../ui/text.h"
#include "../ui/tui_state.h"

/* ---- fixtures ----------------------------------------------------------- */

#define PROC(pid_, ppid_, depth_, cmd, py, state_, usr, sys, rss_mb, smp, top) \
	((struct snap_process){ .pid = (pid_), .ppid = (ppid_),            \
	                        .depth = (depth_), .command = (cmd),       \
	                        .python = (py), .state = (state_),         \
	                        .cpu_user_pct = (usr), .cpu_sys_pct = (sys), \
	                        .rss_bytes = (uint64_t)(rss_mb) << 20,     \
	                        .samples = (smp), .top_func = (top) })

/* Tree order, as the engine gives it. */
static const struct snap_process family[] = {
	PROC(5000, 1, 0, "python3 app.py --pool", "3.11.2", PROCESS_PYTHON,
	     2.0, 1.0, 40, 120, "main"),
	PROC(5001, 5000, 1, "python3 app.py --pool", "3.11.2",
	     PROCESS_PYTHON, 97.0, 1.5, 31, 2900, "pool_hot_a"),
	PROC(5002, 5000, 1, "python3 app.py --pool", "3.11.2",
	     PROCESS_PYTHON, 95.0, 2.5, 32, 2800, "pool_hot_b"),
	PROC(5005, 5002, 2, "sleep 30", "not Python", PROCESS_NOT_PYTHON,
	     0.0, 0.0, 1, 0, ""),
	PROC(5003, 5000, 1, "sleep 9", "not Python", PROCESS_NOT_PYTHON,
	     0.0, 0.0, 1, 0, ""),
	PROC(5004, 5000, 1, "python3 -c pass", "3.11.2", PROCESS_EXITED,
	     0.0, 0.0, 0, 15, "run"),
	PROC(5006, 5004, 2, "python3 late.py", "", PROCESS_LOOKING,
	     0.0, 0.0, 5, 0, ""),
	PROC(5007, 5006, 3, "secret", "no access", PROCESS_UNREADABLE,
	     0.0, 0.0, 2, 0, ""),
};
#define NFAMILY (sizeof family / sizeof family[0])

static struct snapshot make_snapshot(bool following, pid_t process_filter)
{
	struct snapshot s = sb_snapshot(5000, "python3 app.py --pool", "3.11.2",
	                                5835);
	struct snap_func *f = sb_funcs(&s, 1);

	s.elapsed_s = 12.0;
	s.window_s = 1.0;
	s.ticks = 3000;
	s.rate_hz = 250;
	s.requested_hz = 250;
	*f = (struct snap_func){
		.name = process_filter == 5002 ? "pool_hot_b" : "pool_hot_a",
		.file = "/srv/app.py", .line = 10,
		.c = { .own = 2800, .total = 2800 } };
	*sb_lines(&s, 1) = (struct snap_line){ .name = f->name,
		.file = "/srv/app.py", .line = 12, .c = f->c };
	s.following = following;
	s.process_filter = process_filter;
	if (process_filter != 0)
		s.samples = 2800;
	if (following) {
		sb_set_processes(&s, family, NFAMILY);
		s.processes_seen = NFAMILY - 1;
		s.processes_exited = 1;
	}
	return s;
}

/* ---- the table ---------------------------------------------------------- */

TestSuite(table, .init = headless_utf8_locale);

/* The Command cell of every row, with its branches. */
static void commands(const struct process_table *pt, char out[][128])
{
	for (size_t i = 0; i < pt->n; i++) {
		struct table_span spans[PROCESS_NCOLS];
		char line[1024];
		const struct table_span *c = &spans[PROCESS_COL_COMMAND];

		table_format_row(&pt->table, pt->order[i], -1, line, sizeof line,
		                 spans);
		snprintf(out[i], 128, "%.*s", (int)(c->end - c->start),
		         line + c->start);
	}
}

Test(table, tree_order_and_branches_by_depth)
{
	struct snapshot s = make_snapshot(true, 0);
	struct process_table pt;
	char cmd[NFAMILY][128];

	cr_assert_eq(process_table_build(&pt, &s, NULL, true), 0);
	cr_assert_eq(pt.n, NFAMILY);
	for (size_t i = 0; i < NFAMILY; i++)
		cr_assert_eq(process_table_row(&pt, i)->pid, family[i].pid,
		             "row %zu keeps the engine's tree order", i);
	commands(&pt, cmd);
	cr_assert_str_eq(cmd[0], "python3 app.py --pool");
	cr_assert_str_eq(cmd[1], "\u251c\u2500 python3 app.py --pool");
	cr_assert_str_eq(cmd[2], "\u251c\u2500 python3 app.py --pool");
	/* 5002's child: 5002's branch goes on below it (5003 follows). */
	cr_assert_str_eq(cmd[3], "\u2502  \u2514\u2500 sleep 30");
	cr_assert_str_eq(cmd[4], "\u251c\u2500 sleep 9");
	cr_assert_str_eq(cmd[5], "\u2514\u2500 python3 -c pass");
	/* Under the last child: no line where the branch ended. */
	cr_assert_str_eq(cmd[6], "   \u2514\u2500 python3 late.py");
	cr_assert_str_eq(cmd[7], "      \u2514\u2500 secret");
	process_table_free(&pt);
	snapshot_free(&s);
}

Test(table, ascii_branches_without_utf8)
{
	struct snapshot s = make_snapshot(true, 0);
	struct process_table pt;
	char cmd[NFAMILY][128];

	process_table_build(&pt, &s, NULL, false);
	commands(&pt, cmd);
	cr_assert_str_eq(cmd[1], "|- python3 app.py --pool");
	cr_assert_str_eq(cmd[3], "|  `- sleep 30");
	cr_assert_str_eq(cmd[5], "`- python3 -c pass");
	cr_assert_str_eq(cmd[7], "      `- secret");
	for (size_t i = 0; i < NFAMILY; i++)
		for (const char *c = cmd[i]; *c != '\0'; c++)
			cr_assert_lt((unsigned char)*c, 0x80, "row %zu: %s", i,
			             cmd[i]);
	process_table_free(&pt);
	snapshot_free(&s);
}

Test(table, states_and_filter)
{
	struct snapshot s = make_snapshot(true, 0);
	struct process_table pt;

	cr_assert_str_eq(process_state_label(&family[0]), "3.11.2");
	cr_assert_str_eq(process_state_label(&family[3]), "not Python");
	cr_assert_str_eq(process_state_label(&family[5]), "exited");
	cr_assert_str_eq(process_state_label(&family[6]), "looking");
	cr_assert_str_eq(process_state_label(&family[7]), "no access");
	/* By top function, by state, by PID prefix. */
	process_table_build(&pt, &s, "HOT_B", true);
	cr_assert_eq(pt.n, 1);
	cr_assert_eq(process_table_row(&pt, 0)->pid, 5002);
	process_table_free(&pt);
	process_table_build(&pt, &s, "exited", true);
	cr_assert_eq(pt.n, 1);
	cr_assert_eq(process_table_row(&pt, 0)->pid, 5004);
	process_table_free(&pt);
	process_table_build(&pt, &s, "500", true);
	cr_assert_eq(pt.n, NFAMILY);
	process_table_free(&pt);
	snapshot_free(&s);
}

/* ---- the screen, headless ----------------------------------------------- */

static void show(struct tui_state *st, bool following, pid_t filter)
{
	struct snapshot s = make_snapshot(following, filter);

	tui_show(st, &s);
}

static void start(struct tui_state *st, bool following, bool utf8)
{
	struct snapshot s = make_snapshot(following, 0);

	headless_start(st, &s, utf8);
}

/* The row of the screen that shows pid, or -1. */
static int row_of(pid_t pid)
{
	char want[16];

	snprintf(want, sizeof want, "%7d ", (int)pid);
	for (int y = 0; y < LINES; y++)
		if (strncmp(headless_row(y), want, strlen(want)) == 0)
			return y;
	return -1;
}

TestSuite(tui, .init = headless_up, .fini = headless_down);

Test(tui, tree_at_80_columns_drops_usr_sys_and_rss)
{
	struct tui_state st;

	start(&st, true, true);
	cr_assert_eq(keys_handle(&st, 'P'), REACT_REDRAW);
	cr_assert_eq(st.view, &processes_screen_ops);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(0), "Processes: 7 (1 exited), 7 seen, 0 skipped, "
	                 "CPU % over the last 1.0 s");
	cr_assert_str_eq(headless_row(1), "    PID Python       CPU%   Samples "
	                 "Top function           Command");
	cr_assert_str_eq(headless_row(2), "   5000 3.11.2        3.0       120 main  "
	                 "                 python3 app.py --pool");
	cr_assert_str_eq(headless_row(3), "   5001 3.11.2       98.5     2,900 "
	                 "pool_hot_a             \u251c\u2500 python3 app.py "
	                 "--\u2026");
	cr_assert_str_eq(headless_row(5), "   5005 not Python    0.0         0 "
	                 "\u2014                      \u2502  \u2514\u2500 "
	                 "sleep 30");
	for (int y = 0; y < LINES; y++)
		cr_assert_leq(text_width(headless_row(y), true), 80, "row %d", y);
	/* Tree order on screen, the target first. */
	for (size_t i = 0; i < NFAMILY; i++)
		cr_assert_eq(row_of(family[i].pid), 2 + (int)i, "pid %d",
		             (int)family[i].pid);
	cr_assert_str_eq(headless_row(23), "F1Help  F4Filter Enter Funcs P Back  "
	                 "p Pause r Reset F10Quit");
	headless_stop(&st);
}

Test(tui, tree_at_200_columns_shows_every_column_like_batch)
{
	struct tui_state st;
	char *batch = NULL;
	size_t size = 0;
	FILE *out;

	resizeterm(24, 200);
	start(&st, true, true);
	keys_handle(&st, CRT_KEYCODE(KEY_F(5)));
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), "    PID Python       CPU% usr/sys    RSS   "
	                 "Samples Top function           Command");
	cr_assert_str_eq(headless_row(3), "   5001 3.11.2       98.5    97/2    31M     "
	                 "2,900 pool_hot_a             \u251c\u2500 python3 "
	                 "app.py --pool");
	cr_assert_str_eq(headless_row(7), "   5004 exited        0.0     0/0      -     "
	                 "   15 run                    \u2514\u2500 python3 "
	                 "-c pass");
	/* Batch text prints the same rows. */
	out = open_memstream(&batch, &size);
	cr_assert_not_null(out);
	batch_text_print(out, tui_snapshot(&st));
	fclose(out);
	for (int y = 1; y < 2 + (int)NFAMILY; y++) {
		char line[1024];

		snprintf(line, sizeof line, "\n%s\n", headless_row(y));
		cr_assert_not_null(strstr(batch, line), "batch lacks row %d "
		                   "[%s]:\n%s", y, headless_row(y), batch);
	}
	free(batch);
	resizeterm(24, 80);
	headless_stop(&st);
}

Test(tui, ascii_screen)
{
	struct tui_state st;

	start(&st, true, false);
	keys_handle(&st, 'P');
	headless_draw(&st);
	cr_assert_str_eq(headless_row(5), "   5005 not Python    0.0         0 -      "
	                 "                |  `- sleep 30");
	cr_assert_not_null(strstr(headless_row(9), "      `- secret"), "%s", headless_row(9));
	headless_stop(&st);
}

Test(tui, enter_filters_to_a_process_and_a_returns)
{
	struct tui_state st;

	start(&st, true, true);
	/* From the threads screen too, and P again goes back. */
	keys_handle(&st, 't');
	keys_handle(&st, 'P');
	cr_assert_eq(st.view, &processes_screen_ops);
	keys_handle(&st, 'P');
	cr_assert_eq(st.view, &functions_screen_ops);
	keys_handle(&st, 'P');
	/* No sorting in a tree. */
	cr_assert_eq(keys_handle(&st, '>'), REACT_NONE);
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert_eq(pscreen_selected(&st.ps)->pid, 5002);
	/* The bar stays on 5002 across a new snapshot. */
	show(&st, true, 0);
	headless_draw(&st);
	cr_assert_eq(pscreen_selected(&st.ps)->pid, 5002);
	st.thread_filter = 4251; /* a thread filter would win: it goes */
	cr_assert_eq(keys_handle(&st, '\r'), REACT_PROCESS_FILTER |
	             REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.process_filter, 5002);
	cr_assert_eq(st.thread_filter, 0);
	cr_assert_eq(st.view, &functions_screen_ops);
	/* What the source then returns: 5002's functions. */
	show(&st, true, 5002);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(0), "Functions since start, % of 2,800 running "
	                 "samples of process 5002, by %Own");
	cr_assert_not_null(strstr(headless_row(2), "pool_hot_b"), "%s", headless_row(2));
	cr_assert_not_null(strstr(headless_row(23), "a All"), "%s", headless_row(23));
	cr_assert_leq(text_width(headless_row(23), true), 80);

	/* a: every process again, then nothing left to do. */
	cr_assert_eq(keys_handle(&st, 'a'), REACT_PROCESS_FILTER |
	             REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.process_filter, 0);
	cr_assert_eq(keys_handle(&st, 'a'), REACT_NONE);
	show(&st, true, 0);
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "samples of running threads"), "%s",
	                   headless_row(0));
	/* Esc does the same from the functions, and leaves the screen. */
	st.process_filter = 5001;
	cr_assert_eq(keys_handle(&st, 27), REACT_PROCESS_FILTER |
	             REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.process_filter, 0);
	keys_handle(&st, 'P');
	cr_assert_eq(keys_handle(&st, 27), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	headless_stop(&st);
}

Test(tui, enter_on_an_unsampled_process_says_so)
{
	struct tui_state st;

	start(&st, true, true);
	keys_handle(&st, 'P');
	keys_handle(&st, CRT_KEYCODE(KEY_END)); /* secret: no access */
	cr_assert_eq(pscreen_selected(&st.ps)->pid, 5007);
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW);
	cr_assert_eq(st.process_filter, 0);
	cr_assert_eq(st.view, &processes_screen_ops);
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "[not sampled"), "%s", headless_row(0));
	/* The exited child had samples: it can be chosen. */
	keys_handle(&st, CRT_KEYCODE(KEY_UP));
	keys_handle(&st, CRT_KEYCODE(KEY_UP));
	cr_assert_eq(pscreen_selected(&st.ps)->pid, 5004);
	keys_handle(&st, '\r');
	cr_assert_eq(st.process_filter, 5004);
	headless_stop(&st);
}

Test(tui, filter_prompt_is_its_own)
{
	struct tui_state st;

	start(&st, true, true);
	keys_handle(&st, 'P');
	keys_handle(&st, '/');
	keys_handle(&st, 's');
	keys_handle(&st, 'l');
	keys_handle(&st, '\r');
	cr_assert_str_eq(st.ps.filter, "sl");
	cr_assert_str_eq(st.fs.filter, "");
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "[filter: sl]"), "%s", headless_row(0));
	cr_assert_eq(row_of(5005), 2);
	cr_assert_eq(row_of(5003), 3);
	cr_assert_str_eq(headless_row(4), "");
	headless_stop(&st);
}

Test(tui, without_following_P_says_so_and_stays)
{
	struct tui_state st;

	start(&st, false, true);
	cr_assert_eq(keys_handle(&st, 'P'), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "[no processes: start pytop with "
	                          "-s]"), "%s", headless_row(0));
	cr_assert_not_null(strstr(headless_row(23), "t Threads"), "%s", headless_row(23));
	/* Said once: the next key clears it. */
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	headless_draw(&st);
	cr_assert_null(strstr(headless_row(0), "[no processes"), "%s", headless_row(0));
	cr_assert_eq(keys_handle(&st, 'a'), REACT_NONE);
	headless_stop(&st);
}

Test(tui, header_counts_the_running_processes)
{
	struct snapshot s = make_snapshot(true, 0);
	char lines[2][HEADER_LINE_MAX];

	header_health(&s, 80, true, lines, 2);
	/* Seven listed, one exited. */
	cr_assert_not_null(strstr(lines[0], "procs 7"), "%s", lines[0]);
	cr_assert_leq(text_width(lines[0], true), 80);
	snapshot_free(&s);
	s = make_snapshot(false, 0);
	header_health(&s, -1, true, lines, 2);
	cr_assert_null(strstr(lines[0], "procs"), "%s", lines[0]);
	snapshot_free(&s);
}

Test(tui, help_fits_80x24_on_the_processes_screen)
{
	erase();
	help_screen_draw(&headless_crt, processes_screen_ops.column_help);
	cr_assert_str_eq(headless_row(7), "  t F7 Tab P F5 T G t threads, "
	                 "P processes (-s), T tree, G flame; again: back");
	cr_assert_not_null(strstr(headless_row(18), "Python     version of a sampled"),
	                   "%s", headless_row(18));
	cr_assert_not_null(strstr(headless_row(22), "Enter shows only the selected "
	                          "process"), "%s", headless_row(22));
	cr_assert_str_eq(headless_row(23), "Press any key to return.");
	for (int y = 0; y < LINES; y++)
		cr_assert_leq(text_width(headless_row(y), true), 80, "row %d", y);
}
