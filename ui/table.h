/* table.h - a generic table of rows described by column descriptors.
 * It knows nothing of profiles: a column says its title, width, how to
 * format one row's cell and how to order two rows.  The TUI and the batch
 * text output format rows with the same descriptors, so they always agree.
 *
 * Rows are opaque pointers (const void *); the table never owns them. */
#ifndef PYTOP_UI_TABLE_H
#define PYTOP_UI_TABLE_H

#include <stdbool.h>
#include <stddef.h>

struct table_column {
	const char *title;
	int width;        /* columns; 0 = the rest of the line (last column) */
	int gap;          /* blank columns before this one */
	bool right_align;
	/* Write the cell text of row into buf.  width is the room the cell
	 * has (< 0: unlimited); a column may use it to shorten cleverly, and
	 * the table cuts whatever is still too long.  ctx is table.ctx. */
	void (*format)(const void *row, const void *ctx, int width, bool utf8,
	               char *buf, size_t size);
	/* qsort comparator over an array of row pointers, in this column's
	 * natural order (numbers: largest first), with tie-breaks that make
	 * the order total.  NULL: the column cannot be sorted on. */
	int (*compare)(const void *a, const void *b);
	/* Or, for a column whose rows need the table's ctx to reach their
	 * figures (count_columns.h): the same with ctx (table.ctx) and this
	 * column's key. */
	int (*compare_ctx)(const void *a, const void *b, const void *ctx,
	                   int key);
	int key;
	bool ascending;   /* compare puts the smallest first (names) */
	/* When a line is too narrow for every column, the column with the
	 * highest drop rank goes first, then the next.  0: never dropped. */
	int drop;
};

struct table {
	const struct table_column *cols; /* borrowed */
	size_t ncols;
	const void *ctx;                 /* borrowed, passed to format */
	bool utf8;                       /* the output can show UTF-8 */
	int sort_col;                    /* gets the sort mark; -1: none */
	unsigned long hidden;            /* bit i: column i is left out at
	                                    any width */
	int stretch_min;                 /* columns the stretching last
	                                    column keeps before others drop */
	/* Orders rows equal in the sort column (pointers to row pointers,
	 * as compare), so that the order is total; NULL: none needed. */
	int (*tie_break)(const void *a, const void *b);
};

/* At most this many columns (bits of table.hidden). */
#define TABLE_MAX_COLS 32

/* Where a cell landed in a formatted line: byte offsets [start, end). */
struct table_span {
	size_t start, end;
};

/* The title row marks the sort column after the first word of its title:
 * "%Own\u25bc" (largest first) or "Function\u25b2 (file:line)" (A to Z);
 * "v" / "^" without UTF-8.  Widths must leave room for the mark. */

/* Format the title row / one row into buf for a line of width columns
 * (width < 0: unlimited, nothing is cut).  No trailing padding is added.
 * spans, when not NULL, has t->ncols entries and receives each cell's
 * byte range (empty for cells that fell off the line or were dropped,
 * see table_layout).  Returns the
 * columns used. */
int table_format_title(const struct table *t, int width, char *buf,
                       size_t size, struct table_span *spans);
int table_format_row(const struct table *t, const void *row, int width,
                     char *buf, size_t size, struct table_span *spans);

/* The columns a line of width columns shows (bit i: column i): all but
 * the hidden ones, less those dropped by rank until the fixed columns
 * leave stretch_min to the last one.  The sort column is never dropped.
 * width < 0: unlimited. */
unsigned long table_layout(const struct table *t, int width);

/* Sort rows by column col (which must have a compare or a compare_ctx),
 * then by the table's tie_break. */
void table_sort(const struct table *t, size_t col, const void **rows,
                size_t n);

#endif
