/* test_lines_view.c - the split / memory columns of the function table and
 * the lines view, without the engine: fixed snapshots, source files
 * written here, the TUI drawn headlessly (curses on /dev/null, read back
 * with winnstr) while keys are fed to the key table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/snapshot.h"
#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/batch_text.h"
#include "../ui/count_columns.h"
#include "../ui/crt.h"
#include "../ui/function_bar.h"
#include "../ui/keys.h"
#include "../ui/lines_screen.h"
#include "../ui/profile_table.h"
#include "../ui/source_file.h"
#include "../ui/text.h"
#include "../ui/tui_state.h"

/* ---- fixtures ----------------------------------------------------------- */

/* One function or line: its counts and split (fractions of samples). */
struct row {
	const char *name;
	int line;
	uint64_t own, total;
	double py, nat, sys, wait;
	uint64_t mem, minflt, majflt;
};

static struct snap_counts counts(const struct row *r)
{
	return (struct snap_counts){
		.own = r->own, .total = r->total,
		.own_s = (double)r->own / 1000.0,
		.total_s = (double)r->total / 1000.0,
		.split = { .python = r->py, .native = r->nat, .system = r->sys,
		           .waiting = r->wait, .mem_growth = r->mem,
		           .minflt = r->minflt, .majflt = r->majflt },
		/* Half of what it kept grew in the last minute. */
		.mem_kept = (int64_t)(r->mem / 2),
	};
}

/* A snapshot of pid (whose /proc/PID/root the lines view reads through)
 * with functions and lines all in file. */
static struct snapshot make_snapshot(const char *file, const struct row *fn,
                                     size_t nfn, const struct row *ln,
                                     size_t nln)
{
	struct snapshot s = sb_snapshot(getpid(), "", "", 1000);
	struct snap_func *funcs = sb_funcs(&s, nfn);
	struct snap_line *lines = sb_lines(&s, nln);

	for (size_t i = 0; i < nfn; i++)
		funcs[i] = (struct snap_func){ .name = fn[i].name, .file = file,
		                               .line = fn[i].line,
		                               .c = counts(&fn[i]) };
	for (size_t i = 0; i < nln; i++)
		lines[i] = (struct snap_line){ .name = ln[i].name, .file = file,
		                               .line = ln[i].line,
		                               .c = counts(&ln[i]) };
	return s;
}

/* Python-heavy, native-heavy, syscall-heavy, memory- and fault-heavy. */
static const struct row funcs[] = {
	{ "py_loop", 10, 400, 400, 390, 5, 5, 0, 1024, 10, 0 },
	{ "hashing", 20, 300, 320, 20, 270, 10, 0, 2048, 20, 0 },
	{ "stat_all", 30, 200, 210, 10, 40, 150, 0, 0, 5, 0 },
	{ "grow", 40, 100, 900, 30, 30, 40, 0, 12900000, 5000, 3 },
};

static const char *name_at(const struct profile_table *pt, size_t i)
{
	return profile_table_row(pt, i)->name;
}

/* A fresh directory for source files (removed by the test's process
 * ending; the names are unique). */
static char *tmpdir(void)
{
	char *d = strdup("/tmp/pytop-lines-XXXXXX");

	cr_assert_not_null(mkdtemp(d));
	return d;
}

static char *write_file(const char *dir, const char *name, const char *data,
                        size_t len)
{
	char *path;
	FILE *f;

	cr_assert_geq(asprintf(&path, "%s/%s", dir, name), 0);
	f = fopen(path, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

/* ---- columns ------------------------------------------------------------ */

TestSuite(columns, .init = headless_utf8_locale);

Test(columns, figures_are_shares_of_all_samples)
{
	struct snapshot s = make_snapshot("/srv/a.py", funcs, 4, NULL, 0);
	struct profile_table pt;
	struct table_span sp[PROFILE_NCOLS];
	char line[1024];

	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL, COUNT_OWN,
	                    true);
	/* grow: 100 own samples of 1000, 30 + 30 + 40 of them split. */
	table_format_row(&pt.table, profile_table_row(&pt, 3), -1, line,
	                 sizeof line, sp);
	cr_assert_str_eq(name_at(&pt, 3), "grow");
#define CELL(col) strndup(line + sp[col].start, sp[col].end - sp[col].start)
	static const struct {
		profile_col col;
		const char *want;
	} want[] = {
		{ COUNT_OWN, " 10.0" },  { COUNT_TOTAL, "   90.0" },
		{ COUNT_PY, "  3.0" },   { COUNT_NAT, "  3.0" },
		{ COUNT_SYS, "  4.0" },  { COUNT_MEM, "12.3M" },
		{ COUNT_FAULTS, "  5.0k!" },
		{ COUNT_MAJFLT, "      3" },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char *cell = CELL(want[i].col);
		cr_assert_str_eq(cell, want[i].want, "%s",
		                 profile_col_name(want[i].col));
		free(cell);
	}
	/* Without --idle there is no %Wait cell at all. */
	cr_assert_eq(sp[COUNT_WAIT].start, sp[COUNT_WAIT].end);
	profile_table_free(&pt);
	snapshot_free(&s);
}

Test(columns, units)
{
	static const struct {
		uint64_t n;
		const char *bytes, *count;
	} want[] = {
		{ 0, "0", "0" },          { 512, "512B", "512" },
		{ 1023, "1023B", "1.0k" }, { 1536, "1.5K", "1.5k" },
		{ 12900000, "12.3M", "12.9M" },
		{ 1048575, "1.0M", "1.0M" }, { 150000000, "143M", "150M" },
		{ 5ull << 40, "5.0T", "5.5T" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		count_format_bytes(want[i].n, buf, sizeof buf);
		cr_assert_str_eq(buf, want[i].bytes, "%llu",
		                 (unsigned long long)want[i].n);
		cr_assert_leq(strlen(buf), 5);
		count_format_number(want[i].n, buf, sizeof buf);
		cr_assert_str_eq(buf, want[i].count, "%llu",
		                 (unsigned long long)want[i].n);
	}
	count_format_number(999999, buf, sizeof buf);
	cr_assert_str_eq(buf, "1.0M");
}

Test(columns, sort_by_each_new_column)
{
	struct snapshot s = make_snapshot("/srv/a.py", funcs, 4, NULL, 0);
	struct profile_table pt;
	static const struct {
		profile_col col;
		const char *order[4];
	} want[] = {
		{ COUNT_PY, { "py_loop", "grow", "hashing", "stat_all" } },
		{ COUNT_NAT, { "hashing", "stat_all", "grow", "py_loop" } },
		{ COUNT_SYS, { "stat_all", "grow", "hashing", "py_loop" } },
		{ COUNT_MEM, { "grow", "hashing", "py_loop", "stat_all" } },
		{ COUNT_FAULTS, { "grow", "hashing", "py_loop",
		                        "stat_all" } },
		{ COUNT_MAJFLT, { "grow", "py_loop", "hashing",
		                        "stat_all" } },
	};

	for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
		profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL,
		                    want[c].col, true);
		cr_assert_eq(pt.sort, want[c].col);
		for (size_t i = 0; i < 4; i++)
			cr_assert_str_eq(name_at(&pt, i), want[c].order[i],
			                 "by %s, row %zu",
			                 profile_col_name(want[c].col), i);
		profile_table_free(&pt);
	}
	/* %Wait only sorts with --idle; otherwise it means %Own. */
	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL, COUNT_WAIT,
	                    true);
	cr_assert_eq(pt.sort, COUNT_OWN);
	profile_table_free(&pt);
	s.idle_mode = true;
	s.funcs[2].c.split.waiting = 80;
	profile_table_build(&pt, &s, PROFILE_FUNCTIONS, NULL, COUNT_WAIT,
	                    true);
	cr_assert_eq(pt.sort, COUNT_WAIT);
	cr_assert_str_eq(name_at(&pt, 0), "stat_all");
	profile_table_free(&pt);
	/* The < > keys step over %Wait unless it is shown (and over %CPUw
	 * and %GILw, hidden while no sample had any). */
	unsigned long no_wait = 1UL << COUNT_WAIT | 1UL << COUNT_CPUW |
	                        1UL << COUNT_GILW;
	cr_assert_eq(profile_col_step(COUNT_SYS, 1, no_wait),
	             COUNT_MEM);
	cr_assert_eq(profile_col_step(COUNT_MEM, -1, no_wait),
	             COUNT_SYS);
	cr_assert_eq(profile_col_step(COUNT_SYS, 1, 0),
	             COUNT_WAIT);
	cr_assert_eq(profile_col_step(PROFILE_COL_NAME, 1, no_wait),
	             COUNT_OWN);
	snapshot_free(&s);
}

/* Title of the function table at width, with sort and idle mode. */
static void title_at(struct snapshot *s, bool idle, profile_col sort,
                     int width, char *line, size_t size,
                     struct table_span *sp)
{
	struct profile_table pt;

	s->idle_mode = idle;
	profile_table_build(&pt, s, PROFILE_FUNCTIONS, NULL, sort, true);
	table_format_title(&pt.table, width, line, size, sp);
	profile_table_free(&pt);
}

/* The column where a cell starts. */
static int start_col(const char *line, const struct table_span *sp)
{
	char *prefix = strndup(line, sp->start);
	int w = text_width(prefix, true);

	free(prefix);
	return w;
}

Test(columns, fit_80_dropping_the_least_important_first)
{
	struct snapshot s = make_snapshot("/srv/a.py", funcs, 4, NULL, 0);
	struct table_span sp[PROFILE_NCOLS];
	char line[1024];

	title_at(&s, false, COUNT_OWN, 80, line, sizeof line, sp);
	cr_assert_str_eq(line, "%Own\u25bc  %Total   %Py  %Nat  %Sys  Kept  "
	                 "Faults Function (file:line)");
	cr_assert_geq(80 - start_col(line, &sp[PROFILE_COL_NAME]),
	              PROFILE_NAME_MIN_COLS);
	/* --idle: %Wait comes in, Faults makes room for it. */
	title_at(&s, true, COUNT_OWN, 80, line, sizeof line, sp);
	cr_assert_str_eq(line, "%Own\u25bc  %Total   %Py  %Nat  %Sys  %Wait  "
	                 "Kept Function (file:line)");
	/* The sort column stays, whatever its rank: TotalTime pushes out
	 * Faults and Kept. */
	title_at(&s, false, COUNT_TOTAL_TIME, 80, line, sizeof line, sp);
	cr_assert_str_eq(line, " %Own  %Total   %Py  %Nat  %Sys TotalTime\u25bc "
	                 "Function (file:line)");
	cr_assert_leq(text_width(line, true), 80);
	/* 200 columns: everything. */
	title_at(&s, true, COUNT_OWN, 200, line, sizeof line, sp);
	cr_assert_str_eq(line, "%Own\u25bc  %Total   %Py  %Nat  %Sys  %Wait  "
	                 "Mem+   Net  Kept  Faults  MajFlt  OwnTime  TotalTime "
	                 "Function (file:line)");
	for (int c = 0; c < PROFILE_NCOLS; c++)
		if (c != COUNT_CPUW && c != COUNT_GILW) /* no such waits */
			cr_assert_lt(sp[c].start, sp[c].end, "column %d", c);
	/* Narrower than the essentials: %Own and the function stay. */
	title_at(&s, false, COUNT_OWN, 20, line, sizeof line, sp);
	cr_assert_eq(strncmp(line, "%Own\u25bc Function", 15), 0, "%s", line);
	snapshot_free(&s);
}

Test(columns, batch_text_shows_every_column)
{
	struct snapshot s = make_snapshot("/srv/a.py", funcs, 4, NULL, 0);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	cr_assert_not_null(f);
	cr_assert_eq(batch_text_print(f, &s), 0);
	fclose(f);
	cr_assert_not_null(strstr(out, " %Own  %Total   %Py  %Nat  %Sys  Mem+   Net  Kept  "
	                          "Faults  MajFlt  OwnTime  TotalTime "
	                          "Function (file:line)\n"), "%s", out);
	cr_assert_not_null(strstr(out, " 10.0    90.0   3.0   3.0   4.0 12.3M 12.3M  6.2M "
	                          "  5.0k!       3    0.10s      0.90s grow "
	                          "(/srv/a.py:40)\n"), "%s", out);
	free(out);
	snapshot_free(&s);
}

/* ---- source files -------------------------------------------------------- */

TestSuite(source, .init = headless_utf8_locale);

Test(source, missing_binary_directory_and_no_file)
{
	char *dir = tmpdir(), *bin, *missing;
	struct source_file sf;

	bin = write_file(dir, "bin.py", "x = 1\n\0\1\2", 9);
	cr_assert_eq(source_file_load(&sf, NULL, bin), -1);
	cr_assert_not_null(strstr(sf.reason, "binary file"), "%s", sf.reason);
	cr_assert(!sf.loaded);
	source_file_free(&sf);

	cr_assert_geq(asprintf(&missing, "%s/gone.py", dir), 0);
	cr_assert_eq(source_file_load_pid(&sf, getpid(), missing), -1);
	cr_assert_not_null(strstr(sf.reason, "No such file"), "%s", sf.reason);
	cr_assert_not_null(strstr(sf.reason, "gone.py"), "%s", sf.reason);
	source_file_free(&sf);

	cr_assert_eq(source_file_load(&sf, NULL, dir), -1);
	cr_assert_not_null(strstr(sf.reason, "directory"), "%s", sf.reason);
	source_file_free(&sf);

	cr_assert_eq(source_file_load(&sf, NULL, "<frozen abc>"), -1);
	cr_assert_str_eq(sf.reason, "no file on disk for \"<frozen abc>\"");
	source_file_free(&sf);
	unlink(bin);
	rmdir(dir);
	free(bin), free(missing), free(dir);
}

Test(source, read_through_the_targets_root_first)
{
	char *dir = tmpdir(), *sub, *path, *self, *where;
	struct source_file sf;

	/* A "mount namespace" where /app/m.py exists only under root. */
	cr_assert_geq(asprintf(&sub, "%s/app", dir), 0);
	cr_assert_eq(mkdir(sub, 0700), 0);
	path = write_file(sub, "m.py", "print(1)\n", 9);
	cr_assert_eq(source_file_load(&sf, dir, "/app/m.py"), 0, "%s",
	             sf.reason);
	cr_assert_str_eq(sf.from, path);
	cr_assert_str_eq(source_file_line(&sf, 1), "print(1)");
	source_file_free(&sf);
	/* Not under that root, nor here. */
	cr_assert_eq(source_file_load(&sf, sub, "/app/m.py"), -1);
	source_file_free(&sf);

	/* The real thing: /proc/self/root, then the path. */
	cr_assert_eq(source_file_load_pid(&sf, getpid(), path), 0);
	cr_assert_geq(asprintf(&self, "/proc/%d/root%s", (int)getpid(), path),
	              0);
	cr_assert_str_eq(sf.from, self);
	source_file_free(&sf);
	/* A root that cannot be entered: nothing, not the path here (that
	 * would be another mount namespace's file shown as the target's). */
	cr_assert_geq(asprintf(&where, "%s/none", dir), 0);
	cr_assert_eq(source_file_load(&sf, where, path), -1);
	cr_assert_not_null(strstr(sf.reason, "cannot enter"), "%s", sf.reason);
	source_file_free(&sf);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
	free(sub), free(path), free(self), free(where), free(dir);
}

Test(source, tabs_crlf_long_lines_and_bad_utf8)
{
	char *dir = tmpdir(), *path, data[4096];
	struct source_file sf;
	size_t n = 0;
	const char *l3;

	n += (size_t)snprintf(data + n, sizeof data - n,
	                      "\tif x:\r\n\t\ty\t= 1\nbad \xff\xfe ok\n");
	for (int i = 0; i < 1500; i++) /* 3000 bytes of two-byte chars */
		n += (size_t)snprintf(data + n, sizeof data - n, "\xc3\xa9");
	path = write_file(dir, "t.py", data, n); /* no final newline */
	cr_assert_eq(source_file_load(&sf, NULL, path), 0, "%s", sf.reason);
	cr_assert_eq(sf.nlines, 4);
	cr_assert_str_eq(source_file_line(&sf, 1), "        if x:");
	cr_assert_str_eq(source_file_line(&sf, 2), "                y       = 1");
	l3 = source_file_line(&sf, 3);
	cr_assert_str_eq(l3, "bad \xff\xfe ok"); /* text_fit shows '?' */
	cr_assert_eq(strlen(source_file_line(&sf, 4)), SOURCE_LINE_MAX);
	cr_assert_eq(text_width(source_file_line(&sf, 4), true),
	             SOURCE_LINE_MAX / 2, "cut inside a character");
	cr_assert_null(source_file_line(&sf, 5));
	cr_assert_null(source_file_line(&sf, 0));
	source_file_free(&sf);
	unlink(path);
	rmdir(dir);
	free(path), free(dir);
}

static const char program[] =
	"import os\n"                                  /* 1 */
	"\n"                                           /* 2 */
	"\n"                                           /* 3 */
	"@decorator\n"                                 /* 4 */
	"def work(\n"                                  /* 5 */
	"    n,\n"                                     /* 6 */
	"):\n"                                         /* 7 */
	"    total = 0\n"                              /* 8 */
	"    for i in range(n):\n"                     /* 9 */
	"\ttotal += i * i  # tab-indented\n"           /* 10 */
	"\n"                                           /* 11 */
	"# a comment at column 0 inside\n"             /* 12 */
	"    return total\n"                           /* 13 */
	"\n"                                           /* 14 */
	"\n"                                           /* 15 */
	"def other():\n"                               /* 16 */
	"    pass\n"                                   /* 17 */
	"x = other()\n";                               /* 18 */

Test(source, a_function_ends_where_its_indentation_does)
{
	char *dir = tmpdir(), *path = write_file(dir, "p.py", program,
	                                         sizeof program - 1);
	struct source_file sf;

	cr_assert_eq(source_file_load(&sf, NULL, path), 0);
	cr_assert_eq(source_file_block_end(&sf, 4), 13);
	cr_assert_eq(source_file_block_end(&sf, 5), 13);
	cr_assert_eq(source_file_block_end(&sf, 16), 17);
	cr_assert_eq(source_file_block_end(&sf, 18), 18);
	cr_assert_eq(source_file_block_end(&sf, 99), 99);
	source_file_free(&sf);
	unlink(path);
	rmdir(dir);
	free(path), free(dir);
}

/* ---- the lines view, headless ------------------------------------------ */

static char *g_dir, *g_path;

static void curses_up(void)
{
	headless_up();
	g_dir = tmpdir();
	g_path = write_file(g_dir, "p.py", program, sizeof program - 1);
}

static void curses_down(void)
{
	headless_down();
	unlink(g_path);
	rmdir(g_dir);
	free(g_path);
	free(g_dir);
}

/* work() with its loop body hottest, its header cold, and other(). */
static const struct row work_funcs[] = {
	{ "work", 4, 700, 900, 400, 250, 50, 0, 4096, 30, 1 },
	{ "other", 16, 100, 100, 100, 0, 0, 0, 0, 0, 0 },
};
static const struct row work_lines[] = {
	{ "work", 9, 100, 300, 100, 0, 0, 0, 0, 0, 0 },
	{ "work", 10, 600, 600, 300, 250, 50, 0, 4096, 30, 1 },
	{ "work", 13, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "other", 17, 100, 100, 100, 0, 0, 0, 0, 0, 0 },
};

static struct snapshot work_snapshot(const char *file)
{
	return make_snapshot(file, work_funcs, 2, work_lines, 4);
}

static void start(struct tui_state *st, const char *file)
{
	struct snapshot s = work_snapshot(file);

	headless_start(st, &s, true);
}

static int selected_line(const struct tui_state *st)
{
	const struct lines_row *r = lscreen_selected(&st->ls);

	cr_assert_not_null(r);
	return r->line;
}

TestSuite(view, .init = curses_up, .fini = curses_down);

Test(view, enter_shows_the_source_with_the_hottest_line_selected)
{
	struct tui_state st;
	char title[128];

	start(&st, g_path);
	cr_assert_str_eq(profile_table_row(&st.fs.table, 0)->name, "work");
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW);
	cr_assert_eq(st.view, &lines_screen_ops);
	headless_draw(&st);
	snprintf(title, sizeof title, "Source of work (");
	cr_assert_eq(strncmp(headless_row(0), title, strlen(title)), 0, "%s", headless_row(0));
	cr_assert_not_null(strstr(headless_row(0), "p.py:4-13), % of 1,000 samples"),
	                   "%s", headless_row(0));
	cr_assert_str_eq(headless_row(1), " Line  %Own  %Total   %Py  %Nat  %Sys  Kept "
	                 "Heat  Source");
	/* Every line of the function, decorator to return. */
	cr_assert_eq(st.ls.nrows, 10);
	cr_assert_str_eq(headless_row(2), "    4                                       "
	                 "      @decorator");
	cr_assert_str_eq(headless_row(8), "   10  60.0    60.0  30.0  25.0   5.0  2.0K "
	                 "\u2588\u2588\u2588\u2588\u2588         total += i "
	                 "* i  # tab\u2026");
	cr_assert_str_eq(headless_row(7), "    9  10.0    30.0  10.0   0.0   0.0     0 "
	                 "\u2588\u2588\u258c       for i in range(n):");
	cr_assert_str_eq(headless_row(11), "   13   0.0     0.0   0.0   0.0   0.0     0 "
	                 "          return total");
	cr_assert_eq(selected_line(&st), 10);
	for (int y = 0; y < 24; y++)
		cr_assert_leq(text_width(headless_row(y), true), 80, "row %d", y);
	cr_assert_str_eq(headless_row(23), "F1Help  Esc Back  l Lines t Threads p Pause "
	                 "r Reset F10Quit");
	headless_stop(&st);
}

Test(view, wide_terminal_shows_faults_and_idle_shows_wait)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, g_path);
	keys_handle(&st, '\r');
	resizeterm(24, 200);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), " Line  %Own  %Total   %Py  %Nat  %Sys  Mem+   Net  Kept  "
	                 "Faults  MajFlt Heat  Source");
	cr_assert_not_null(strstr(headless_row(8), "  4.0K  4.0K  2.0K     31!       1 "), "%s",
	                   headless_row(8));
	s = work_snapshot(g_path);
	s.idle_mode = true;
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), " Line  %Own  %Total   %Py  %Nat  %Sys  %Wait  "
	                 "Mem+   Net  Kept  Faults  MajFlt Heat  Source");
	resizeterm(24, 80);
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), " Line  %Own   %Py  %Nat  %Sys  %Wait  Kept "
	                 "Heat  Source");
	headless_stop(&st);
}

Test(view, keys_move_and_esc_or_left_go_back_to_the_same_function)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, g_path);
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN)); /* other */
	keys_handle(&st, CRT_KEYCODE(KEY_UP));   /* work */
	keys_handle(&st, '\r');
	headless_draw(&st);
	keys_handle(&st, CRT_KEYCODE(KEY_UP));
	cr_assert_eq(selected_line(&st), 9);
	keys_handle(&st, CRT_KEYCODE(KEY_HOME));
	cr_assert_eq(selected_line(&st), 4);
	keys_handle(&st, CRT_KEYCODE(KEY_END));
	cr_assert_eq(selected_line(&st), 13);
	keys_handle(&st, CRT_KEYCODE(KEY_PPAGE));
	cr_assert_eq(selected_line(&st), 4);
	keys_handle(&st, CRT_KEYCODE(KEY_NPAGE));
	cr_assert_eq(selected_line(&st), 13);
	/* Sorting and filtering mean nothing here. */
	cr_assert_eq(keys_handle(&st, '>'), REACT_NONE);
	cr_assert_eq(keys_handle(&st, '/'), REACT_NONE);
	cr_assert(!st.prompt.active);
	/* A new snapshot: the figures change, the bar stays on line 13. */
	s = work_snapshot(g_path);
	s.lines[2].c.own = s.lines[2].c.total = 999;
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_eq(selected_line(&st), 13);
	cr_assert_not_null(strstr(headless_row(11), "   13  99.9    99.9"), "%s",
	                   headless_row(11));
	/* Esc: the functions table, its bar still on work. */
	cr_assert_eq(keys_handle(&st, 27), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	cr_assert_eq(st.thread_filter, 0);
	cr_assert_str_eq(profile_table_row(&st.fs.table, st.fs.pos.sel)->name,
	                 "work");
	/* Left does the same; elsewhere it does nothing. */
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	keys_handle(&st, '\r');
	cr_assert_eq(st.view, &lines_screen_ops);
	cr_assert_str_eq(st.ls.name, "other");
	cr_assert_eq(keys_handle(&st, CRT_KEYCODE(KEY_LEFT)), REACT_REDRAW);
	cr_assert_eq(st.view, &functions_screen_ops);
	cr_assert_str_eq(profile_table_row(&st.fs.table, st.fs.pos.sel)->name,
	                 "other");
	cr_assert_eq(keys_handle(&st, CRT_KEYCODE(KEY_LEFT)), REACT_NONE);
	headless_stop(&st);
}

Test(view, the_bar_follows_the_hottest_line_until_the_user_moves)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, g_path);
	keys_handle(&st, '\r');
	cr_assert_eq(selected_line(&st), 10);
	s = work_snapshot(g_path);
	s.lines[0].c.total = 800; /* line 9 becomes the hottest */
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_eq(selected_line(&st), 9);
	headless_stop(&st);
}

Test(view, from_the_line_table_enter_selects_that_line)
{
	struct tui_state st;

	start(&st, g_path);
	keys_handle(&st, 'l');
	/* Lines by %Own: 10, 9 and 17 (100 each: work before other), 13. */
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert_eq(profile_table_row(&st.fs.table, st.fs.pos.sel)->line, 9);
	keys_handle(&st, '\r');
	cr_assert_eq(st.view, &lines_screen_ops);
	cr_assert_eq(selected_line(&st), 9);
	/* l: straight back to the line table. */
	keys_handle(&st, 'l');
	cr_assert_eq(st.view, &functions_screen_ops);
	cr_assert_eq(st.fs.mode, PROFILE_LINES);
	headless_stop(&st);
}

Test(view, missing_source_still_lists_the_sampled_lines)
{
	struct tui_state st;

	start(&st, "/nonexistent/dir/gone.py");
	keys_handle(&st, '\r');
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), "source not available: /nonexistent/dir/"
	                 "gone.py: No such file or directory");
	cr_assert_eq(st.ls.nrows, 3);
	cr_assert_not_null(strstr(headless_row(3), "    9  10.0"), "%s", headless_row(3));
	cr_assert_not_null(strstr(headless_row(4), "   10  60.0"), "%s", headless_row(4));
	cr_assert_eq(selected_line(&st), 10);
	headless_stop(&st);
}

Test(view, a_shorter_file_says_it_changed)
{
	struct tui_state st;
	char *shorter = write_file(g_dir, "short.py", program, 40);

	start(&st, shorter); /* lines 1-6 only */
	keys_handle(&st, '\r');
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), "source changed? line 13 is past the end of "
	                 "the file (6 lines)");
	/* 4-6 from the file, then the sampled lines past its end. */
	cr_assert_str_eq(headless_row(3), "    4                                       "
	                 "      @decorator");
	cr_assert_not_null(strstr(headless_row(6), "    9  10.0"), "%s", headless_row(6));
	cr_assert_eq(st.ls.nrows, 6);
	headless_stop(&st);
	unlink(shorter);
	free(shorter);
}

Test(view, ascii_heat_bar_without_utf8)
{
	struct tui_state st;

	start(&st, g_path);
	headless_crt.utf8 = false;
	keys_handle(&st, '\r');
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(8), " ##### "), "%s", headless_row(8));
	cr_assert_not_null(strstr(headless_row(7), " ##+ "), "%s", headless_row(7));
	cr_assert_str_eq(headless_row(1), " Line  %Own  %Total   %Py  %Nat  %Sys  Kept "
	                 "Heat  Source");
	headless_crt.utf8 = true;
	headless_stop(&st);
}

/* --native: the native functions line 10 called, under it, most own
 * first; past LINES_CALLEES_SHOWN the rest is summed in one row. */
static const struct {
	const char *name, *module;
	uint64_t own;
} work_callees[] = {
	{ "deflate_slow", "/usr/lib/x86_64-linux-gnu/libz.so.1", 300 },
	{ "longest_match", "/usr/lib/x86_64-linux-gnu/libz.so.1", 100 },
	{ "memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", 60 },
	{ "crc32_z", "/usr/lib/x86_64-linux-gnu/libz.so.1", 40 },
	{ "malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", 30 },
	{ "free", "/usr/lib/x86_64-linux-gnu/libc.so.6", 20 },
	{ "send_bits", "/usr/lib/x86_64-linux-gnu/libz.so.1", 10 },
};
#define NCALLEES (sizeof work_callees / sizeof work_callees[0])

static void add_callees(struct snapshot *s, const char *file)
{
	s->native = true;
	s->callees = calloc(NCALLEES, sizeof *s->callees);
	cr_assert_not_null(s->callees);
	for (size_t i = 0; i < NCALLEES; i++) {
		struct row r = { work_callees[i].name, 0, work_callees[i].own,
		                 work_callees[i].own, 0,
		                 0.9 * (double)work_callees[i].own,
		                 0.1 * (double)work_callees[i].own, 0, 0, 0, 0 };
		s->callees[i] = (struct snap_callee){
			.caller_file = file, .caller_line = 10,
			.name = work_callees[i].name, .file = work_callees[i].module,
			.module = work_callees[i].module, .c = counts(&r) };
	}
	s->ncallees = NCALLEES;
}

Test(view, native_callees_are_listed_under_their_line)
{
	struct tui_state st;
	struct snapshot s;

	start(&st, g_path);
	s = work_snapshot(g_path);
	add_callees(&s, g_path);
	tui_show(&st, &s);
	keys_handle(&st, '\r');
	headless_draw(&st);
	cr_assert_eq(selected_line(&st), 10, "the bar stays on the hottest line");
	cr_assert_not_null(strstr(headless_row(8), "   10  60.0    60.0"), "%s",
	                   headless_row(8));
	/* Indented like its caller's source; the module is cut at 80
	 * columns before the name is. */
	cr_assert_str_eq(headless_row(9), "       30.0    30.0   0.0  27.0   3.0     0 "
	                 "\u2588\u2588\u258c           \u21b3 deflate_slow  libz.\u2026");
	cr_assert_not_null(strstr(headless_row(10), "\u21b3 longest_match  li"),
	                   "%s", headless_row(10));
	cr_assert_not_null(strstr(headless_row(13), "\u21b3 malloc  libc.so.6"), "%s",
	                   headless_row(13));
	/* free and send_bits: 3.0 % together. */
	cr_assert_not_null(strstr(headless_row(14), "        3.0     3.0   0.0   2.7   0.3"),
	                   "%s", headless_row(14));
	cr_assert_not_null(strstr(headless_row(14), "\u21b3 2 more"),
	                   "%s", headless_row(14));
	cr_assert(strncmp(headless_row(15), "   11", 5) == 0, "%s", headless_row(15));
	cr_assert_eq(st.ls.nrows, 10 + LINES_CALLEES_SHOWN + 1);
	/* Moving onto a callee keeps its caller's line. */
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	cr_assert(lscreen_selected(&st.ls)->callee);
	cr_assert_eq(selected_line(&st), 10);
	/* Without UTF-8 the arrow is "->". */
	headless_crt.utf8 = false;
	st.ls.utf8 = false;
	s = work_snapshot(g_path);
	add_callees(&s, g_path);
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_not_null(strstr(headless_row(9), "-> deflate_slow  libz"), "%s",
	                   headless_row(9));
	headless_crt.utf8 = true;
	headless_stop(&st);
}

/* --native: Enter on a native function without source lines lists the
 * Python lines it was called from, most first. */
Test(view, a_native_function_without_source_lists_its_callers)
{
	struct tui_state st;
	struct snapshot s = work_snapshot(g_path);
	static const char crypto[] = "libcrypto.so.3+0x29c240";
	static const char module[] = "/usr/lib/x86_64-linux-gnu/libcrypto.so.3";
	struct row hot = { crypto, 0, 800, 800, 0, 790, 10, 0, 0, 0, 0 };
	struct row from_work = { crypto, 0, 600, 600, 0, 590, 10, 0, 0, 0, 0 };
	struct row from_other = { crypto, 0, 200, 200, 0, 200, 0, 0, 0, 0, 0 };

	start(&st, g_path);
	s.native = true;
	s.funcs = realloc(s.funcs, 3 * sizeof *s.funcs);
	cr_assert_not_null(s.funcs);
	s.funcs[2] = (struct snap_func){ .name = crypto, .file = module,
	                                 .c = counts(&hot), .native = true,
	                                 .module = module };
	s.nfuncs = 3;
	s.callees = calloc(2, sizeof *s.callees);
	cr_assert_not_null(s.callees);
	/* In snapshot order: by caller. */
	s.callees[0] = (struct snap_callee){ .caller_file = g_path, .caller_line = 10,
		.name = crypto, .file = module, .module = module, .c = counts(&from_work) };
	s.callees[1] = (struct snap_callee){ .caller_file = g_path, .caller_line = 17,
		.name = crypto, .file = module, .module = module, .c = counts(&from_other) };
	s.ncallees = 2;
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert_str_eq(profile_table_row(&st.fs.table, 0)->name, crypto);
	keys_handle(&st, '\r');
	headless_draw(&st);
	cr_assert_str_eq(headless_row(1), "no source lines (no debug info); below, "
	                 "the Python lines that called it");
	cr_assert_eq(st.ls.nrows, 2);
	cr_assert_not_null(strstr(headless_row(3), "60.0"), "%s", headless_row(3));
	cr_assert_not_null(strstr(headless_row(3), "\u21b0 work (p.py:10)"),
	                   "%s", headless_row(3));
	cr_assert_not_null(strstr(headless_row(4), "20.0"), "%s", headless_row(4));
	cr_assert_not_null(strstr(headless_row(4), "\u21b0 other (p.py:17)"),
	                   "%s", headless_row(4));
	headless_stop(&st);
}
