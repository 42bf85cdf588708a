/* table_view.h - what every table screen (functions, threads) does the
 * same way on the terminal: keep a selection bar and a scroll position
 * over n rows, and draw the description line, the title row with its sort
 * column marked, and a row under the bar. */
#ifndef PYTOP_UI_TABLE_VIEW_H
#define PYTOP_UI_TABLE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "crt.h"
#include "table.h"

/* Bytes of one formatted screen line. */
#define TABLE_VIEW_LINE 4096

/* The selected row and the first row on screen, over a list of rows of
 * which page fit on screen at the last draw. */
struct list_pos {
	size_t sel;
	size_t top;
	int page;
};

/* Keep the selection inside n rows and on screen. */
void list_pos_clamp(struct list_pos *p, size_t n);

/* Move the selection by delta rows (clamped); false when n is 0. */
bool list_pos_move(struct list_pos *p, size_t n, long delta);

/* Rows one PgUp / PgDn moves: a page less one row of overlap. */
long list_pos_page_rows(const struct list_pos *p);

/* Draw line[start, end) at its column on row y with elem's attributes. */
void table_view_span(const struct crt *crt, int y, const char *line,
                     size_t start, size_t end, enum crt_elem elem);

/* The line above the titles: left (what the figures are) and right
 * (status such as "[paused]", drawn to stand out) on row y. */
void table_view_description(const struct crt *crt, int y, const char *left,
                            const char *right);

/* The description line of a table that can be filtered: left, and at
 * its right "[filter: F] " (when filter is not "") then status. */
void table_view_filtered_description(const struct crt *crt, int y,
                                     const char *left, const char *filter,
                                     const char *status);

/* One row of t on row y, under the selection bar when selected. */
void table_view_row(const struct crt *crt, int y, const struct table *t,
                    const void *row, bool selected);

/* The title row of t, with column sort_col marked. */
void table_view_titles(const struct crt *crt, int y, const struct table *t,
                       int sort_col);

/* One formatted row under the selection bar. */
void table_view_selected(const struct crt *crt, int y, const char *line);

#endif
