/* test_screens.c - the views without the engine: text fitting, the
 * profile table, batch text and JSON output from fixed snapshots, and the
 * TUI drawn headlessly (curses on /dev/null, read back with winnstr) while
 * keys are fed to the key table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
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
#include "../ui/json_out.h"
#include "../ui/keys.h"
#include "../ui/profile_table.h"
#include "../ui/text.h"
#include "../ui/thread_table.h"
#include "../ui/threads_screen.h"
#include "../ui/tui_state.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* ---- fixtures ----------------------------------------------------------- */

struct fn {
	const char *name, *file;
	int line;
	uint64_t own, total;
};

/* A snapshot of three threads, one of them sampled, with these
 * functions, each with one line two below its first. */
static struct snapshot make_snapshot(const struct fn *fns, size_t n)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py --big", "3.11.7",
	                                1000);
	struct snap_func *funcs = sb_funcs(&s, n);
	struct snap_line *lines = sb_lines(&s, n);

	s.elapsed_s = 97.4;
	s.ticks = 1000;
	s.errors = 10;
	s.dropped = 0;
	s.rate_hz = 998.6;
	s.requested_hz = 1000;
	s.threads_running = 1;
	s.threads_total = 3;
	s.pytop_cpu_pct = 1.94;
	s.gil_held_pct = 91.6;
	s.active_pct = 99.2;
	s.window_s = 1.0;
	for (size_t i = 0; i < n; i++) {
		struct snap_counts c = { .own = fns[i].own, .total = fns[i].total,
		                         .own_s = fns[i].own / 1000.0,
		                         .total_s = fns[i].total / 1000.0 };
		funcs[i] = (struct snap_func){ .name = fns[i].name, .file = fns[i].file,
		                               .line = fns[i].line, .c = c };
		lines[i] = (struct snap_line){ .name = fns[i].name, .file = fns[i].file,
		                               .line = fns[i].line + 2, .c = c };
	}
	*sb_threads(&s, 1) = (struct snap_thread){
		.tid = 4242, .name = "MainThread", .samples = 1000,
		.running = true, .top_func = "hot",
		.state = THREAD_RUNNING_GIL, .os_state = 'R',
		.cpu_user_pct = 95.0, .cpu_sys_pct = 2.0, .gil_pct = 90.0,
	};
	return s;
}

static const struct fn three[] = {
	{ "warm", "/srv/app/pkg/io.py", 5, 200, 250 },
	{ "hot", "/srv/app/pkg/viz.py", 12, 600, 610 },
	{ "Klass.cold", "/srv/app/main.py", 40, 100, 930 },
};

#define THREAD(tid_, name_, state_, usr, sys, gil, samples_, top)         \
	((struct snap_thread){ .tid = (tid_), .name = (name_),             \
	                       .state = (state_), .cpu_user_pct = (usr),   \
	                       .cpu_sys_pct = (sys), .gil_pct = (gil),     \
	                       .samples = (samples_), .top_func = (top) })

/* A GIL-bound thread, a native one, a sleeper, one gone, one not yet
 * reported. */
static const struct snap_thread five[] = {
	THREAD(4242, "MainThread", THREAD_IDLE, 0.0, 0.0, 0.0, 10, ""),
	THREAD(4250, "loader", THREAD_RUNNING, 71.0, 3.0, 4.0, 700, "load"),
	THREAD(4251, "cruncher", THREAD_RUNNING_GIL, 96.4, 1.2, 95.0, 980,
	       "hot"),
	THREAD(4252, "old", THREAD_GONE, 0.0, 0.0, 0.0, 50, "warm"),
	THREAD(4253, "", THREAD_UNKNOWN, 0.0, 0.0, 0.0, 0, ""),
};

/* ---- text --------------------------------------------------------------- */

TestSuite(text, .init = headless_utf8_locale);

Test(text, cuts_on_the_right_with_an_ellipsis)
{
	char buf[64];

	cr_assert_eq(text_fit(buf, sizeof buf, "abcdef", 4, TEXT_CUT_RIGHT,
	                      true), 4);
	cr_assert_str_eq(buf, "abc\u2026");
	cr_assert_eq(text_fit(buf, sizeof buf, "abcdef", 4, TEXT_CUT_RIGHT,
	                      false), 4);
	cr_assert_str_eq(buf, "abc~");
	text_fit(buf, sizeof buf, "abc", 4, TEXT_CUT_RIGHT, true);
	cr_assert_str_eq(buf, "abc");
}

Test(text, cuts_on_the_left_keeping_the_end)
{
	char buf[64];

	cr_assert_eq(text_fit(buf, sizeof buf, "/a/b/module.py", 10,
	                      TEXT_CUT_LEFT, true), 10);
	cr_assert_str_eq(buf, "\u2026module.py");
}

Test(text, wide_characters_take_two_columns)
{
	char buf[64];

	cr_assert_eq(text_width("\u540d\u524d", true), 4);
	/* A wide character that does not fit leaves a padded hole. */
	cr_assert_eq(text_fit(buf, sizeof buf, "a\u540d\u524d", 3,
	                      TEXT_CUT_RIGHT, true), 3);
	cr_assert_str_eq(buf, "a \u2026");
}

Test(text, control_and_invalid_bytes_never_pass)
{
	char buf[64];

	text_fit(buf, sizeof buf, "a\tb\xff" "c\x1b[31m", -1, TEXT_CUT_RIGHT,
	         true);
	cr_assert_str_eq(buf, "a?b?c?[31m");
	text_fit(buf, sizeof buf, "caf\xc3\xa9", -1, TEXT_CUT_RIGHT, false);
	cr_assert_str_eq(buf, "caf?");
	/* Truncated and overlong sequences. */
	text_fit(buf, sizeof buf, "x\xe5\x90", -1, TEXT_CUT_RIGHT, true);
	cr_assert_str_eq(buf, "x??");
	text_fit(buf, sizeof buf, "\xc0\xaf", -1, TEXT_CUT_RIGHT, true);
	cr_assert_str_eq(buf, "??");
}

Test(text, thousands_and_sanitized_copies)
{
	char buf[32], *c;

	text_thousands(buf, sizeof buf, 0);
	cr_assert_str_eq(buf, "0");
	text_thousands(buf, sizeof buf, 97004);
	cr_assert_str_eq(buf, "97,004");
	text_thousands(buf, sizeof buf, 1234567);
	cr_assert_str_eq(buf, "1,234,567");
	c = text_sanitized_copy("w\xc3(\xc3\xb6");
	cr_assert_str_eq(c, "w?(\xc3\xb6");
	free(c);
}

/* ---- the profile table -------------------------------------------------- */

TestSuite(table, .init = headless_utf8_locale);

static const char *row_name(const struct profile_table *pt, size_t i)
{
	return profile_table_row(pt, i)->name;
}

Test(table, sorts_by_each_column)
{
	struct snapshot s = make_snapshot(three, 3);
	struct profile_table pt;
	static const char *const want[PROFILE_NCOLS][3] = {
		[COUNT_OWN] = { "hot", "warm", "Klass.cold" },
		[COUNT_TOTAL] = { "Klass.cold", "hot", "warm" },
		/* No split figures: ties fall back to %Own. */
		[COUNT_PY] = { "hot", "warm", "Klass.cold" },
		[COUNT_NAT] = { "hot", "warm", "Klass.cold" },
		[COUNT_SYS] = { "hot", "warm", "Klass.cold" },
		[COUNT_WAIT] = { "hot", "warm", "Klass.cold" },
		[COUNT_CPUW] = { "hot", "warm", "Klass.cold" },
		[COUNT_GILW] = { "hot", "warm", "Klass.cold" },
		[COUNT_MEM] = { "hot", "warm", "Klass.cold" },
		[COUNT_NET] = { "hot", "warm", "Klass.cold" },
		[COUNT_KEPT] = { "hot", "warm", "Klass.cold" },
		[COUNT_FAULTS] = { "hot", "warm", "Klass.cold" },
		[COUNT_MAJFLT] = { "hot", "warm", "Klass.cold" },
		[COUNT_OWN_TIME] = { "hot", "warm", "Klass.cold" },
		[COUNT_TOTAL_TIME] = { "Klass.cold", "hot", "warm" },
		[PROFILE_COL_NAME] = { "Klass.cold", "hot", "warm" },
	};

	for (int c = 0; c < PROFILE_NCOLS; c++) {
		profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL,
		                    c, true);
		cr_assert_eq(pt.n, 3);
		for (size_t i = 0; i < 3; i++)
			cr_assert_str_eq(row_name(&pt, i), want[c][i],
			                 "column %d row %zu", c, i);
		profile_table_free(&pt);
	}
	snapshot_free(&s);
}

Test(table, filters_on_name_or_file_ignoring_case)
{
	struct snapshot s = make_snapshot(three, 3);
	struct profile_table pt;

	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, "KLASS", 0, true);
	cr_assert_eq(pt.n, 1);
	cr_assert_str_eq(row_name(&pt, 0), "Klass.cold");
	profile_table_free(&pt);
	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, "pkg/", 0, true);
	cr_assert_eq(pt.n, 2);
	profile_table_free(&pt);
	profile_table_build(&pt, &s, PROFILE_LINES, "nothing", 0, true);
	cr_assert_eq(pt.n, 0);
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(table, rows_and_title_line_up)
{
	struct snapshot s = make_snapshot(three, 3);
	struct profile_table pt;
	char line[512];

	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL, 0, true);
	table_format_title(&pt.table, 80, line, sizeof line, NULL);
	cr_assert_str_eq(line, "%Own\u25bc  %Total   %Py  %Nat  %Sys  Kept  "
	                 "Faults Function (file:line)");
	table_format_row(&pt.table, profile_table_row(&pt, 0), 80, line,
	                 sizeof line, NULL);
	cr_assert_str_eq(line, " 60.0    61.0   0.0   0.0   0.0     0       0 "
	                 "hot (/srv/app/pkg/viz.py:12)");
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(table, the_folded_row_says_what_it_is)
{
	struct snapshot s = make_snapshot(three, 3);
	struct profile_table pt;
	struct table_span spans[PROFILE_NCOLS];
	char line[512];

	/* The aggregator's "[other]" row has no file and line 0. */
	s.funcs[0] = (struct snap_func){ .name = "[other]", .file = "",
	                                 .line = 0, .other = true,
	                                 .c = s.funcs[0].c };
	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, "other", 0, true);
	cr_assert_eq(pt.n, 1);
	table_format_row(&pt.table, profile_table_row(&pt, 0), 80, line,
	                 sizeof line, spans);
	cr_assert_str_eq(line + spans[PROFILE_COL_NAME].start,
	                 "[other] (rarest rows, folded)");
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(table, function_cell_shortens_the_path_first)
{
	static const struct fn longf[] = {
		{ "compute_everything", "/home/user/projects/big/src/pkg/"
		  "module.py", 120, 1, 1 },
	};
	struct snapshot s = make_snapshot(longf, 1);
	struct profile_table pt;
	struct table_span spans[PROFILE_NCOLS];
	char line[512];

	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL, 0, true);
	/* 32 columns leave 26 for the Function cell (every figure but %Own
	 * dropped): the file keeps eight columns of its base name, the name
	 * gets the rest. */
	table_format_row(&pt.table, profile_table_row(&pt, 0), 32, line,
	                 sizeof line, spans);
	cr_assert_str_eq(line + spans[PROFILE_COL_NAME].start,
	                 "compute_ev\u2026 (\u2026dule.py:120)");
	cr_assert_eq(text_width(line, true), 32);
	/* Wide enough for the name (every figure shown, 38 left): only the
	 * path shrinks. */
	table_format_row(&pt.table, profile_table_row(&pt, 0), 124, line,
	                 sizeof line, spans);
	cr_assert_str_eq(line + spans[PROFILE_COL_NAME].start,
	                 "compute_everything (\u2026/module.py:120)");
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(table, seconds)
{
	char buf[32];

	count_format_seconds(0, buf, sizeof buf);
	cr_assert_str_eq(buf, "0.00s");
	count_format_seconds(12.5, buf, sizeof buf);
	cr_assert_str_eq(buf, "12.50s");
	count_format_seconds(62.9, buf, sizeof buf);
	cr_assert_str_eq(buf, "1m02s");
	count_format_seconds(3725, buf, sizeof buf);
	cr_assert_str_eq(buf, "1h02m");
	count_format_seconds(NAN, buf, sizeof buf);
	cr_assert_str_eq(buf, "0.00s");
}

/* ---- header ------------------------------------------------------------- */

TestSuite(header, .init = headless_utf8_locale);

static int health(const struct snapshot *s, int width, int max,
                  char lines[][HEADER_LINE_MAX])
{
	return header_health(s, width, true, lines, max);
}

Test(header, health_line_fits_80_columns_dropping_the_least_first)
{
	struct snapshot s = make_snapshot(three, 3);
	char l[3][HEADER_LINE_MAX];

	s.samples = 97004;
	cr_assert_eq(health(&s, -1, 1, l), 1);
	cr_assert_str_eq(l[0], "Samples 97,004 (999/s of 1000)  err 0.0%  "
	                 "drop 0.0%  Py threads 1/3  GIL 92%  active 99%  "
	                 "pytop 1.9% CPU");
	/* 80 columns: error and drop shares that show as 0.0% say nothing,
	 * so they go first. */
	cr_assert_eq(health(&s, 80, 2, l), 1);
	cr_assert_str_eq(l[0], "Samples 97,004 (999/s)  Py threads 1/3  "
	                 "GIL 92%  active 99%  pytop 1.9%");
	/* Errors and drops that show stay; short forms and pytop's CPU give
	 * way. */
	s.errors = 500;
	s.dropped = 200;
	cr_assert_eq(health(&s, 80, 2, l), 1);
	cr_assert_str_eq(l[0], "Samples 97,004 (999/s)  err 0.5%  drop 0.2%  "
	                 "Py threads 1/3  GIL 92%  active 99%");
	cr_assert_leq(text_width(l[0], true), 80);
	cr_assert_eq(health(&s, 60, 2, l), 1);
	cr_assert_str_eq(l[0], "Samples 97,004 (999/s)  err 0.5%  GIL 92%  "
	                 "active 99%");
	/* Under a thread filter, samples is the thread's: the health line
	 * counts every thread's. */
	s.thread_filter = 4242;
	s.samples = 1000;
	sb_set_threads(&s, five, 5);
	health(&s, -1, 1, l);
	cr_assert_eq(strncmp(l[0], "Samples 1,740 (999/s of 1000)  err 22.3%  ",
	                     42), 0, "%s", l[0]);
	s.thread_filter = 0;
	s.samples = 97004;
	/* Below what the essentials need: they wrap. */
	cr_assert_eq(health(&s, 30, 2, l), 2);
	cr_assert_str_eq(l[0], "Samples 97,004 (999/s)");
	cr_assert_str_eq(l[1], "GIL 92%  active 99%");
	cr_assert_eq(health(&s, 30, 1, l), 1);
	cr_assert_eq(text_width(l[0], true), 30);
	snapshot_free(&s);
}

/* ---- the threads table --------------------------------------------------- */

TestSuite(threads, .init = headless_utf8_locale);

static pid_t tid_at(const struct thread_table *tt, size_t i)
{
	return thread_table_row(tt, i)->tid;
}

Test(threads, columns_at_80_and_states)
{
	struct snapshot s = make_snapshot(three, 3);
	struct thread_table tt;
	char line[512];

	sb_set_threads(&s, five, 5);
	thread_table_build(&tt, &s, NULL, THREAD_COL_CPU, true);
	cr_assert_eq(tt.n, 5);
	table_format_title(&tt.table, 80, line, sizeof line, NULL);
	cr_assert_str_eq(line, "    TID Name            State    CPU%\u25bc "
	                 "usr/sys  GIL%   Samples Top function");
	static const char *const want[] = {
		"   4251 cruncher        run+GIL   97.6    96/1  95.0       "
		"980 hot",
		"   4250 loader          run       74.0    71/3   4.0       "
		"700 load",
		"   4252 old             gone       0.0     0/0   0.0        "
		"50 warm",
		"   4242 MainThread      idle       0.0     0/0   0.0        "
		"10 \u2014",
		"   4253                 ?          0.0     0/0   0.0         "
		"0 \u2014",
	};
	for (size_t i = 0; i < 5; i++) {
		table_format_row(&tt.table, thread_table_row(&tt, i), 80, line,
		                 sizeof line, NULL);
		cr_assert_str_eq(line, want[i], "row %zu", i);
		cr_assert_leq(text_width(line, true), 80);
	}
	thread_table_free(&tt);
	cr_assert_str_eq(thread_state_label(THREAD_GIL_WAIT), "GIL wait");
	snapshot_free(&s);
}

Test(threads, sorts_by_each_column_but_usr_sys)
{
	struct snapshot s = make_snapshot(three, 3);
	struct thread_table tt;
	static const struct {
		enum thread_col col;
		pid_t order[5];
	} want[] = {
		{ THREAD_COL_TID, { 4242, 4250, 4251, 4252, 4253 } },
		{ THREAD_COL_NAME, { 4253, 4242, 4251, 4250, 4252 } },
		{ THREAD_COL_STATE, { 4251, 4250, 4242, 4252, 4253 } },
		{ THREAD_COL_CPU, { 4251, 4250, 4252, 4242, 4253 } },
		{ THREAD_COL_GIL, { 4251, 4250, 4252, 4242, 4253 } },
		{ THREAD_COL_SAMPLES, { 4251, 4250, 4252, 4242, 4253 } },
		{ THREAD_COL_TOP, { 4242, 4253, 4251, 4250, 4252 } },
	};

	sb_set_threads(&s, five, 5);
	for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
		thread_table_build(&tt, &s, NULL, want[c].col, true);
		for (size_t i = 0; i < 5; i++)
			cr_assert_eq(tid_at(&tt, i), want[c].order[i],
			             "column %s row %zu",
			             thread_col_name(want[c].col), i);
		thread_table_free(&tt);
	}
	/* Cycling skips usr/sys, both ways, and wraps. */
	cr_assert_eq(thread_col_step(THREAD_COL_CPU, 1), THREAD_COL_GIL);
	cr_assert_eq(thread_col_step(THREAD_COL_GIL, -1), THREAD_COL_CPU);
	cr_assert_eq(thread_col_step(THREAD_COL_TOP, 1), THREAD_COL_TID);
	cr_assert_eq(thread_col_step(THREAD_COL_TID, -1), THREAD_COL_TOP);
	/* Asking for usr/sys sorts by CPU%. */
	thread_table_build(&tt, &s, NULL, THREAD_COL_USR_SYS, true);
	cr_assert_eq(tt.sort, THREAD_COL_CPU);
	thread_table_free(&tt);
	snapshot_free(&s);
}

Test(threads, filter_by_name_function_or_tid)
{
	struct snapshot s = make_snapshot(three, 3);
	struct thread_table tt;

	sb_set_threads(&s, five, 5);
	thread_table_build(&tt, &s, "LOAD", THREAD_COL_TID, true);
	cr_assert_eq(tt.n, 1);
	cr_assert_eq(tid_at(&tt, 0), 4250);
	thread_table_free(&tt);
	thread_table_build(&tt, &s, "hot", THREAD_COL_TID, true);
	cr_assert_eq(tt.n, 1);
	cr_assert_eq(tid_at(&tt, 0), 4251);
	thread_table_free(&tt);
	thread_table_build(&tt, &s, "425", THREAD_COL_TID, true);
	cr_assert_eq(tt.n, 4);
	thread_table_free(&tt);
	thread_table_build(&tt, &s, "42", THREAD_COL_TID, true);
	cr_assert_eq(tt.n, 5);
	thread_table_free(&tt);
	snapshot_free(&s);
}

/* ---- batch text --------------------------------------------------------- */

/* Non-empty lines of s. */
static int h_lines(const char *s)
{
	int n = 0;

	for (const char *p = s; *p != '\0'; p++)
		n += *p == '\n' && p > s && p[-1] != '\n';
	return n;
}


TestSuite(batch, .init = headless_utf8_locale);

Test(batch, one_block_per_refresh)
{
	struct snapshot s = make_snapshot(three, 3);
	char *out, want[2048];

	s.target_exited = true;
	s.exit_status = 3;
	out = headless_capture(batch_text_print, &s);
	snprintf(want, sizeof want,
	         "pytop %s  pid 4242  python3 app.py --big   "
	         "Python 3.11.7   00:01:37 elapsed\n"
	         "Samples 1,000 (999/s of 1000)  err 1.0%%  drop 0.0%%  "
	         "Py threads 1/3  GIL 92%%  active 99%%  pytop 1.9%% CPU\n"
	         "Functions since start, %% of 1,000 samples of running "
	         "threads, by %%Own  [target exited, status 3]\n"
	         " %%Own  %%Total   %%Py  %%Nat  %%Sys  Mem+   Net  Kept  Faults  MajFlt  "
	         "OwnTime  TotalTime Function (file:line)\n"
	         " 60.0    61.0   0.0   0.0   0.0     0     0     0       0       0    "
	         "0.60s      0.61s hot (/srv/app/pkg/viz.py:12)\n"
	         " 20.0    25.0   0.0   0.0   0.0     0     0     0       0       0    "
	         "0.20s      0.25s warm (/srv/app/pkg/io.py:5)\n"
	         " 10.0    93.0   0.0   0.0   0.0     0     0     0       0       0    "
	         "0.10s      0.93s Klass.cold (/srv/app/main.py:40)\n"
	         "Threads: 1, CPU and GIL %% over the last 1.0 s, by CPU%%\n"
	         "    TID Name            State     CPU%% usr/sys  GIL%%   "
	         "Samples Top function\n"
	         "   4242 MainThread      run+GIL   97.0    95/2  90.0     "
	         "1,000 hot\n"
	         "\n", PACKAGE_VERSION);
	cr_assert_str_eq(out, want);
	free(out);
	snapshot_free(&s);
}

Test(batch, at_most_thirty_rows)
{
	struct fn many[40];
	char names[40][16];
	struct snapshot s;
	char *out;
	size_t rows = 0;

	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof names[i], "f%02d", i);
		many[i] = (struct fn){ names[i], "x.py", i, 40 - i, 40 - i };
	}
	s = make_snapshot(many, 40);
	out = headless_capture(batch_text_print, &s);
	for (char *p = strstr(out, " (x.py:"); p; p = strstr(p + 1, " (x.py:"))
		rows++;
	cr_assert_eq(rows, BATCH_TEXT_ROWS);
	cr_assert_not_null(strstr(out, "f00 (x.py:0)"));
	cr_assert_null(strstr(out, "f30 (x.py:30)"));
	free(out);
	snapshot_free(&s);
}

Test(batch, threads_block_busiest_first_at_most_twenty)
{
	struct snapshot s = make_snapshot(three, 3);
	struct snap_thread many[25];
	char *out, *block, line[64];

	for (int i = 0; i < 25; i++)
		many[i] = THREAD(1000 + i, "w", THREAD_RUNNING, (double)i, 0.0,
		                 0.0, 1, "f");
	sb_set_threads(&s, many, 25);
	out = headless_capture(batch_text_print, &s);
	block = strstr(out, "Threads: 25, CPU and GIL % over the last 1.0 s, "
	               "by CPU%\n");
	cr_assert_not_null(block, "%s", out);
	/* The busiest first, the 20th busiest last, then the blank line. */
	cr_assert_not_null(strstr(block, "\n   1024 w               run       "
	                          "24.0"), "%s", block);
	cr_assert_not_null(strstr(block, "\n   1005 w"), "%s", block);
	cr_assert_null(strstr(block, "\n   1004 w"), "%s", block);
	snprintf(line, sizeof line, "f\n\n");
	cr_assert_eq(strstr(block, line) + strlen(line), out + strlen(out));
	cr_assert_eq(h_lines(block), 1 + 1 + 20);
	free(out);
	snapshot_free(&s);
}

/* ---- JSON --------------------------------------------------------------- */

TestSuite(json, .init = headless_utf8_locale);

Test(json, schema_and_order)
{
	struct snapshot s = make_snapshot(three, 3);
	json_t *j = headless_json(&s), *f;
	static const char *const keys[] = {
		"elapsed", "pid", "python", "command", "samples", "ticks",
		"errors", "dropped", "rate_hz", "requested_hz",
		"threads_running", "threads_total", "pytop_cpu", "exited",
		"functions", "lines", "threads", "gil_held_pct", "active_pct",
	};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		cr_assert_not_null(json_object_get(j, keys[i]), "%s", keys[i]);
	cr_assert_null(json_object_get(j, "exit_status"));
	cr_assert_eq(json_integer_value(json_object_get(j, "samples")), 1000);
	f = json_object_get(j, "functions");
	cr_assert_eq(json_array_size(f), 3);
	cr_assert_str_eq(json_string_value(json_object_get(
	                 json_array_get(f, 0), "name")), "hot");
	cr_assert_str_eq(json_string_value(json_object_get(
	                 json_array_get(f, 2), "name")), "Klass.cold");
	cr_assert_float_eq(json_real_value(json_object_get(
	                   json_array_get(f, 0), "own_s")), 0.6, 1e-9);
	cr_assert_eq(json_integer_value(json_object_get(
	             json_array_get(json_object_get(j, "lines"), 0), "line")),
	             14);
	cr_assert_str_eq(json_string_value(json_object_get(
	                 json_array_get(json_object_get(j, "threads"), 0),
	                 "top")), "hot");
	json_decref(j);
	snapshot_free(&s);
}

Test(json, exit_status_bad_strings_and_nan)
{
	static const struct fn odd[] = {
		{ "bad\xff" "name", "f.py", 1, 1, 1 },
	};
	struct snapshot s = make_snapshot(odd, 1);
	json_t *j;

	s.target_exited = true;
	s.exit_status = 7;
	s.rate_hz = NAN;
	j = headless_json(&s);
	cr_assert(json_is_true(json_object_get(j, "exited")));
	cr_assert_eq(json_integer_value(json_object_get(j, "exit_status")), 7);
	cr_assert_float_eq(json_number_value(json_object_get(j, "rate_hz")),
	                   0.0, 1e-12);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(
	                 json_object_get(j, "functions"), 0), "name")),
	                 "bad?name");
	json_decref(j);
	snapshot_free(&s);
}

Test(json, thread_states_cpu_and_gil)
{
	struct snapshot s = make_snapshot(three, 3);
	struct snap_thread t[6];
	json_t *j, *arr;
	static const char *const names[] = {
		"idle", "running", "running_gil", "gone", "unknown", "gil_wait",
	};

	memcpy(t, five, sizeof five);
	t[0].os_state = 'S';
	t[1].os_state = 'R';
	t[5] = THREAD(4260, "waiter", THREAD_GIL_WAIT, 0.5, 0.25, 0.0, 3, "");
	sb_set_threads(&s, t, 6);
	j = headless_json(&s);
	cr_assert_float_eq(json_real_value(json_object_get(j, "gil_held_pct")),
	                   91.6, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(j, "active_pct")),
	                   99.2, 1e-9);
	arr = json_object_get(j, "threads");
	cr_assert_eq(json_array_size(arr), 6);
	for (size_t i = 0; i < 6; i++)
		cr_assert_str_eq(json_string_value(json_object_get(
		                 json_array_get(arr, i), "state")), names[i],
		                 "thread %zu", i);
	json_t *loader = json_array_get(arr, 1);
	cr_assert_str_eq(json_string_value(json_object_get(loader, "os_state")),
	                 "R");
	cr_assert_str_eq(json_string_value(json_object_get(
	                 json_array_get(arr, 4), "os_state")), "");
	cr_assert_float_eq(json_real_value(json_object_get(loader, "cpu_user")),
	                   71.0, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(loader, "cpu_sys")),
	                   3.0, 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(loader, "gil_pct")),
	                   4.0, 1e-9);
	/* The fields that were there before are still there. */
	cr_assert_eq(json_integer_value(json_object_get(loader, "tid")), 4250);
	cr_assert_str_eq(json_string_value(json_object_get(loader, "top")),
	                 "load");
	cr_assert_not_null(json_object_get(loader, "running"));
	cr_assert_not_null(json_object_get(loader, "samples"));
	json_decref(j);
	snapshot_free(&s);
}

/* ---- the TUI, headless -------------------------------------------------- */

static void start(struct tui_state *st, const struct fn *fns, size_t n)
{
	struct snapshot s = make_snapshot(fns, n);

	headless_start(st, &s, true);
}

TestSuite(tui, .init = headless_up, .fini = headless_down);

Test(tui, draws_the_table_at_80x24)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_str_eq(headless_row(0), "Functions since start, % of 1,000 samples "
	                 "of running threads, by %Own");
	cr_assert_str_eq(headless_row(1), "%Own\u25bc  %Total   %Py  %Nat  %Sys  Kept  "
	                 "Faults Function (file:line)");
	cr_assert_str_eq(headless_row(2), " 60.0    61.0   0.0   0.0   0.0     0       "
	                 "0 hot (/srv/app/pkg/viz.py:12)");
	cr_assert_str_eq(headless_row(5), "");
	headless_stop(&st);
}

Test(tui, keys_sort_switch_and_filter)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_eq(keys_handle(&st, '>'), REACT_REDRAW);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), " %Own %Total\u25bc   %Py  %Nat  %Sys  Kept  "
	                 "Faults Function (file:line)");
	cr_assert_not_null(strstr(headless_row(2), "Klass.cold"));
	keys_handle(&st, '<');
	keys_handle(&st, CRT_KEYCODE(KEY_F(6)));
	cr_assert_eq(st.fs.sort, COUNT_TOTAL);
	keys_handle(&st, '<');

	keys_handle(&st, 'l');
	headless_draw(&st);
	cr_assert_eq(strncmp(headless_row(0), "Lines since start", 17), 0, "%s",
	             headless_row(0));
	cr_assert_not_null(strstr(headless_row(2), "viz.py:14)"), "%s", headless_row(2));
	keys_handle(&st, 'l');

	keys_handle(&st, '/');
	cr_assert(st.prompt.active);
	keys_handle(&st, 'i');
	keys_handle(&st, 'o');
	keys_handle(&st, '\r');
	cr_assert(!st.prompt.active);
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "[filter: io]"), "%s", headless_row(0));
	cr_assert_not_null(strstr(headless_row(2), "warm"));
	cr_assert_str_eq(headless_row(3), "");
	/* Esc leaves the filter as it was; an empty answer clears it. */
	keys_handle(&st, '/');
	keys_handle(&st, 'z');
	keys_handle(&st, 27);
	cr_assert_str_eq(st.fs.filter, "io");
	keys_handle(&st, '/');
	keys_handle(&st, CRT_CTRL('u'));
	keys_handle(&st, '\r');
	cr_assert_str_eq(st.fs.filter, "");
	cr_assert_eq(st.fs.table.n, 3);
	headless_stop(&st);
}

Test(tui, pause_reset_help_quit)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_eq(keys_handle(&st, ' '), REACT_REDRAW);
	cr_assert(st.paused);
	cr_assert_eq(keys_handle(&st, 'p'), REACT_REDRAW | REACT_REFRESH);
	cr_assert(!st.paused);
	cr_assert_eq(keys_handle(&st, 'r'),
	             REACT_RESET | REACT_REFRESH | REACT_REDRAW);
	keys_handle(&st, '?');
	cr_assert_eq(st.view, &help_screen_ops);
	cr_assert_eq(keys_handle(&st, 'q'), REACT_REDRAW); /* closes help */
	cr_assert_eq(st.view, &functions_screen_ops);
	cr_assert_eq(keys_handle(&st, 'q'), REACT_QUIT);
	cr_assert_eq(keys_handle(&st, CRT_KEYCODE(KEY_F(10))), REACT_QUIT);
	st.exited = true;
	cr_assert_eq(keys_handle(&st, 'r'), REACT_NONE);
	headless_stop(&st);
}

Test(tui, selection_follows_the_function)
{
	struct tui_state st;
	struct fn moved[3];
	struct snapshot s;

	start(&st, three, 3);
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert_str_eq(row_name(&st.fs.table, st.fs.pos.sel), "warm");
	/* warm becomes the hottest: the bar moves with it. */
	memcpy(moved, three, sizeof moved);
	moved[0].own = 900;
	moved[0].total = 900;
	s = make_snapshot(moved, 3);
	tui_show(&st, &s);
	cr_assert_eq(st.fs.pos.sel, 0);
	cr_assert_str_eq(row_name(&st.fs.table, st.fs.pos.sel), "warm");
	headless_stop(&st);
}

Test(tui, tiny_and_empty_screens)
{
	struct tui_state st;

	start(&st, three, 0);
	cr_assert_str_eq(headless_row(2), "  (no samples yet)");
	resizeterm(4, 20);
	st.paused = true;
	headless_draw(&st);
	cr_assert_str_eq(headless_row(0), "Functions \u2026 [paused]");
	cr_assert_leq(strlen(headless_row(1)), 20 * 3);
	headless_stop(&st);
}

Test(tui, legend_fits_80_columns)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_str_eq(headless_row(23), "F1Help  F4Filter F6Sort  Enter Source l Lines "
	                 "t Threads p Pause F10Quit");
	st.thread_filter = 4251;
	st.view = &threads_screen_ops;
	headless_draw(&st);
	cr_assert_str_eq(headless_row(23), "F1Help  F4Filter F6Sort  Enter Funcs t Back  "
	                 "a All   p Pause r Reset F10Quit");
	cr_assert_leq(text_width(headless_row(23), true), 80);
	headless_stop(&st);
}

Test(tui, threads_screen_enter_filters_and_a_returns)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, three, 3);
	/* The next snapshot has five threads. */
	s = make_snapshot(three, 3);
	sb_set_threads(&s, five, 5);
	tui_show(&st, &s);
	cr_assert_eq(keys_handle(&st, 't'), REACT_REDRAW);
	cr_assert_eq(st.view, &threads_screen_ops);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(0), "Threads: 5, CPU and GIL % over the last "
	                 "1.0 s, by CPU%");
	cr_assert_str_eq(headless_row(1), "    TID Name            State    CPU%\u25bc "
	                 "usr/sys  GIL%   Samples Top function");
	cr_assert_str_eq(headless_row(2), "   4251 cruncher        run+GIL   97.6    "
	                 "96/1  95.0       980 hot");
	cr_assert_not_null(strstr(headless_row(3), "loader          run "));
	cr_assert_not_null(strstr(headless_row(4), "gone"));

	/* The bar moves and sorts like the function table's. */
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert_eq(tscreen_selected(&st.ts), 4250);
	keys_handle(&st, '<'); /* by State: same order */
	keys_handle(&st, '<'); /* by Name: cruncher after MainThread */
	cr_assert_eq(st.ts.sort, THREAD_COL_NAME);
	cr_assert_eq(tscreen_selected(&st.ts), 4250, "the bar follows loader");
	keys_handle(&st, '>');
	keys_handle(&st, CRT_KEYCODE(KEY_F(6)));
	cr_assert_eq(st.ts.sort, THREAD_COL_CPU);

	/* Enter: loader's functions; the source is asked, the view goes
	 * back to the functions. */
	cr_assert_eq(keys_handle(&st, '\r'),
	             REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.thread_filter, 4250);
	cr_assert_eq(st.view, &functions_screen_ops);
	/* What the source then returns: loader's rows and sample count. */
	static const struct fn loads[] = {
		{ "load", "/srv/app/pkg/io.py", 5, 600, 700 },
	};
	s = make_snapshot(loads, 1);
	sb_set_threads(&s, five, 5);
	s.samples = 700;
	s.thread_filter = 4250;
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(0), "Functions since start, % of 700 running "
	                 "samples of thread 4250 loader, by %Own");
	cr_assert_str_eq(headless_row(2), " 85.7   100.0   0.0   0.0   0.0     0       "
	                 "0 load (/srv/app/pkg/io.py:5)");
	cr_assert_not_null(strstr(headless_row(23), "a All"), "%s", headless_row(23));

	/* a: all threads again (and again: nothing to do). */
	cr_assert_eq(keys_handle(&st, 'a'), REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.thread_filter, 0);
	cr_assert_eq(keys_handle(&st, 'a'), REACT_NONE);
	/* Esc: the same from the filtered functions, and back from the
	 * threads screen. */
	st.thread_filter = 4250;
	cr_assert_eq(keys_handle(&st, 27), REACT_THREAD_FILTER | REACT_REDRAW);
	cr_assert_eq(st.thread_filter, 0);
	keys_handle(&st, CRT_KEYCODE(KEY_F(7)));
	cr_assert_eq(st.view, &threads_screen_ops);
	cr_assert_eq(keys_handle(&st, 27), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	keys_handle(&st, '\t');
	cr_assert_eq(st.view, &threads_screen_ops);
	/* l from the threads screen: the line table. */
	keys_handle(&st, 'l');
	cr_assert_eq(st.view, &functions_screen_ops);
	cr_assert_eq(st.fs.mode, PROFILE_LINES);
	/* Enter on a line: its function's source (test_lines_view.c tests
	 * that view). */
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW);
	cr_assert_eq(st.view, &lines_screen_ops);
	cr_assert_eq(keys_handle(&st, 27), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	headless_stop(&st);
}

Test(tui, threads_filter_prompt_is_its_own)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, three, 3);
	s = make_snapshot(three, 3);
	sb_set_threads(&s, five, 5);
	tui_show(&st, &s);
	keys_handle(&st, 't');
	keys_handle(&st, '/');
	keys_handle(&st, 'h');
	keys_handle(&st, 'o');
	keys_handle(&st, 't');
	keys_handle(&st, '\r');
	cr_assert_str_eq(st.ts.filter, "hot");
	cr_assert_str_eq(st.fs.filter, "");
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(0), "[filter: hot]"), "%s", headless_row(0));
	cr_assert_not_null(strstr(headless_row(2), "cruncher"));
	cr_assert_str_eq(headless_row(3), "");
	/* Enter takes the one thread left. */
	keys_handle(&st, '\r');
	cr_assert_eq(st.thread_filter, 4251);
	headless_stop(&st);
}

Test(tui, selection_survives_new_snapshots_on_the_threads_screen)
{
	struct tui_state st;
	struct snapshot s;
	struct snap_thread t[5];

	start(&st, three, 3);
	s = make_snapshot(three, 3);
	sb_set_threads(&s, five, 5);
	tui_show(&st, &s);
	keys_handle(&st, 't');
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN)); /* loader */
	/* loader becomes the busiest: the bar goes with it. */
	memcpy(t, five, sizeof t);
	t[1].cpu_user_pct = 99.5;
	s = make_snapshot(three, 3);
	sb_set_threads(&s, t, 5);
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_eq(st.ts.pos.sel, 0);
	cr_assert_eq(tscreen_selected(&st.ts), 4250);
	headless_stop(&st);
}

Test(tui, help_fits_80x24_for_both_screens)
{
	erase();
	help_screen_draw(&headless_crt, functions_screen_ops.column_help);
	cr_assert_str_eq(headless_row(1), "  Up Down    select the row above / below");
	cr_assert_not_null(strstr(headless_row(22), "Percentages are of the samples"),
	                   "%s", headless_row(22));
	cr_assert_str_eq(headless_row(23), "Press any key to return.");
	erase();
	help_screen_draw(&headless_crt, threads_screen_ops.column_help);
	cr_assert_not_null(strstr(headless_row(18), "State      run+GIL"), "%s",
	                   headless_row(18));
	cr_assert_not_null(strstr(headless_row(22), "Enter shows only the selected"),
	                   "%s", headless_row(22));
}
