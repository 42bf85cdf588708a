/* table_view.h - what every table screen (functions, threads, processes,
 * the call tree, the lines view) does the same way on the terminal: keep
 * a selection bar and a scroll position over n rows, move them as the
 * table keys ask, and draw the description line, the title row with its
 * sort column marked, and the rows on the page with the bar.  Each
 * screen's own file says only which rows and columns it has. */
#ifndef PYTOP_UI_TABLE_VIEW_H
#define PYTOP_UI_TABLE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "crt.h"
#include "table.h"

struct snapshot;

/* Bytes of one formatted screen line. */
#define TABLE_VIEW_LINE 4096

/* The selected row and the first row on screen, over a list of rows of
 * which page fit on screen at the last draw. */
struct list_pos {
	size_t sel;
	size_t top;
	int page;
	bool center; /* bring sel mid-page at the next draw (on opening) */
};

/* How a table key moves the selection (keys.c): by a number of rows, by
 * pages, to the first row, to the last. */
enum list_step { LIST_ROWS, LIST_PAGES, LIST_FIRST, LIST_LAST };

/* Keep the selection inside n rows and on screen. */
void list_pos_clamp(struct list_pos *p, size_t n);

/* Move the selection by delta rows (clamped); false when n is 0. */
bool list_pos_move(struct list_pos *p, size_t n, long delta);

/* Rows one PgUp / PgDn moves: a page less one row of overlap. */
long list_pos_page_rows(const struct list_pos *p);

/* Move the selection over n rows as a table key asks: by count rows or
 * pages (negative: up), or to the first or last row (count unused).
 * False when n is 0: nothing moved. */
bool list_pos_step(struct list_pos *p, size_t n, enum list_step step,
                   long count);

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

/* What a table screen shows under its description line. */
struct table_body {
	const struct table *table;
	const void *const *order; /* the n rows, in the order shown */
	size_t n;
	int sort_col;             /* marked in the titles; -1 = none */
	/* When there are no rows: why ("no threads yet"), or, under a
	 * filter (not ""), that it matched none ("no thread matches the
	 * filter").  NULL no_rows: the page stays blank. */
	const char *no_rows;
	const char *no_match;
	const char *filter;
	/* Draw row i of screen (NULL: as table_view_row does). */
	void (*draw_row)(const void *screen, const struct crt *crt, int y,
	                 size_t i, bool selected);
	const void *screen;
};

/* Into rows [y, y + h): the titles, then the page of rows from pos->top
 * (pos->page set to the rows that fit, the selection kept on it) with
 * the bar on pos->sel, or the line saying why there are none. */
void table_view_body(const struct crt *crt, int y, int h,
                     struct list_pos *pos, const struct table_body *b);

/* Into rows [y, y + h) of a table that can be filtered: its description
 * (left, then the filter and status at the right) and its body. */
void table_view_draw(const struct crt *crt, int y, int h, const char *left,
                     const char *status, struct list_pos *pos,
                     const struct table_body *b);

/* A screen borrows the snapshot on display: whether s, the shown-th one
 * shown, is another than *snap, the rows' (shown *synced); if so it
 * becomes theirs, and the caller rebuilds them. */
bool table_view_resync(const struct snapshot **snap, unsigned long *synced,
                       const struct snapshot *s, unsigned long shown);

/* A new filter (NULL = none) into filter[size], the bar back on the
 * first row; the caller rebuilds the rows. */
void table_view_set_filter(char *filter, size_t size, struct list_pos *pos,
                           const char *text);

#endif
