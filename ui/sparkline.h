/* sparkline.h - the last SPARKLINE_HISTORY values of one gauge, and their
 * drawing as a row of block characters ("▁▂▃▅▇█"), or of ASCII
 * (" .:-=+*#%@") when the terminal cannot show UTF-8.
 *
 * The history is plain data owned by whoever pushes into it (the TUI loop
 * pushes one value per refreshed snapshot); drawing only reads it. */
#ifndef PYTOP_UI_SPARKLINE_H
#define PYTOP_UI_SPARKLINE_H

#include <stdbool.h>
#include <stddef.h>

#define SPARKLINE_HISTORY 60 /* values kept: one per refresh */

/* Zero-initialised = empty. */
struct sparkline {
	double v[SPARKLINE_HISTORY]; /* ring: v[next] is the oldest once full */
	size_t n;                    /* values held, <= SPARKLINE_HISTORY */
	size_t next;                 /* where the next value goes */
};

/* Append v, forgetting the oldest value once full.  NaN counts as 0. */
void sparkline_push(struct sparkline *sl, double v);

/* The value pushed age pushes ago (0 = newest); 0 when there is none. */
double sparkline_value(const struct sparkline *sl, size_t age);

/* Draw the newest min(cols, n) values into buf, oldest on the left, one
 * column each, right-aligned in exactly cols columns (blanks on the left
 * while the history is shorter).  Each value's height is its share of
 * top = the largest drawn value, or floor when that is larger (so that
 * noise around zero does not fill the row).  Zero and below draw as a
 * blank; the marks split (0, top] into equal slices, so that 1..8 under
 * top 8 draw as "▁▂▃▄▅▆▇█" (and 1..9 under top 9 as ".:-=+*#%@").  Returns the columns written (cols, or 0 when cols <= 0 or buf
 * is too small). */
int sparkline_draw(const struct sparkline *sl, int cols, double floor,
                   bool utf8, char *buf, size_t size);

/* The level sparkline_draw gives v under top, from 0 (blank) to
 * sparkline_levels(utf8) - 1. */
int sparkline_level(double v, double top, bool utf8);
int sparkline_levels(bool utf8);

#endif
