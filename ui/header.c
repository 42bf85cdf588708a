/* header.c - compose the header lines from a snapshot. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "header.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define NSEGMENTS 5
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

static void health_segments(const struct snapshot *s,
                            char seg[NSEGMENTS][SEGMENT_MAX])
{
	char n[32];

	text_thousands(n, sizeof n, s->samples);
	snprintf(seg[0], SEGMENT_MAX, "Samples %s (%.0f/s of %d)", n,
	         s->rate_hz, s->requested_hz);
	snprintf(seg[1], SEGMENT_MAX, "err %.1f%%",
	         share_pct(s->errors, s->samples));
	snprintf(seg[2], SEGMENT_MAX, "drop %.1f%%",
	         share_pct(s->dropped, s->samples));
	snprintf(seg[3], SEGMENT_MAX, "threads %d/%d", s->threads_running,
	         s->threads_total);
	snprintf(seg[4], SEGMENT_MAX, "pytop %.1f%% CPU", s->pytop_cpu_pct);
}

/* Join segments [from, to) with sep. */
static void join(char seg[NSEGMENTS][SEGMENT_MAX], int from, int to,
                 const char *sep, char *buf, size_t size)
{
	size_t pos = 0;

	buf[0] = '\0';
	for (int i = from; i < to && pos < size; i++)
		pos += (size_t)snprintf(buf + pos, size - pos, "%s%s",
		                        i > from ? sep : "", seg[i]);
}

int header_health(const struct snapshot *s, int width, bool utf8,
                  char lines[][HEADER_LINE_MAX], int max_lines)
{
	char seg[NSEGMENTS][SEGMENT_MAX], tmp[HEADER_LINE_MAX];
	int nlines = 0, from = 0;

	health_segments(s, seg);
	join(seg, 0, NSEGMENTS, "  ", tmp, sizeof tmp);
	if (width < 0 || text_width(tmp, utf8) <= width || max_lines < 2) {
		text_fit(lines[0], HEADER_LINE_MAX, tmp, width,
		         TEXT_CUT_RIGHT, utf8);
		return 1;
	}
	/* Too narrow: greedy wrap, whole segments per line. */
	while (from < NSEGMENTS && nlines < max_lines) {
		int to = from + 1;

		for (; to < NSEGMENTS; to++) {
			join(seg, from, to + 1, "  ", tmp, sizeof tmp);
			if (text_width(tmp, utf8) > width)
				break;
		}
		if (nlines == max_lines - 1)
			to = NSEGMENTS; /* last line: the rest, cut */
		join(seg, from, to, "  ", tmp, sizeof tmp);
		text_fit(lines[nlines++], HEADER_LINE_MAX, tmp, width,
		         TEXT_CUT_RIGHT, utf8);
		from = to;
	}
	return nlines;
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
