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

#include "snapshot.h"
#include "../ui/batch_text.h"
#include "../ui/crt.h"
#include "../ui/functions_screen.h"
#include "../ui/json_out.h"
#include "../ui/keys.h"
#include "../ui/profile_table.h"
#include "../ui/text.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* ---- fixtures ----------------------------------------------------------- */

struct fn {
	const char *name, *file;
	int line;
	uint64_t own, total;
};

/* A snapshot with malloc'd arrays (snapshot_free frees them). */
static struct snapshot make_snapshot(const struct fn *fns, size_t n)
{
	struct snapshot s;

	memset(&s, 0, sizeof s);
	s.pid = 4242;
	snprintf(s.command, sizeof s.command, "python3 app.py --big");
	snprintf(s.python_version, sizeof s.python_version, "3.11.7");
	s.elapsed_s = 97.4;
	s.samples = 1000;
	s.ticks = 1000;
	s.errors = 10;
	s.dropped = 0;
	s.rate_hz = 998.6;
	s.requested_hz = 1000;
	s.threads_running = 1;
	s.threads_total = 3;
	s.pytop_cpu_pct = 1.94;
	s.funcs = calloc(n + 1, sizeof *s.funcs);
	s.lines = calloc(n + 1, sizeof *s.lines);
	s.threads = calloc(1, sizeof *s.threads);
	cr_assert(s.funcs && s.lines && s.threads);
	for (size_t i = 0; i < n; i++) {
		struct snap_counts c = { fns[i].own, fns[i].total, 0, 0,
		                         fns[i].own / 1000.0,
		                         fns[i].total / 1000.0 };
		s.funcs[i] = (struct snap_func){ fns[i].name, fns[i].file,
		                                 fns[i].line, c };
		s.lines[i] = (struct snap_line){ fns[i].name, fns[i].file,
		                                 fns[i].line + 2, c };
	}
	s.nfuncs = s.nlines = n;
	s.threads[0] = (struct snap_thread){ 4242, "MainThread", 1000, 0,
	                                     true, "hot" };
	s.nthreads = 1;
	return s;
}

static const struct fn three[] = {
	{ "warm", "/srv/app/pkg/io.py", 5, 200, 250 },
	{ "hot", "/srv/app/pkg/viz.py", 12, 600, 610 },
	{ "Klass.cold", "/srv/app/main.py", 40, 100, 930 },
};

static void utf8_locale(void)
{
	cr_assert_not_null(setlocale(LC_ALL, "C.UTF-8"));
}

/* ---- text --------------------------------------------------------------- */

TestSuite(text, .init = utf8_locale);

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

TestSuite(table, .init = utf8_locale);

static const char *row_name(const struct profile_table *pt, size_t i)
{
	return profile_table_row(pt, i)->name;
}

Test(table, sorts_by_each_column)
{
	struct snapshot s = make_snapshot(three, 3);
	struct profile_table pt;
	static const char *const want[PROFILE_NCOLS][3] = {
		[PROFILE_COL_OWN] = { "hot", "warm", "Klass.cold" },
		[PROFILE_COL_TOTAL] = { "Klass.cold", "hot", "warm" },
		[PROFILE_COL_OWN_TIME] = { "hot", "warm", "Klass.cold" },
		[PROFILE_COL_TOTAL_TIME] = { "Klass.cold", "hot", "warm" },
		[PROFILE_COL_NAME] = { "Klass.cold", "hot", "warm" },
	};

	for (int c = 0; c < PROFILE_NCOLS; c++) {
		profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL,
		                    (enum profile_col)c, true);
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
	cr_assert_str_eq(line, "%Own\u25bc  %Total  OwnTime  TotalTime "
	                 "Function (file:line)");
	table_format_row(&pt.table, profile_table_row(&pt, 0), 80, line,
	                 sizeof line, NULL);
	cr_assert_str_eq(line, " 60.0    61.0    0.60s      0.61s "
	                 "hot (/srv/app/pkg/viz.py:12)");
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
	/* 60 columns leave 26 for the Function cell: the file keeps its
	 * base name, the name gets the rest. */
	table_format_row(&pt.table, profile_table_row(&pt, 0), 60, line,
	                 sizeof line, spans);
	cr_assert_str_eq(line + spans[PROFILE_COL_NAME].start,
	                 "compute_\u2026 (\u2026module.py:120)");
	cr_assert_eq(text_width(line, true), 60);
	/* Wide enough for the name: only the path shrinks. */
	table_format_row(&pt.table, profile_table_row(&pt, 0), 72, line,
	                 sizeof line, spans);
	cr_assert_str_eq(line + spans[PROFILE_COL_NAME].start,
	                 "compute_everything (\u2026kg/module.py:120)");
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(table, seconds)
{
	char buf[32];

	profile_format_seconds(0, buf, sizeof buf);
	cr_assert_str_eq(buf, "0.00s");
	profile_format_seconds(12.5, buf, sizeof buf);
	cr_assert_str_eq(buf, "12.50s");
	profile_format_seconds(62.9, buf, sizeof buf);
	cr_assert_str_eq(buf, "1m02s");
	profile_format_seconds(3725, buf, sizeof buf);
	cr_assert_str_eq(buf, "1h02m");
	profile_format_seconds(NAN, buf, sizeof buf);
	cr_assert_str_eq(buf, "0.00s");
}

/* ---- batch text --------------------------------------------------------- */

/* Run a printer into memory; returns the text (caller frees). */
static char *capture(int (*print)(FILE *, const struct snapshot *),
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

TestSuite(batch, .init = utf8_locale);

Test(batch, one_block_per_refresh)
{
	struct snapshot s = make_snapshot(three, 3);
	char *out, want[2048];

	s.target_exited = true;
	s.exit_status = 3;
	out = capture(batch_text_print, &s);
	snprintf(want, sizeof want,
	         "pytop %s  pid 4242  python3 app.py --big   "
	         "Python 3.11.7   00:01:37 elapsed\n"
	         "Samples 1,000 (999/s of 1000)  err 1.0%%  drop 0.0%%  "
	         "threads 1/3  pytop 1.9%% CPU\n"
	         "Functions since start, %% of 1,000 samples of running "
	         "threads, by %%Own  [target exited, status 3]\n"
	         " %%Own  %%Total  OwnTime  TotalTime Function (file:line)\n"
	         " 60.0    61.0    0.60s      0.61s hot "
	         "(/srv/app/pkg/viz.py:12)\n"
	         " 20.0    25.0    0.20s      0.25s warm "
	         "(/srv/app/pkg/io.py:5)\n"
	         " 10.0    93.0    0.10s      0.93s Klass.cold "
	         "(/srv/app/main.py:40)\n"
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
	out = capture(batch_text_print, &s);
	for (char *p = strstr(out, " (x.py:"); p; p = strstr(p + 1, " (x.py:"))
		rows++;
	cr_assert_eq(rows, BATCH_TEXT_ROWS);
	cr_assert_not_null(strstr(out, "f00 (x.py:0)"));
	cr_assert_null(strstr(out, "f30 (x.py:30)"));
	free(out);
	snapshot_free(&s);
}

/* ---- JSON --------------------------------------------------------------- */

TestSuite(json, .init = utf8_locale);

static json_t *json_of(const struct snapshot *s)
{
	char *out = capture(json_out_print, s);
	json_error_t err;
	json_t *j;

	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1,
	             "not exactly one line: %s", out);
	j = json_loads(out, 0, &err);
	cr_assert_not_null(j, "%s: %s", err.text, out);
	free(out);
	return j;
}

Test(json, schema_and_order)
{
	struct snapshot s = make_snapshot(three, 3);
	json_t *j = json_of(&s), *f;
	static const char *const keys[] = {
		"elapsed", "pid", "python", "command", "samples", "ticks",
		"errors", "dropped", "rate_hz", "requested_hz",
		"threads_running", "threads_total", "pytop_cpu", "exited",
		"functions", "lines", "threads",
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
	j = json_of(&s);
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

/* ---- the TUI, headless -------------------------------------------------- */

static SCREEN *screen;
static FILE *term_out, *term_in;
static struct crt mono;

static void curses_up(void)
{
	utf8_locale();
	term_out = fopen("/dev/null", "w");
	term_in = fopen("/dev/null", "r");
	screen = newterm("xterm", term_out, term_in);
	cr_assert_not_null(screen);
	set_term(screen);
	resizeterm(24, 80);
	memset(&mono, 0, sizeof mono);
	mono.utf8 = true;
}

static void curses_down(void)
{
	endwin();
	delscreen(screen);
	fclose(term_out);
	fclose(term_in);
}

/* Row y of the screen, trailing blanks removed (static buffer). */
static const char *row(int y)
{
	static char buf[1024];
	int n = mvinnstr(y, 0, buf, (int)sizeof buf - 1);
	cr_assert_geq(n, 0);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
	return buf;
}

static void draw(struct tui_state *st, const char *status)
{
	erase();
	fscreen_draw(&st->fs, &mono, 0, LINES - 1, status);
}

static void start(struct tui_state *st, const struct fn *fns, size_t n)
{
	struct snapshot s = make_snapshot(fns, n);

	memset(st, 0, sizeof *st);
	fscreen_init(&st->fs, true);
	fscreen_show(&st->fs, &s);
	draw(st, "");
}

TestSuite(tui, .init = curses_up, .fini = curses_down);

Test(tui, draws_the_table_at_80x24)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_str_eq(row(0), "Functions since start, % of 1,000 samples "
	                 "of running threads, by %Own");
	cr_assert_str_eq(row(1), "%Own\u25bc  %Total  OwnTime  TotalTime "
	                 "Function (file:line)");
	cr_assert_str_eq(row(2), " 60.0    61.0    0.60s      0.61s hot "
	                 "(/srv/app/pkg/viz.py:12)");
	cr_assert_str_eq(row(5), "");
	fscreen_free(&st.fs);
}

Test(tui, keys_sort_switch_and_filter)
{
	struct tui_state st;

	start(&st, three, 3);
	cr_assert_eq(keys_handle(&st, '>'), REACT_REDRAW);
	draw(&st, "");
	cr_assert_str_eq(row(1), " %Own %Total\u25bc  OwnTime  TotalTime "
	                 "Function (file:line)");
	cr_assert_not_null(strstr(row(2), "Klass.cold"));
	keys_handle(&st, '<');
	keys_handle(&st, CRT_KEYCODE(KEY_F(6)));
	cr_assert_eq(st.fs.sort, PROFILE_COL_TOTAL);
	keys_handle(&st, '<');

	keys_handle(&st, 'l');
	draw(&st, "");
	cr_assert_eq(strncmp(row(0), "Lines since start", 17), 0, "%s",
	             row(0));
	cr_assert_not_null(strstr(row(2), "viz.py:14)"), "%s", row(2));
	keys_handle(&st, 'l');

	keys_handle(&st, '/');
	cr_assert(st.prompt.active);
	keys_handle(&st, 'i');
	keys_handle(&st, 'o');
	keys_handle(&st, '\r');
	cr_assert(!st.prompt.active);
	draw(&st, "");
	cr_assert_not_null(strstr(row(0), "[filter: io]"), "%s", row(0));
	cr_assert_not_null(strstr(row(2), "warm"));
	cr_assert_str_eq(row(3), "");
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
	fscreen_free(&st.fs);
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
	cr_assert(st.help);
	cr_assert_eq(keys_handle(&st, 'q'), REACT_REDRAW); /* closes help */
	cr_assert(!st.help);
	cr_assert_eq(keys_handle(&st, 'q'), REACT_QUIT);
	cr_assert_eq(keys_handle(&st, CRT_KEYCODE(KEY_F(10))), REACT_QUIT);
	st.exited = true;
	cr_assert_eq(keys_handle(&st, 'r'), REACT_NONE);
	fscreen_free(&st.fs);
}

Test(tui, selection_follows_the_function)
{
	struct tui_state st;
	struct fn moved[3];
	struct snapshot s;

	start(&st, three, 3);
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert_str_eq(row_name(&st.fs.table, st.fs.sel), "warm");
	/* warm becomes the hottest: the bar moves with it. */
	memcpy(moved, three, sizeof moved);
	moved[0].own = 900;
	moved[0].total = 900;
	s = make_snapshot(moved, 3);
	fscreen_show(&st.fs, &s);
	cr_assert_eq(st.fs.sel, 0);
	cr_assert_str_eq(row_name(&st.fs.table, st.fs.sel), "warm");
	fscreen_free(&st.fs);
}

Test(tui, tiny_and_empty_screens)
{
	struct tui_state st;

	start(&st, three, 0);
	cr_assert_str_eq(row(2), "  (no samples yet)");
	resizeterm(4, 20);
	draw(&st, "[paused]");
	cr_assert_str_eq(row(0), "Functions \u2026 [paused]");
	cr_assert_leq(strlen(row(1)), 20 * 3);
	fscreen_free(&st.fs);
}
