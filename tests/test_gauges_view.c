/* test_gauges_view.c - the process gauges, their sparklines and the
 * verdict as the views show them: sparkline scaling and the ASCII
 * fallback, the TUI header at 80 and 200 columns with and without gauges,
 * the JSON fields and the batch text line, all from fixed snapshots.
 * Expected figures are worked out here from the fixture's numbers, not
 * copied from the output. */
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
#include "../ui/header.h"
#include "../ui/json_out.h"
#include "../ui/sparkline.h"
#include "../ui/text.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static const char *const blocks[] = {
	" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586",
	"\u2587", "\u2588",
};

/* ---- fixtures ----------------------------------------------------------- */

/* Two functions, one line each, with a split; gauges valid. */
static struct snapshot make_snapshot(void)
{
	struct snapshot s;
	struct snap_func *funcs;
	struct snap_line *lines;
	struct snap_counts hot = {
		.own = 600, .total = 610, .own_s = 0.6, .total_s = 0.61,
		.split = { .python = 412.34, .native = 150.26, .system = 37.4,
		           .waiting = 0.0, .mem_growth = 48u << 20,
		           .minflt = 12345, .majflt = 7 },
	};
	struct snap_counts io = {
		.own = 200, .total = 250, .own_s = 0.2, .total_s = 0.25,
		.split = { .python = 10.04, .native = 0.0, .system = 120.0,
		           .waiting = 69.96, .mem_growth = 0, .minflt = 3,
		           .majflt = 0 },
	};

	s = sb_snapshot(4242, "python3 app.py", "3.12.1", 800);
	s.elapsed_s = 61.0;
	s.window_s = 1.0;
	s.ticks = 1000;
	s.rate_hz = 1000;
	s.requested_hz = 1000;
	s.threads_running = 1;
	s.threads_total = 2;
	s.gil_held_pct = 90;
	s.active_pct = 95;
	funcs = sb_funcs(&s, 2);
	lines = sb_lines(&s, 2);
	funcs[0] = (struct snap_func){ .name = "hot", .file = "/app/viz.py", .line = 10, .c = hot };
	funcs[1] = (struct snap_func){ .name = "load", .file = "/app/io.py", .line = 3, .c = io };
	lines[0] = (struct snap_line){ .name = "hot", .file = "/app/viz.py", .line = 12, .c = hot };
	lines[1] = (struct snap_line){ .name = "load", .file = "/app/io.py", .line = 5, .c = io };
	s.gauges = (struct snap_gauges){
		.valid = true,
		.rss = (uint64_t)(1.2 * GIB), .rss_peak = (uint64_t)(1.4 * GIB),
		.rss_growth_per_min = 12.0 * 1024 * 1024,
		.mem_limit = 8ull << 30,
		.minflt = 1234567, .majflt = 12,
		.minflt_rate = 120.4, .majflt_rate = 0.0,
		.cpu_user = 55.25, .cpu_system = 3.5,
		.cpu_user_pct = 92.4, .cpu_system_pct = 6.2,
		.threads = 5, .mem_unattributed = 4096,
	};
	s.verdict = VERDICT_CPU;
	snprintf(s.verdict_reason, sizeof s.verdict_reason,
	         "user 97%% of 1.0 busy thread");
	return s;
}

/* A history whose newest values are known: each gauge ramps up. */
static void fill_history(struct gauge_history *h, const struct snapshot *s,
                         int n)
{
	struct snapshot t = *s;

	memset(h, 0, sizeof *h);
	for (int i = 1; i <= n; i++) {
		t.gauges.cpu_user_pct = s->gauges.cpu_user_pct * i / n;
		t.gauges.cpu_system_pct = s->gauges.cpu_system_pct * i / n;
		t.gauges.threads = 1 + (s->gauges.threads - 1) * i / n;
		t.gauges.rss = s->gauges.rss / (uint64_t)n * (uint64_t)i;
		t.gauges.minflt_rate = s->gauges.minflt_rate * (i % 3);
		t.gauges.majflt_rate = i == n ? 2.0 : 0.0;
		gauge_history_push(h, &t);
	}
}

/* ---- sparklines --------------------------------------------------------- */

TestSuite(sparkline, .init = headless_utf8_locale);

Test(sparkline, keeps_the_last_sixty_values)
{
	struct sparkline sl;

	memset(&sl, 0, sizeof sl);
	cr_assert_eq(sparkline_value(&sl, 0), 0.0);
	for (int i = 1; i <= 75; i++)
		sparkline_push(&sl, i);
	cr_assert_eq(sl.n, SPARKLINE_HISTORY);
	cr_assert_eq(sparkline_value(&sl, 0), 75.0);
	cr_assert_eq(sparkline_value(&sl, SPARKLINE_HISTORY - 1),
	             75.0 - SPARKLINE_HISTORY + 1);
	cr_assert_eq(sparkline_value(&sl, SPARKLINE_HISTORY), 0.0);
	sparkline_push(&sl, NAN);
	cr_assert_eq(sparkline_value(&sl, 0), 0.0);
}

Test(sparkline, one_slice_per_mark_zero_blank)
{
	struct sparkline sl;
	char buf[256], want[256] = "";

	memset(&sl, 0, sizeof sl);
	for (int i = 0; i <= 8; i++) {
		sparkline_push(&sl, i);
		strcat(want, blocks[i]);
	}
	cr_assert_eq(sparkline_draw(&sl, 9, 0.0, true, buf, sizeof buf), 9);
	cr_assert_str_eq(buf, want);
	cr_assert_eq(text_width(buf, true), 9);
	/* Any positive value shows; just under a slice edge stays below. */
	cr_assert_eq(sparkline_level(0.001, 8, true), 1);
	cr_assert_eq(sparkline_level(3.999, 8, true), 4);
	cr_assert_eq(sparkline_level(4.001, 8, true), 5);
	cr_assert_eq(sparkline_level(-1, 8, true), 0);
	cr_assert_eq(sparkline_level(5, 0, true), 0);
}

Test(sparkline, scale_is_the_largest_shown_or_the_floor)
{
	struct sparkline sl;
	char buf[256], want[256];

	memset(&sl, 0, sizeof sl);
	sparkline_push(&sl, 1000); /* drawn only with 3 columns */
	sparkline_push(&sl, 2);
	sparkline_push(&sl, 4);
	sparkline_draw(&sl, 2, 0.0, true, buf, sizeof buf);
	snprintf(want, sizeof want, "%s%s", blocks[4], blocks[8]);
	cr_assert_str_eq(buf, want);
	sparkline_draw(&sl, 3, 0.0, true, buf, sizeof buf);
	snprintf(want, sizeof want, "%s%s%s", blocks[8], blocks[1],
	         blocks[1]);
	cr_assert_str_eq(buf, want);
	/* A floor above the values: 4 of 100 is the lowest mark. */
	sparkline_draw(&sl, 2, 100.0, true, buf, sizeof buf);
	snprintf(want, sizeof want, "%s%s", blocks[1], blocks[1]);
	cr_assert_str_eq(buf, want);
}

Test(sparkline, short_history_is_right_aligned)
{
	struct sparkline sl;
	char buf[256], want[256];

	memset(&sl, 0, sizeof sl);
	cr_assert_eq(sparkline_draw(&sl, 4, 1.0, true, buf, sizeof buf), 4);
	cr_assert_str_eq(buf, "    ");
	sparkline_push(&sl, 1);
	sparkline_draw(&sl, 4, 1.0, true, buf, sizeof buf);
	snprintf(want, sizeof want, "   %s", blocks[8]);
	cr_assert_str_eq(buf, want);
	/* Too small a buffer or no columns: nothing. */
	cr_assert_eq(sparkline_draw(&sl, 4, 1.0, true, buf, 5), 0);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(sparkline_draw(&sl, 0, 1.0, true, buf, sizeof buf), 0);
}

Test(sparkline, ascii_fallback)
{
	struct sparkline sl;
	char buf[256];

	memset(&sl, 0, sizeof sl);
	for (int i = 0; i <= 9; i++)
		sparkline_push(&sl, i);
	cr_assert_eq(sparkline_levels(false), 10);
	cr_assert_eq(sparkline_draw(&sl, 10, 0.0, false, buf, sizeof buf), 10);
	cr_assert_str_eq(buf, " .:-=+*#%@");
}

/* ---- units -------------------------------------------------------------- */

TestSuite(units, .init = headless_utf8_locale);

Test(units, bytes_and_rates)
{
	char b[32];

	text_bytes(b, sizeof b, 0);
	cr_assert_str_eq(b, "0B");
	text_bytes(b, sizeof b, 830);
	cr_assert_str_eq(b, "830B");
	text_bytes(b, sizeof b, 4096);
	cr_assert_str_eq(b, "4.0K");
	text_bytes(b, sizeof b, 512ull << 20);
	cr_assert_str_eq(b, "512M");
	text_bytes(b, sizeof b, (uint64_t)(1.2 * GIB));
	cr_assert_str_eq(b, "1.2G");
	text_bytes(b, sizeof b, (uint64_t)(9.97 * GIB));
	cr_assert_str_eq(b, "10G");
	text_compact(b, sizeof b, 0.0);
	cr_assert_str_eq(b, "0");
	text_compact(b, sizeof b, 0.44);
	cr_assert_str_eq(b, "0.4");
	text_compact(b, sizeof b, 120.4);
	cr_assert_str_eq(b, "120");
	text_compact(b, sizeof b, 1234.0);
	cr_assert_str_eq(b, "1.2k");
	text_compact(b, sizeof b, 2.5e6);
	cr_assert_str_eq(b, "2.5M");
	text_compact(b, sizeof b, NAN);
	cr_assert_str_eq(b, "0");
}

/* ---- the header ----------------------------------------------------------- */

TestSuite(header, .init = headless_utf8_locale);

/* line holds label, a blank, then exactly the sparkline of sl drawn in
 * cols columns (followed by two blanks or the end). */
static void assert_spark(const char *line, const char *label,
                         const struct sparkline *sl, int cols, double floor,
                         bool utf8)
{
	char spark[512], want[640];
	const char *p;

	sparkline_draw(sl, cols, floor, utf8, spark, sizeof spark);
	snprintf(want, sizeof want, "%s %s", label, spark);
	p = strstr(line, want);
	cr_assert_not_null(p, "no \"%s\" in \"%s\"", want, line);
	p += strlen(want);
	cr_assert(*p == '\0' || strncmp(p, "  ", 2) == 0,
	          "sparkline after %s is not %d columns: %s", label, cols,
	          line);
}

static bool has_non_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s >= 0x80)
			return true;
	return false;
}

Test(header, gauges_at_80_columns)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[4][HEADER_LINE_MAX], want[512], rss[64];
	int cols;

	fill_history(&h, &s, 30);
	cr_assert_eq(header_gauges(&s, &h, 80, true, l, 3), 3);
	for (int i = 0; i < 3; i++)
		cr_assert_leq(text_width(l[i], true), 80, "%s", l[i]);
	/* The CPU line: three sparklines sharing the spare columns. */
	cr_assert_eq(strncmp(l[0], "CPU usr 92% ", 12), 0, "%s", l[0]);
	cols = (80 - (int)strlen("CPU usr 92%  sys 6%  OS threads 5") - 3) / 3;
	assert_spark(l[0], "usr 92%", &h.cpu_user, cols, 100.0, true);
	assert_spark(l[0], "sys 6%", &h.cpu_sys, cols, 100.0, true);
	assert_spark(l[0], "OS threads 5", &h.threads, cols, 1.0, true);
	/* The memory line: RSS and its share of the limit, worked out here
	 * (the limit's size gives way to the growth rate). */
	snprintf(rss, sizeof rss, "RSS 1.2G (%.0f%%)", 100.0 * 1.2 / 8.0);
	cr_assert_eq(strncmp(l[1], rss, strlen(rss)), 0, "%s", l[1]);
	/* Three sparklines would be too narrow: the major faults' goes. */
	cols = (80 - (int)strlen(rss) - (int)strlen("  +12M/min  peak 1.4G  minflt "
	        "120/s  majflt 0/s") - 2) / 2;
	cr_assert_geq(cols, SPARK_MIN_COLS);
	assert_spark(l[1], rss, &h.rss, cols, 1.0, true);
	cr_assert_not_null(strstr(l[1], "  +12M/min  peak 1.4G"), "%s", l[1]);
	assert_spark(l[1], "peak 1.4G  minflt 120/s", &h.minflt, cols, 1.0,
	             true);
	cr_assert_not_null(strstr(l[1], "  majflt 0/s"), "%s", l[1]);
	cr_assert_str_eq(strstr(l[1], "  majflt 0/s"), "  majflt 0/s");
	/* The verdict. */
	snprintf(want, sizeof want, "Verdict: %s \u2014 %s",
	         snapshot_verdict_word(VERDICT_CPU), s.verdict_reason);
	cr_assert_str_eq(l[2], want);
	snapshot_free(&s);
}

Test(header, narrow_lines_drop_sparklines_least_telling_first)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[4][HEADER_LINE_MAX];

	fill_history(&h, &s, 60);
	/* 42 columns: only the user CPU's sparkline still has room, and the
	 * memory line gives up the limit's long form, its sparklines and the
	 * peak. */
	header_gauges(&s, &h, 42, true, l, 3);
	cr_assert_leq(text_width(l[0], true), 42, "%s", l[0]);
	assert_spark(l[0], "CPU usr 92%", &h.cpu_user,
	             42 - (int)strlen("CPU usr 92%  sys 6%  OS threads 5") - 1,
	             100.0, true);
	cr_assert_not_null(strstr(l[0], "  sys 6%  OS threads 5"), "%s", l[0]);
	cr_assert_str_eq(l[1], "RSS 1.2G (15%)  minflt 120/s  majflt 0/s");
	/* 36 columns: no sparkline at all. */
	header_gauges(&s, &h, 36, true, l, 3);
	cr_assert_str_eq(l[0], "CPU usr 92%  sys 6%  OS threads 5");
	/* Narrower still: the thread count goes, then lines are cut,
	 * never wider. */
	header_gauges(&s, &h, 20, true, l, 3);
	cr_assert_str_eq(l[0], "CPU usr 92%  sys 6%");
	for (int i = 0; i < 3; i++)
		cr_assert_leq(text_width(l[i], true), 20, "%s", l[i]);
	cr_assert_str_eq(l[2], "Verdict: CPU-bound \u2026");
	snapshot_free(&s);
}

Test(header, gauges_at_200_columns_share_one_line)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[4][HEADER_LINE_MAX];
	int n, cols;

	fill_history(&h, &s, 60);
	n = header_gauges(&s, &h, 200, true, l, 3);
	cr_assert_eq(n, 2);
	cr_assert_leq(text_width(l[0], true), 200, "%s", l[0]);
	cr_assert_not_null(strstr(l[0], "\u2502  RSS 1.2G (15% of 8.0G) "),
	                   "%s", l[0]);
	/* Six sparklines, wider than at 80 columns, all the same width. */
	cols = (200 - (int)strlen("CPU usr 92%  sys 6%  OS threads 5  |  "
	        "RSS 1.2G (15% of 8.0G)  +12M/min  peak 1.4G  minflt 120/s  "
	        "majflt 0/s") - 6) / 6;
	cr_assert_geq(cols, 14);
	assert_spark(l[0], "usr 92%", &h.cpu_user, cols, 100.0, true);
	assert_spark(l[0], "sys 6%", &h.cpu_sys, cols, 100.0, true);
	assert_spark(l[0], "OS threads 5", &h.threads, cols, 1.0, true);
	assert_spark(l[0], "(15% of 8.0G)", &h.rss, cols, 1.0, true);
	assert_spark(l[0], "minflt 120/s", &h.minflt, cols, 1.0, true);
	assert_spark(l[0], "majflt 0/s", &h.majflt, cols, 1.0, true);
	cr_assert_eq(strncmp(l[1], "Verdict: CPU-bound", 18), 0);
	snapshot_free(&s);
}

Test(header, nothing_without_gauges)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX];

	s.gauges.valid = false;
	memset(&h, 0, sizeof h);
	gauge_history_push(&h, &s);
	cr_assert_eq(h.rss.n, 0);
	cr_assert_eq(header_gauges(&s, &h, 80, true, l, 3), 0);
	cr_assert_eq(header_gauges(&s, NULL, -1, true, l, 1), 0);
	cr_assert_eq(header_tui(&s, &h, 80, 24, true, l), 2);
	cr_assert_eq(header_tui(&s, &h, 200, 24, true, l), 2);
	cr_assert_eq(strncmp(l[0], "pytop ", 6), 0);
	cr_assert_eq(strncmp(l[1], "Samples 800 ", 12), 0, "%s", l[1]);
	snapshot_free(&s);
}

Test(header, tui_header_leaves_the_table_most_of_the_screen)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX];

	fill_history(&h, &s, 10);
	cr_assert_eq(header_tui(&s, &h, 80, 24, true, l), 5);
	cr_assert_eq(strncmp(l[2], "CPU usr", 7), 0, "%s", l[2]);
	cr_assert_eq(strncmp(l[3], "RSS", 3), 0, "%s", l[3]);
	cr_assert_eq(strncmp(l[4], "Verdict:", 8), 0, "%s", l[4]);
	cr_assert_eq(header_tui(&s, &h, 200, 24, true, l), 4);
	/* Short screens keep the verdict first, then the CPU line. */
	cr_assert_eq(header_tui(&s, &h, 80, 13, true, l), 4);
	cr_assert_eq(strncmp(l[2], "CPU usr", 7), 0, "%s", l[2]);
	cr_assert_eq(strncmp(l[3], "Verdict:", 8), 0, "%s", l[3]);
	cr_assert_eq(header_tui(&s, &h, 80, 12, true, l), 3);
	cr_assert_eq(strncmp(l[2], "Verdict:", 8), 0, "%s", l[2]);
	cr_assert_eq(header_tui(&s, &h, 80, 11, true, l), 2);
	cr_assert_eq(header_tui(&s, &h, 80, 3, true, l), 1);
	cr_assert_eq(header_tui(&s, &h, 80, 2, true, l), 0);
	snapshot_free(&s);
}

Test(header, ascii_terminal)
{
	struct snapshot s = make_snapshot();
	struct gauge_history h;
	char l[4][HEADER_LINE_MAX];

	fill_history(&h, &s, 60);
	cr_assert_eq(header_gauges(&s, &h, 200, false, l, 3), 2);
	for (int i = 0; i < 2; i++)
		cr_assert(!has_non_ascii(l[i]), "%s", l[i]);
	cr_assert_not_null(strstr(l[0], "  |  RSS "), "%s", l[0]);
	assert_spark(l[0], "usr 92%", &h.cpu_user, 14, 100.0, false);
	assert_spark(l[0], "majflt 0/s", &h.majflt, 14, 1.0, false);
	cr_assert_str_eq(l[1], "Verdict: CPU-bound - user 97% of 1.0 busy "
	                 "thread");
	snapshot_free(&s);
}

Test(header, verdict_words)
{
	struct snapshot s = make_snapshot();
	char v[256];
	static const struct {
		enum snap_verdict v;
		const char *word;
	} words[] = {
		{ VERDICT_CPU, "CPU-bound" }, { VERDICT_SYSTEM, "system-bound" },
		{ VERDICT_MEMORY, "memory-bound" },
		{ VERDICT_WAITING, "waiting" },
	};

	s.verdict_reason[0] = '\0';
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		char want[64];

		s.verdict = words[i].v;
		header_verdict(&s, true, v, sizeof v);
		snprintf(want, sizeof want, "Verdict: %s", words[i].word);
		cr_assert_str_eq(v, want);
	}
	s.verdict = VERDICT_NONE;
	header_verdict(&s, true, v, sizeof v);
	cr_assert_str_eq(v, "Verdict: none yet");
	snapshot_free(&s);
}

/* ---- JSON and batch text ------------------------------------------------- */


static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	cr_assert(json_is_number(v), "%s missing or not a number", key);
	return json_number_value(v);
}

static json_int_t integer(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "%s missing or not an integer", key);
	return json_integer_value(v);
}

/* A row's split as the snapshot has it, rounded to tenths here. */
static void check_split(const json_t *row, const struct snap_split *sp)
{
	cr_assert_float_eq(num(row, "python"), round(sp->python * 10) / 10,
	                   1e-9);
	cr_assert_float_eq(num(row, "native"), round(sp->native * 10) / 10,
	                   1e-9);
	cr_assert_float_eq(num(row, "system"), round(sp->system * 10) / 10,
	                   1e-9);
	cr_assert_float_eq(num(row, "waiting"), round(sp->waiting * 10) / 10,
	                   1e-9);
	cr_assert_eq(integer(row, "mem_growth"), (json_int_t)sp->mem_growth);
	cr_assert_eq(integer(row, "minflt"), (json_int_t)sp->minflt);
	cr_assert_eq(integer(row, "majflt"), (json_int_t)sp->majflt);
}

TestSuite(json, .init = headless_utf8_locale);

Test(json, split_per_function_and_line)
{
	struct snapshot s = make_snapshot();
	json_t *j = headless_json(&s), *f, *l;

	f = json_object_get(j, "functions");
	l = json_object_get(j, "lines");
	cr_assert_eq(json_array_size(f), 2);
	cr_assert_eq(json_array_size(l), 2);
	/* By own samples: hot first. */
	cr_assert_str_eq(json_string_value(json_object_get(
	                 json_array_get(f, 0), "name")), "hot");
	check_split(json_array_get(f, 0), &s.funcs[0].c.split);
	check_split(json_array_get(f, 1), &s.funcs[1].c.split);
	check_split(json_array_get(l, 0), &s.lines[0].c.split);
	check_split(json_array_get(l, 1), &s.lines[1].c.split);
	/* To a tenth: 412.34 is 412.3. */
	cr_assert_float_eq(num(json_array_get(f, 0), "python"), 412.3, 1e-9);
	/* The fields that were there before are still there. */
	cr_assert_eq(integer(json_array_get(f, 0), "own"), 600);
	cr_assert_eq(integer(json_array_get(l, 0), "line"), 12);
	json_decref(j);
	snapshot_free(&s);
}

Test(json, gauges_object)
{
	struct snapshot s = make_snapshot();
	json_t *j = headless_json(&s), *g = json_object_get(j, "gauges");
	const struct snap_gauges *w = &s.gauges;

	cr_assert(json_is_object(g));
	cr_assert_eq(integer(g, "rss"), (json_int_t)w->rss);
	cr_assert_eq(integer(g, "rss_peak"), (json_int_t)w->rss_peak);
	cr_assert_eq(integer(g, "mem_limit"), (json_int_t)w->mem_limit);
	cr_assert_eq(integer(g, "minflt"), (json_int_t)w->minflt);
	cr_assert_eq(integer(g, "majflt"), (json_int_t)w->majflt);
	cr_assert_eq(integer(g, "threads"), w->threads);
	cr_assert_eq(integer(g, "mem_unattributed"),
	             (json_int_t)w->mem_unattributed);
	cr_assert_float_eq(num(g, "cpu_user"), w->cpu_user, 1e-9);
	cr_assert_float_eq(num(g, "cpu_system"), w->cpu_system, 1e-9);
	cr_assert_float_eq(num(g, "cpu_user_pct"), w->cpu_user_pct, 1e-9);
	cr_assert_float_eq(num(g, "cpu_system_pct"), w->cpu_system_pct, 1e-9);
	cr_assert_float_eq(num(g, "minflt_rate"), w->minflt_rate, 1e-9);
	cr_assert_float_eq(num(g, "majflt_rate"), w->majflt_rate, 1e-9);
	cr_assert_str_eq(json_string_value(json_object_get(g, "verdict")),
	                 snapshot_verdict_word(s.verdict));
	cr_assert_str_eq(json_string_value(json_object_get(g,
	                 "verdict_reason")), s.verdict_reason);
	json_decref(j);
	snapshot_free(&s);
}

Test(json, gauges_null_until_read_and_nan_safe)
{
	struct snapshot s = make_snapshot();
	json_t *j;

	s.gauges.valid = false;
	j = headless_json(&s);
	cr_assert(json_is_null(json_object_get(j, "gauges")));
	json_decref(j);
	s.gauges.valid = true;
	s.gauges.minflt_rate = NAN;
	s.funcs[0].c.split.native = INFINITY;
	s.verdict = VERDICT_NONE;
	j = headless_json(&s);
	cr_assert_float_eq(num(json_object_get(j, "gauges"), "minflt_rate"),
	                   0.0, 1e-12);
	cr_assert_float_eq(num(json_array_get(json_object_get(j, "functions"),
	                   0), "native"), 0.0, 1e-12);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(
	                 j, "gauges"), "verdict")), "");
	json_decref(j);
	snapshot_free(&s);
}

TestSuite(batch, .init = headless_utf8_locale);

Test(batch, gauges_and_verdict_line)
{
	struct snapshot s = make_snapshot();
	char *out, want[512], *third;

	out = headless_capture(batch_text_print, &s);
	third = strchr(strchr(out, '\n') + 1, '\n') + 1;
	snprintf(want, sizeof want,
	         "CPU usr 92%%  sys 6%%  OS threads 5  \u2502  "
	         "RSS 1.2G (%.0f%% of 8.0G)  +12M/min  peak 1.4G  minflt 120/s  "
	         "majflt 0/s  \u2502  Verdict: CPU-bound \u2014 %s\n",
	         100.0 * 1.2 / 8.0, s.verdict_reason);
	cr_assert_eq(strncmp(third, want, strlen(want)), 0,
	             "want %s\ngot %s", want, third);
	free(out);
	/* Without gauges, no line: the table's description comes third. */
	s.gauges.valid = false;
	out = headless_capture(batch_text_print, &s);
	third = strchr(strchr(out, '\n') + 1, '\n') + 1;
	cr_assert_eq(strncmp(third, "Functions since start", 21), 0, "%s",
	             third);
	free(out);
	snapshot_free(&s);
}
