/* header.c - compose the header lines from a snapshot. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "header.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
	char left[HEADER_LINE_MAX], right[96], clock[32], cmd[HEADER_LINE_MAX];
	const char *py = s->python_version[0] != '\0' ? s->python_version : "?";
	const char *command = s->command[0] != '\0' ? s->command : "?";
	int lw, room;

	format_clock(s->elapsed_s, clock, sizeof clock);
	snprintf(left, sizeof left, "pytop %s  pid %d  ", PACKAGE_VERSION,
	         (int)s->pid);
	lw = text_width(left, utf8);
	/* Narrow screens give up the Python version, then the clock, before
	 * the command shrinks below COMMAND_MIN_COLS. */
	snprintf(right, sizeof right, "Python %s   %s elapsed", py, clock);
	room = width - lw - text_width(right, utf8) - 3;
	if (width >= 0 && room < COMMAND_MIN_COLS) {
		snprintf(right, sizeof right, "%s elapsed", clock);
		room = width - lw - text_width(right, utf8) - 3;
	}
	if (width >= 0 && room < COMMAND_MIN_COLS) {
		right[0] = '\0';
		room = width - lw;
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
	SEG_SAMPLES, SEG_ERRORS, SEG_DROPPED, SEG_THREADS, SEG_GIL, SEG_ACTIVE,
	SEG_PYTOP, NSEGMENTS
};

struct segments {
	char text[NSEGMENTS][SEGMENT_MAX];
	bool shown[NSEGMENTS];
};

/* Samples of every thread.  Under a thread filter s->samples is the
 * thread's; the health line is about all of sampling, so it adds up the
 * threads' counts instead (those include samples without a Python frame,
 * which s->samples leaves out). */
static uint64_t all_samples(const struct snapshot *s)
{
	uint64_t n = 0;

	if (s->thread_filter == 0)
		return s->samples;
	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].samples;
	return n;
}

static void health_segments(const struct snapshot *s, bool short_forms,
                            struct segments *g)
{
	uint64_t samples = all_samples(s);
	char n[32];

	text_thousands(n, sizeof n, samples);
	if (short_forms)
		snprintf(g->text[SEG_SAMPLES], SEGMENT_MAX,
		         "Samples %s (%.0f/s)", n, s->rate_hz);
	else
		snprintf(g->text[SEG_SAMPLES], SEGMENT_MAX,
		         "Samples %s (%.0f/s of %d)", n, s->rate_hz,
		         s->requested_hz);
	snprintf(g->text[SEG_ERRORS], SEGMENT_MAX, "err %.1f%%",
	         share_pct(s->errors, samples));
	snprintf(g->text[SEG_DROPPED], SEGMENT_MAX, "drop %.1f%%",
	         share_pct(s->dropped, samples));
	snprintf(g->text[SEG_THREADS], SEGMENT_MAX, "threads %d/%d",
	         s->threads_running, s->threads_total);
	snprintf(g->text[SEG_GIL], SEGMENT_MAX, "GIL %.0f%%", s->gil_held_pct);
	snprintf(g->text[SEG_ACTIVE], SEGMENT_MAX, "active %.0f%%",
	         s->active_pct);
	snprintf(g->text[SEG_PYTOP], SEGMENT_MAX, short_forms
	         ? "pytop %.1f%%" : "pytop %.1f%% CPU", s->pytop_cpu_pct);
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
 * own CPU, the thread count, then the error and drop shares.  The sample
 * count and rate, GIL and active shares always stay.  Returns whether the
 * line fits now. */
static bool shrink_to_fit(const struct snapshot *s, struct segments *g,
                          int width, bool utf8)
{
	static const enum segment drop_order[] = {
		SEG_PYTOP, SEG_THREADS, SEG_DROPPED, SEG_ERRORS,
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

void header_exit_note(const struct snapshot *s, char *buf, size_t size)
{
	if (!s->target_exited)
		snprintf(buf, size, "%s", "");
	else if (s->exit_status < 0)
		snprintf(buf, size, "[target exited, status unknown]");
	else
		snprintf(buf, size, "[target exited, status %d]",
		         s->exit_status);
}
