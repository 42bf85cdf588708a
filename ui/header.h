/* header.h - the facts at the top of every refresh: what is profiled, and
 * how well sampling is going.  Plain text, so the TUI and the batch text
 * output print the same header; the TUI adds only attributes. */
#ifndef PYTOP_UI_HEADER_H
#define PYTOP_UI_HEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

#define HEADER_LINE_MAX 1024 /* bytes per formatted header line */

/* width is the line width in columns; < 0 means unlimited (batch). */

/* "pytop 0.1.0  pid 4242  python3 app.py   Python 3.11.7   00:01:37
 * elapsed", the command cut to fit. */
void header_identity(const struct snapshot *s, int width, bool utf8,
                     char *buf, size_t size);

/* "Samples 97,004 (998/s of 1000)  err 0.0%  drop 0.0%  threads 3/5
 * GIL 45%  active 97%  pytop 1.9% CPU".  When that is wider than width,
 * the least telling pieces go first (err and drop shares of 0.0%, long
 * forms, pytop's CPU, the thread count, err and drop) so that 80 columns
 * take one line; only what still does not fit is wrapped into at most
 * max_lines lines.  Under a thread filter the sample count is still every
 * thread's.  Returns the number of lines written (>= 1). */
int header_health(const struct snapshot *s, int width, bool utf8,
                  char lines[][HEADER_LINE_MAX], int max_lines);

/* "[target exited, status N]" once the target has exited, else "". */
void header_exit_note(const struct snapshot *s, char *buf, size_t size);

/* left, then right pushed to the right edge of width (or after two
 * spaces when unlimited).  The left text is cut first when both do not
 * fit. */
void header_left_right(const char *left, const char *right, int width,
                       bool utf8, char *buf, size_t size);

#endif
