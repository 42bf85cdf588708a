/* header.h - the facts at the top of every refresh: what is profiled, and
 * how well sampling is going.  Plain text, so the TUI and the batch text
 * output print the same header; the TUI adds only attributes. */
#ifndef PYTOP_UI_HEADER_H
#define PYTOP_UI_HEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"
#include "sparkline.h"

#define HEADER_LINE_MAX 1024 /* bytes per formatted header line */

/* The TUI header: identity, up to two health lines, up to three gauge
 * lines. */
#define HEADER_TUI_MAX_LINES 6

/* Rows the gauge lines leave below the header for the table (its
 * description and title rows and six rows) and the key legend. */
#define HEADER_TABLE_MIN_ROWS 9

/* The recent values of each gauge, one per refreshed snapshot: what the
 * sparklines draw.  Zero-initialised = empty; owned by the TUI loop. */
struct gauge_history {
	struct sparkline cpu_user, cpu_sys, threads;
	struct sparkline rss, minflt, majflt;
};

/* Append s's gauges (nothing when !s->gauges.valid). */
void gauge_history_push(struct gauge_history *h, const struct snapshot *s);

/* pytop replay: h becomes the history s carries (snap_replay.history),
 * since a replay's position jumps. */
void gauge_history_replay(struct gauge_history *h, const struct snapshot *s);

/* width is the line width in columns; < 0 means unlimited (batch). */

/* "pytop 0.1.0  pid 4242  python3 app.py   Python 3.11.7   00:01:37
 * elapsed", the command cut to fit. */
void header_identity(const struct snapshot *s, int width, bool utf8,
                     char *buf, size_t size);

/* "Samples 97,004 (998/s of 1000)  err 0.0%  drop 0.0%  threads 3/5
 * GIL 45%  active 97%  pytop 1.9% CPU", with "procs 3" (the family's
 * running processes) after the threads under -s.  When that is wider than
 * width, the least telling pieces go first (err and drop shares of 0.0%,
 * long forms, pytop's CPU, the thread count, the process count, err and
 * drop) so that 80 columns
 * take one line; only what still does not fit is wrapped into at most
 * max_lines lines.  Under a thread filter the sample count is still every
 * thread's.  Returns the number of lines written (>= 1). */
int header_health(const struct snapshot *s, int width, bool utf8,
                  char lines[][HEADER_LINE_MAX], int max_lines);

/* The gauges and the verdict, nothing (0 lines) when !s->gauges.valid:
 *   CPU usr 92% ▁▂▅▇█  sys 6% ▁▁▂  threads 5 ▁▁▁
 *   RSS 1.2G (15% of 7.8G) ▂▃▅▇  peak 1.4G  minflt 120/s ▁▃▂  majflt 0.0/s
 *   Verdict: CPU-bound — user 97% of 1.0 busy thread
 * From GAUGES_ONE_LINE_COLS columns on, the CPU and memory gauges share
 * one line.  Each line fits width: the sparklines of a line share its
 * spare columns (at most SPARKLINE_HISTORY each); when they would get
 * fewer than SPARK_MIN_COLS, the least telling go first (threads,
 * majflt, sys, minflt, RSS, usr), after the RSS limit's long form; then
 * the peak and the thread count.  With max_lines < 3 the verdict stays
 * first, then the CPU line.  h NULL = no sparklines.  width < 0 (batch):
 * one line, everything but the sparklines, the verdict at its end.
 * Returns the number of lines written. */
#define GAUGES_ONE_LINE_COLS 160
#define SPARK_MIN_COLS 6
int header_gauges(const struct snapshot *s, const struct gauge_history *h,
                  int width, bool utf8, char lines[][HEADER_LINE_MAX],
                  int max_lines);

/* "Verdict: CPU-bound — user 97% of 1.0 busy thread" (" - " without
 * UTF-8); "Verdict: none yet" while the engine cannot say. Not cut. */
void header_verdict(const struct snapshot *s, bool utf8, char *buf,
                    size_t size);

/* The whole TUI header for a screen of width x rows: the identity line
 * and the health lines as long as two rows remain below them (at most
 * three lines), then the gauge lines as long as HEADER_TABLE_MIN_ROWS
 * rows remain.  Returns the number of lines written (0 when rows < 3):
 * the row where the table starts. */
int header_tui(const struct snapshot *s, const struct gauge_history *h,
               int width, int rows, bool utf8,
               char lines[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX]);

/* "[target exited, status N]" once the target has exited, else "". */
void header_exit_state(const struct snapshot *s, char *buf, size_t size);
/* The same, then with --native "[no symbols: install PACKAGES]" when
 * debug symbols would name functions shown as "module+0x...". */
void header_exit_note(const struct snapshot *s, char *buf, size_t size);

/* left, then right pushed to the right edge of width (or after two
 * spaces when unlimited).  The left text is cut first when both do not
 * fit. */
void header_left_right(const char *left, const char *right, int width,
                       bool utf8, char *buf, size_t size);

#endif
