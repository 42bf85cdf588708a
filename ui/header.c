/* header.c - compose the header lines from a snapshot. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "header.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "push_status.h"
#include "text.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define SEGMENT_MAX 96

/* Below this many columns for the command, drop the Python version. */
#define COMMAND_MIN_COLS 12

void header_left_right(const char *left, const char *right, int width,
                       bool utf8, char *buf, size_t size)
{
	char l[HEADER_LINE_MAX], r[HEADER_LINE_MAX];
	int rw, lw, pad;

	if (width < 0) {
		text_fit(l, sizeof l, left, -1, TEXT_CUT_RIGHT, utf8);
		text_fit(r, sizeof r, right, -1, TEXT_CUT_RIGHT, utf8);
		snprintf(buf, size, "%s%s%s", l, right[0] != '\0' ? "  " : "",
		         r);
		return;
	}
	rw = text_fit(r, sizeof r, right, width, TEXT_CUT_RIGHT, utf8);
	/* Keep one blank between the two halves. */
	lw = text_fit(l, sizeof l, left, rw > 0 ? width - rw - 1 : width,
	              TEXT_CUT_RIGHT, utf8);
	pad = width - lw - rw;
	snprintf(buf, size, "%s%*s%s", l, pad > 0 ? pad : 0, "", r);
}

static void format_clock(double secs, char *buf, size_t size)
{
	long t = secs > 0 ? (long)secs : 0;

	snprintf(buf, size, "%02ld:%02ld:%02ld", t / 3600, t / 60 % 60,
	         t % 60);
}

void header_identity(const struct snapshot *s, int width, bool utf8,
                     char *buf, size_t size)
{
	char left[HEADER_LINE_MAX], right[320], clock[32], cmd[HEADER_LINE_MAX], how[32] = "";
	char push[128], push_short[64];
	const char *py = s->python_version[0] != '\0' ? s->python_version : "?";
	const char *kind = "Python ";

	if (s->native && s->python_version[0] == '\0') {
		kind = ""; /* --native on a process without Python */
		py = "native";
	}
	const char *command = s->command[0] != '\0' ? s->command : "?";
	int lw, room;

	format_clock(s->elapsed_s, clock, sizeof clock);
	if (s->replay.on)
		snprintf(left, sizeof left, "REPLAY %.1f-%.1f s  pid %d  ", s->replay.from_s,
		         s->replay.to_s, (int)s->pid);
	else
		snprintf(left, sizeof left, "pytop %s  pid %d  ", PACKAGE_VERSION,
		         (int)s->pid);
	lw = text_width(left, utf8);
	/* Narrow screens give up the Python version, then the clock, before
	 * the command shrinks below COMMAND_MIN_COLS; --push's health stays
	 * longest, in its short form at the end. */
	push_status_text(&s->push, s->time_us / 1000000, false, push,
	                      sizeof push);
	push_status_text(&s->push, s->time_us / 1000000, true, push_short,
	                      sizeof push_short);
	/* --native: how native stacks are taken (perf stops nothing). */
	if (s->native && s->native_method != NULL && s->native_method[0] != '\0')
		snprintf(how, sizeof how, "  native: %s", s->native_method);
	for (int step = 0; step < 5; step++) {
		const char *p = step < 2 ? push : push_short;
		const char *sep = p[0] != '\0' ? "   " : "";

		if (step == 0)
			snprintf(right, sizeof right, "%s%s%s%s%s   %s elapsed", p, sep,
			         kind, py, how, clock);
		else if (step < 3)
			snprintf(right, sizeof right, "%s%s%s elapsed", p, sep, clock);
		else if (step == 3)
			snprintf(right, sizeof right, "%s", p);
		else
			right[0] = '\0';
		room = width - lw - (right[0] ? text_width(right, utf8) + 3 : 0);
		if (width < 0 || room >= COMMAND_MIN_COLS)
			break;
	}
	text_fit(cmd, sizeof cmd, command, width < 0 ? -1 : room > 1 ? room : 1,
	         TEXT_CUT_RIGHT, utf8);
	/* cmd and left have the same size, so this cannot overflow. */
	strncat(left, cmd, sizeof left - strlen(left) - 1);
	if (width < 0) {
		snprintf(buf, size, "%s   %s", left, right);
		return;
	}
	header_left_right(left, right, width, utf8, buf, size);
}

static double share_pct(uint64_t part, uint64_t rest)
{
	uint64_t all = part + rest;

	return all > 0 ? 100.0 * (double)part / (double)all : 0.0;
}

/* The health line's pieces, in display order. */
enum segment {
	SEG_SAMPLES, SEG_RATE, SEG_ERRORS, SEG_DROPPED, SEG_DEEP, SEG_RECORD, SEG_THREADS,
	SEG_PROCESSES, SEG_GIL, SEG_ACTIVE, SEG_PYTOP, NSEGMENTS
};

struct segments {
	char text[NSEGMENTS][SEGMENT_MAX];
	bool shown[NSEGMENTS];
};

/* Samples of every thread.  Under a thread (or process) filter
 * s->samples is the thread's; the health line is about all of sampling,
 * so it adds up the threads' counts instead (those include samples
 * without a Python frame, which s->samples leaves out). */
static uint64_t all_samples(const struct snapshot *s)
{
	uint64_t n = 0;

	if (s->thread_filter == 0 && s->process_filter == 0)
		return s->samples;
	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].samples;
	return n;
}

/* The sampler falls clearly behind the requested rate (--native stops
 * and unwinds every thread, which takes time on busy machines). */
static bool rate_not_held(const struct snapshot *s)
{
	return s->elapsed_s > 1.5 && s->window_s > 0.5 && !s->target_exited &&
	       s->rate_hz < 0.8 * s->requested_hz;
}

/* -s: the processes of the family still running (the target too). */
static size_t live_processes(const struct snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nprocesses; i++)
		n += s->processes[i].state != PROCESS_EXITED;
	return n;
}

/* The error share and why: "err 2.1% torn 1.8 code 0.3" (the two most
 * frequent kinds, in percentage points of the same whole), or in the short
 * form only the most frequent kind, "err 2.1% torn". */
static void error_segment(const struct snapshot *s, uint64_t samples,
                          bool short_forms, char *buf, size_t size)
{
	int first = 0, second = 0;
	size_t pos;

	pos = (size_t)snprintf(buf, size, "err %.1f%%", share_pct(s->errors, samples));
	for (int k = SAMPLE_ERR_NONE + 1; k < SAMPLE_ERR_KINDS; k++) {
		if (s->errors_by_kind[k] == 0)
			continue;
		if (first == 0 || s->errors_by_kind[k] > s->errors_by_kind[first]) {
			second = first;
			first = k;
		} else if (second == 0 || s->errors_by_kind[k] > s->errors_by_kind[second]) {
			second = k;
		}
	}
	if (first == 0 || pos >= size)
		return;
	if (short_forms) {
		snprintf(buf + pos, size - pos, " %s",
		         sample_error_word((enum sample_error)first));
		return;
	}
	for (int i = 0, k = first; i < 2 && k != 0 && pos < size; i++, k = second)
		pos += (size_t)snprintf(buf + pos, size - pos, " %s %.1f",
		                        sample_error_word((enum sample_error)k),
		                        100.0 * (double)s->errors_by_kind[k] /
		                        (double)(s->errors + samples));
}

static void health_segments(const struct snapshot *s, bool short_forms,
                            struct segments *g)
{
	uint64_t samples = all_samples(s);
	char n[32];

	text_thousands(n, sizeof n, samples);
	/* The rate asked for stays beside the warning that it is not held. */
	if (short_forms && !rate_not_held(s))
		snprintf(g->text[SEG_SAMPLES], SEGMENT_MAX,
		         "Samples %s (%.0f/s)", n, s->rate_hz);
	else
		snprintf(g->text[SEG_SAMPLES], SEGMENT_MAX,
		         "Samples %s (%.0f/s of %d)", n, s->rate_hz,
		         s->requested_hz);
	snprintf(g->text[SEG_RATE], SEGMENT_MAX, "%s", !rate_not_held(s) ? ""
	         : short_forms ? "rate not held" : "rate not held: lower -r");
	error_segment(s, samples, short_forms, g->text[SEG_ERRORS], SEGMENT_MAX);
	snprintf(g->text[SEG_DROPPED], SEGMENT_MAX, "drop %.1f%%",
	         share_pct(s->dropped, samples));
	text_thousands(n, sizeof n, s->deep_cut);
	snprintf(g->text[SEG_DEEP], SEGMENT_MAX, short_forms ? "deep cut %s"
	         : "deep stacks cut: %s", n);
	/* -w / pytop record: buckets merged because the disk was behind, or
	 * the recording stopped. */
	if (s->record_failed)
		snprintf(g->text[SEG_RECORD], SEGMENT_MAX, "REC STOPPED");
	else if (s->record_merged > 0)
		snprintf(g->text[SEG_RECORD], SEGMENT_MAX, "rec merged %llu",
		         (unsigned long long)s->record_merged);
	else
		snprintf(g->text[SEG_RECORD], SEGMENT_MAX, "rec");
	/* "Python threads": the gauges count OS threads. */
	snprintf(g->text[SEG_THREADS], SEGMENT_MAX, "Py threads %d/%d",
	         s->threads_running, s->threads_total);
	snprintf(g->text[SEG_PROCESSES], SEGMENT_MAX, "procs %zu",
	         live_processes(s));
	snprintf(g->text[SEG_GIL], SEGMENT_MAX, "GIL %.0f%%", s->gil_held_pct);
	snprintf(g->text[SEG_ACTIVE], SEGMENT_MAX, "active %.0f%%",
	         s->active_pct);
	snprintf(g->text[SEG_PYTOP], SEGMENT_MAX, short_forms
	         ? "pytop %.1f%%" : "pytop %.1f%% CPU", s->pytop_cpu_pct);
	if (!s->replay.on)
		return;
	/* Not in a recording: said, not shown as 0. */
	snprintf(g->text[SEG_THREADS], SEGMENT_MAX, "Py threads ?/%d", s->threads_total);
	snprintf(g->text[SEG_GIL], SEGMENT_MAX, "GIL ?");
	snprintf(g->text[SEG_ACTIVE], SEGMENT_MAX, "active ?");
	snprintf(g->text[SEG_PYTOP], SEGMENT_MAX, short_forms ? "pytop ?" : "pytop ? CPU");
}

/* Join the shown segments with two blanks. */
static void join(const struct segments *g, char *buf, size_t size)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = 0; i < NSEGMENTS && pos < size; i++)
		if (g->shown[i])
			pos += (size_t)snprintf(buf + pos, size - pos, "%s%s",
			                        pos > 0 ? "  " : "", g->text[i]);
}

static bool fits(const struct segments *g, int width, bool utf8)
{
	char tmp[HEADER_LINE_MAX];

	join(g, tmp, sizeof tmp);
	return width < 0 || text_width(tmp, utf8) <= width;
}

/* A share printed with one decimal reads as more than "0.0". */
static bool shows_nonzero(double pct)
{
	return pct >= 0.05;
}

/* Make the line fit one row by giving up the least telling pieces first:
 * error and drop shares that print as 0.0%, the long forms, pytop's
 * own CPU, the thread count, the process count (-s), then the error and
 * drop shares.  The sample count and rate, the warning that the rate is
 * not held, GIL and active shares always stay (and wrap onto a second
 * row before anything is cut).  Returns whether the line fits now. */
static bool shrink_to_fit(const struct snapshot *s, struct segments *g,
                          int width, bool utf8)
{
	static const enum segment drop_order[] = {
		SEG_PYTOP, SEG_THREADS, SEG_PROCESSES, SEG_DEEP, SEG_DROPPED, SEG_ERRORS,
		SEG_RECORD,
	};

	if (fits(g, width, utf8))
		return true;
	g->shown[SEG_ERRORS] = shows_nonzero(share_pct(s->errors,
	                                               all_samples(s)));
	g->shown[SEG_DROPPED] = shows_nonzero(share_pct(s->dropped,
	                                                all_samples(s)));
	if (fits(g, width, utf8))
		return true;
	health_segments(s, true, g);
	for (size_t i = 0; i < sizeof drop_order / sizeof drop_order[0]; i++) {
		if (fits(g, width, utf8))
			return true;
		g->shown[drop_order[i]] = false;
	}
	return fits(g, width, utf8);
}

int header_health(const struct snapshot *s, int width, bool utf8,
                  char lines[][HEADER_LINE_MAX], int max_lines)
{
	struct segments g;
	char tmp[HEADER_LINE_MAX];
	int nlines = 0, from = 0;

	lines[0][0] = '\0';
	health_segments(s, false, &g);
	for (int i = 0; i < NSEGMENTS; i++)
		g.shown[i] = true;
	g.shown[SEG_RATE] = rate_not_held(s);
	g.shown[SEG_PROCESSES] = s->following;
	g.shown[SEG_DEEP] = s->deep_cut > 0; /* only where stacks were cut */
	g.shown[SEG_RECORD] = s->recording;
	if (shrink_to_fit(s, &g, width, utf8) || max_lines < 2) {
		join(&g, tmp, sizeof tmp);
		text_fit(lines[0], HEADER_LINE_MAX, tmp, width,
		         TEXT_CUT_RIGHT, utf8);
		return 1;
	}
	/* Too narrow even so: greedy wrap, whole segments per line. */
	while (from < NSEGMENTS && nlines < max_lines) {
		struct segments line = g;
		int to;

		for (int i = 0; i < NSEGMENTS; i++)
			line.shown[i] = false;
		for (to = from; to < NSEGMENTS; to++) {
			line.shown[to] = g.shown[to];
			if (to > from && !fits(&line, width, utf8) &&
			    nlines < max_lines - 1) {
				line.shown[to] = false;
				break;
			}
		}
		join(&line, tmp, sizeof tmp);
		if (tmp[0] != '\0')
			text_fit(lines[nlines++], HEADER_LINE_MAX, tmp, width,
			         TEXT_CUT_RIGHT, utf8);
		from = to;
	}
	return nlines > 0 ? nlines : 1;
}

/* --native: which packages would name the "module+0x..." rows. */
static void symbols_note(const struct snapshot *s, char *buf, size_t size)
{
	if (s->debug_packages[0] != '\0')
		snprintf(buf, size, " [no symbols: install %s]", s->debug_packages);
	else
		buf[0] = '\0';
}

void header_exit_note(const struct snapshot *s, char *buf, size_t size)
{
	char syms[192];
	size_t len;

	header_exit_state(s, buf, size);
	symbols_note(s, syms, sizeof syms);
	len = strlen(buf);
	/* Without an exit note the symbols note needs no leading blank. */
	snprintf(buf + len, size - len, "%s", len > 0 ? syms : syms + (syms[0] == ' '));
}

void header_exit_state(const struct snapshot *s, char *buf, size_t size)
{
	if (!s->target_exited && s->target_exec)
		snprintf(buf, size, "[target ran exec: new program not sampled]");
	else if (!s->target_exited)
		snprintf(buf, size, "%s", "");
	else if (s->exit_status < 0)
		snprintf(buf, size, "[target exited, status unknown]");
	else
		snprintf(buf, size, "[target exited, status %d]",
		         s->exit_status);
}

/* ---- gauges ------------------------------------------------------------ */

void gauge_history_push(struct gauge_history *h, const struct snapshot *s)
{
	const struct snap_gauges *g = &s->gauges;

	if (!g->valid)
		return;
	sparkline_push(&h->cpu_user, g->cpu_user_pct);
	sparkline_push(&h->cpu_sys, g->cpu_system_pct);
	sparkline_push(&h->threads, (double)g->threads);
	sparkline_push(&h->rss, (double)g->rss);
	sparkline_push(&h->minflt, g->minflt_rate);
	sparkline_push(&h->majflt, g->majflt_rate);
}

void gauge_history_replay(struct gauge_history *h, const struct snapshot *s)
{
	struct snapshot one; /* only its gauges are read */

	memset(&one, 0, sizeof one);
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < s->replay.nhistory && i < SNAP_REPLAY_HISTORY; i++) {
		one.gauges = s->replay.history[i];
		gauge_history_push(h, &one);
	}
}

/* A piece of a gauge line: its text, maybe a shorter form, maybe a
 * sparkline after it. */
struct gauge_item {
	char text[SEGMENT_MAX];
	char short_text[SEGMENT_MAX];   /* "" = none */
	const struct sparkline *spark;  /* NULL = none */
	double floor;                   /* the sparkline's least full scale */
	bool shown, spark_shown;
};

enum gauge_id {
	G_USR, G_SYS, G_THREADS, G_BAR, G_RSS, G_GROWTH, G_PEAK, G_MINFLT, G_MAJFLT,
	NGAUGES
};

/* One way to make a line narrower. */
enum shrink { SHRINK_FORM, SHRINK_SPARK, SHRINK_ITEM };

struct shrink_step {
	enum gauge_id id;
	enum shrink what;
};

/* Least telling first: the long form of the RSS limit, the sparklines
 * from the thread count's to the user CPU's, then the peak, the thread
 * count and the RSS growth rate.  Steps for items not on a line are
 * skipped. */
static const struct shrink_step shrink_order[] = {
	{ G_RSS, SHRINK_FORM },     { G_THREADS, SHRINK_SPARK },
	{ G_MAJFLT, SHRINK_SPARK }, { G_SYS, SHRINK_SPARK },
	{ G_MINFLT, SHRINK_SPARK }, { G_RSS, SHRINK_SPARK },
	{ G_USR, SHRINK_SPARK },    { G_PEAK, SHRINK_ITEM },
	{ G_THREADS, SHRINK_ITEM },  { G_GROWTH, SHRINK_ITEM },
};

static void set_item(struct gauge_item *it, const struct sparkline *spark,
                     double floor)
{
	it->spark = spark;
	it->floor = floor;
	it->shown = true;
	it->spark_shown = spark != NULL;
}

static void rss_texts(const struct snap_gauges *g, struct gauge_item *it)
{
	char rss[16], limit[16];

	text_bytes(rss, sizeof rss, g->rss);
	text_bytes(limit, sizeof limit, g->mem_limit);
	if (g->mem_limit == 0) {
		snprintf(it->text, SEGMENT_MAX, "RSS %s", rss);
		return;
	}
	snprintf(it->text, SEGMENT_MAX, "RSS %s (%.0f%% of %s)", rss,
	         100.0 * (double)g->rss / (double)g->mem_limit, limit);
	snprintf(it->short_text, SEGMENT_MAX, "RSS %s (%.0f%%)", rss,
	         100.0 * (double)g->rss / (double)g->mem_limit);
}

/* "+12M/min": the RSS growth rate over the last minute, signed. */
static void growth_text(const struct snap_gauges *g, struct gauge_item *it)
{
	double rate = g->rss_growth_per_min;
	char n[16];

	text_bytes(n, sizeof n, (unsigned long long)(rate < 0 ? -rate : rate));
	snprintf(it->text, SEGMENT_MAX, "%s%s/min", rate < 0 ? "-" : "+", n);
}

/* Every gauge item, all shown; h NULL = no sparklines. */
static void gauge_items(const struct snapshot *s,
                        const struct gauge_history *h, bool utf8,
                        struct gauge_item it[NGAUGES])
{
	const struct snap_gauges *g = &s->gauges;
	char n[16];

	memset(it, 0, NGAUGES * sizeof *it);
	snprintf(it[G_USR].text, SEGMENT_MAX, "CPU usr %.0f%%",
	         g->cpu_user_pct);
	if (g->cpu_limit > 0) { /* a container's quota, in % of one CPU too */
		memcpy(it[G_USR].short_text, it[G_USR].text, SEGMENT_MAX);
		snprintf(it[G_USR].text, SEGMENT_MAX, "CPU usr %.0f%% (limit %.0f%%)",
		         g->cpu_user_pct, 100.0 * g->cpu_limit);
	}
	set_item(&it[G_USR], h != NULL ? &h->cpu_user : NULL, 100.0);
	snprintf(it[G_SYS].text, SEGMENT_MAX, "sys %.0f%%", g->cpu_system_pct);
	set_item(&it[G_SYS], h != NULL ? &h->cpu_sys : NULL, 100.0);
	/* "OS threads": the health line counts Python threads. */
	snprintf(it[G_THREADS].text, SEGMENT_MAX, "OS threads %d", g->threads);
	set_item(&it[G_THREADS], h != NULL ? &h->threads : NULL, 1.0);
	snprintf(it[G_BAR].text, SEGMENT_MAX, "%s", utf8 ? "\u2502" : "|");
	set_item(&it[G_BAR], NULL, 0);
	rss_texts(g, &it[G_RSS]);
	set_item(&it[G_RSS], h != NULL ? &h->rss : NULL, 1.0);
	growth_text(g, &it[G_GROWTH]);
	set_item(&it[G_GROWTH], NULL, 0);
	text_bytes(n, sizeof n, g->rss_peak);
	snprintf(it[G_PEAK].text, SEGMENT_MAX, "peak %s", n);
	set_item(&it[G_PEAK], NULL, 0);
	text_compact(n, sizeof n, g->minflt_rate);
	snprintf(it[G_MINFLT].text, SEGMENT_MAX, "minflt %s/s", n);
	set_item(&it[G_MINFLT], h != NULL ? &h->minflt : NULL, 1.0);
	text_compact(n, sizeof n, g->majflt_rate);
	snprintf(it[G_MAJFLT].text, SEGMENT_MAX, "majflt %s/s", n);
	set_item(&it[G_MAJFLT], h != NULL ? &h->majflt : NULL, 1.0);
}

/* Items [from, to) of it make a line. */
struct gauge_line {
	struct gauge_item *it;
	int from, to;
};

/* Columns of the line's text without its sparklines (a blank before each
 * shown one included), and how many sparklines are shown. */
static int line_text_width(const struct gauge_line *l, bool utf8,
                           int *nsparks)
{
	int w = 0, shown = 0;

	*nsparks = 0;
	for (int i = l->from; i < l->to; i++) {
		const struct gauge_item *it = &l->it[i];

		if (!it->shown)
			continue;
		w += text_width(it->text, utf8) + (shown++ > 0 ? 2 : 0);
		if (it->spark_shown) {
			w++;
			(*nsparks)++;
		}
	}
	return w;
}

/* Columns each sparkline gets: the spare columns shared out, at most the
 * history; < SPARK_MIN_COLS means the line is too full for them. */
static int spark_cols(const struct gauge_line *l, int width, bool utf8)
{
	int nsparks, w = line_text_width(l, utf8, &nsparks), cols;

	if (nsparks == 0)
		return w <= width ? SPARKLINE_HISTORY : -1;
	cols = (width - w) / nsparks;
	return cols < SPARKLINE_HISTORY ? cols : SPARKLINE_HISTORY;
}

static bool line_has(const struct gauge_line *l, enum gauge_id id)
{
	return (int)id >= l->from && (int)id < l->to;
}

static void apply_shrink(struct gauge_line *l, const struct shrink_step *st)
{
	struct gauge_item *it = &l->it[st->id];

	switch (st->what) {
	case SHRINK_FORM:
		if (it->short_text[0] != '\0')
			memcpy(it->text, it->short_text, sizeof it->text);
		break;
	case SHRINK_SPARK:
		it->spark_shown = false;
		break;
	case SHRINK_ITEM:
		it->shown = false;
		break;
	}
}

/* Give up pieces in shrink_order until the sparklines get their minimum
 * width (or there are none and the text fits).  Returns the columns per
 * sparkline. */
static int shrink_line(struct gauge_line *l, int width, bool utf8)
{
	size_t step = 0;
	int cols;

	while ((cols = spark_cols(l, width, utf8)) < SPARK_MIN_COLS &&
	       step < sizeof shrink_order / sizeof shrink_order[0]) {
		if (line_has(l, shrink_order[step].id))
			apply_shrink(l, &shrink_order[step]);
		step++;
	}
	return cols;
}

static void render_line(const struct gauge_line *l, int cols, bool utf8,
                        char *buf, size_t size)
{
	char spark[SPARKLINE_HISTORY * 4 + 1];
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = l->from; i < l->to && pos < size; i++) {
		const struct gauge_item *it = &l->it[i];

		if (!it->shown)
			continue;
		spark[0] = '\0';
		if (it->spark_shown)
			sparkline_draw(it->spark, cols, it->floor, utf8, spark,
			               sizeof spark);
		pos += (size_t)snprintf(buf + pos, size - pos, "%s%s%s%s",
		                        pos > 0 ? "  " : "", it->text,
		                        spark[0] != '\0' ? " " : "", spark);
	}
}

/* Items [from, to) as one line of at most width columns (< 0: no
 * limit, no sparklines). */
static void gauge_line(struct gauge_item *it, int from, int to, int width,
                       bool utf8, char *buf, size_t size)
{
	struct gauge_line l = { it, from, to };
	char tmp[HEADER_LINE_MAX];
	int cols = 0;

	if (width < 0)
		for (int i = from; i < to; i++)
			it[i].spark_shown = false;
	else
		cols = shrink_line(&l, width, utf8);
	render_line(&l, cols, utf8, tmp, sizeof tmp);
	text_fit(buf, size, tmp, width, TEXT_CUT_RIGHT, utf8);
}

void header_verdict(const struct snapshot *s, bool utf8, char *buf,
                    size_t size)
{
	const char *word = snapshot_verdict_word(s->verdict);
	const char *dash = utf8 ? " \u2014 " : " - ";

	if (s->replay.on)
		word = "not in a recording";
	else if (word == NULL || word[0] == '\0')
		word = "none yet";
	snprintf(buf, size, "Verdict: %s%s%s", word,
	         s->verdict_reason[0] != '\0' ? dash : "", s->verdict_reason);
}

int header_gauges(const struct snapshot *s, const struct gauge_history *h,
                  int width, bool utf8, char lines[][HEADER_LINE_MAX],
                  int max_lines)
{
	struct gauge_item it[NGAUGES];
	char verdict[HEADER_LINE_MAX], tmp[HEADER_LINE_MAX];
	bool one = width < 0 || width >= GAUGES_ONE_LINE_COLS;
	int n = 0;

	if (!s->gauges.valid || max_lines < 1)
		return 0;
	gauge_items(s, h, utf8, it);
	header_verdict(s, utf8, verdict, sizeof verdict);
	if (width < 0) {
		char joined[3 * HEADER_LINE_MAX];

		gauge_line(it, 0, NGAUGES, width, utf8, tmp, sizeof tmp);
		snprintf(joined, sizeof joined, "%s  %s  %s", tmp,
		         it[G_BAR].text, verdict);
		text_fit(lines[0], HEADER_LINE_MAX, joined, -1, TEXT_CUT_RIGHT,
		         utf8);
		return 1;
	}
	if (max_lines >= 2)
		gauge_line(it, 0, one ? NGAUGES : G_BAR, width, utf8,
		           lines[n++], HEADER_LINE_MAX);
	if (!one && max_lines >= 3)
		gauge_line(it, G_RSS, NGAUGES, width, utf8, lines[n++],
		           HEADER_LINE_MAX);
	text_fit(lines[n++], HEADER_LINE_MAX, verdict, width, TEXT_CUT_RIGHT,
	         utf8);
	return n;
}

int header_tui(const struct snapshot *s, const struct gauge_history *h,
               int width, int rows, bool utf8,
               char lines[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX])
{
	/* Identity and health leave two rows: what they always did. */
	int base = rows - 2 < 3 ? rows - 2 : 3;
	int n, room;

	if (base < 1)
		return 0;
	header_identity(s, width, utf8, lines[0], HEADER_LINE_MAX);
	n = 1;
	if (base > 1)
		n += header_health(s, width, utf8, &lines[1], base - 1);
	room = rows - n - HEADER_TABLE_MIN_ROWS;
	if (room > HEADER_TUI_MAX_LINES - n)
		room = HEADER_TUI_MAX_LINES - n;
	if (room > 0)
		n += header_gauges(s, h, width, utf8, &lines[n], room);
	return n;
}
