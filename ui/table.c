/* table.c - lay out cells into one line of text, and sort rows. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Largest cell text before fitting (a function name with its path). */
#define CELL_MAX 4096

/* A line being filled: buf/size/pos in bytes, width/used in columns. */
struct line {
	char *buf;
	size_t size, pos;
	int width, used;
};

static int room_left(const struct line *l)
{
	return l->width < 0 ? -1 : l->width - l->used;
}

static void line_append(struct line *l, const char *s, int cols)
{
	size_t n = strlen(s);

	if (l->pos + n >= l->size)
		return;
	memcpy(l->buf + l->pos, s, n + 1);
	l->pos += n;
	l->used += cols;
}

static void line_spaces(struct line *l, int n)
{
	int room = room_left(l);

	if (room >= 0 && n > room)
		n = room;
	for (int i = 0; i < n; i++)
		line_append(l, " ", 1);
}

/* Place one cell's raw text: cut it to the room the column has, then
 * pad it to the column width on the aligned side. */
static void place_cell(struct line *l, const struct table_column *c,
                       const char *text, bool utf8, bool last,
                       struct table_span *span)
{
	char fitted[CELL_MAX];
	int room, w, pad;

	line_spaces(l, c->gap);
	room = room_left(l);
	if (c->width > 0 && (room < 0 || c->width < room))
		room = c->width;
	span->start = l->pos;
	w = text_fit(fitted, sizeof fitted, text, room, TEXT_CUT_RIGHT, utf8);
	/* A column cut by the line's end is only as wide as what is left. */
	pad = (room >= 0 && c->width > 0 ? room : c->width) - w;
	if (pad < 0)
		pad = 0;
	if (c->right_align)
		line_spaces(l, pad);
	line_append(l, fitted, w);
	/* Left-aligned cells are padded only when something follows, so
	 * lines carry no trailing blanks. */
	if (!c->right_align && !last)
		line_spaces(l, pad);
	span->end = l->pos;
}

/* Cell room for column i of a line: its width, or the rest for the
 * stretching last column. */
static int cell_room(const struct line *l, const struct table_column *c)
{
	int room = room_left(l);

	if (room >= 0)
		room = room > c->gap ? room - c->gap : 0;
	if (c->width > 0 && (room < 0 || c->width < room))
		return c->width;
	return room;
}

static const char *sort_mark(bool ascending, bool utf8)
{
	if (utf8)
		return ascending ? "\u25b2" : "\u25bc";
	return ascending ? "^" : "v";
}

/* The mark goes after the title's first word: "Function\u25b2 (file:line)". */
static void marked_title(const struct table_column *c, bool utf8, char *buf,
                         size_t size)
{
	size_t word = strcspn(c->title, " ");

	snprintf(buf, size, "%.*s%s%s", (int)word, c->title,
	         sort_mark(c->ascending, utf8), c->title + word);
}

static bool has(unsigned long set, size_t i)
{
	return (set >> i & 1UL) != 0;
}

/* Columns the shown set needs: the fixed widths, the gaps, and
 * stretch_min for a stretching column. */
static int needed(const struct table *t, unsigned long shown)
{
	int need = 0;

	for (size_t i = 0; i < t->ncols; i++)
		if (has(shown, i))
			need += t->cols[i].gap + (t->cols[i].width > 0
			        ? t->cols[i].width : t->stretch_min);
	return need;
}

/* The shown column with the highest drop rank, or -1. */
static int next_to_drop(const struct table *t, unsigned long shown)
{
	int victim = -1;

	for (size_t i = 0; i < t->ncols; i++)
		if (has(shown, i) && t->cols[i].drop > 0 &&
		    (int)i != t->sort_col &&
		    (victim < 0 || t->cols[i].drop > t->cols[victim].drop))
			victim = (int)i;
	return victim;
}

unsigned long table_layout(const struct table *t, int width)
{
	size_t n = t->ncols < TABLE_MAX_COLS ? t->ncols : TABLE_MAX_COLS;
	unsigned long shown = (n == TABLE_MAX_COLS ? ~0UL : (1UL << n) - 1) &
	                      ~t->hidden;

	while (width >= 0 && needed(t, shown) > width) {
		int victim = next_to_drop(t, shown);

		if (victim < 0)
			break;
		shown &= ~(1UL << victim);
	}
	return shown;
}

/* The index of the last shown column (it gets no trailing padding). */
static size_t last_shown(const struct table *t, unsigned long shown)
{
	size_t last = 0;

	for (size_t i = 0; i < t->ncols; i++)
		if (has(shown, i))
			last = i;
	return last;
}

static int format_line(const struct table *t, const void *row, int width,
                       char *buf, size_t size, struct table_span *spans)
{
	struct line l = { buf, size, 0, width, 0 };
	char text[CELL_MAX];
	unsigned long shown = table_layout(t, width);
	size_t last = last_shown(t, shown);

	if (size > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < t->ncols; i++) {
		const struct table_column *c = &t->cols[i];
		struct table_span dummy, *span = spans ? &spans[i] : &dummy;
		const char *cell = c->title;

		if (!has(shown, i)) {
			span->start = span->end = l.pos;
			continue;
		}

		if (row == NULL && (int)i == t->sort_col) {
			marked_title(c, t->utf8, text, sizeof text);
			cell = text;
		}
		if (row != NULL) {
			text[0] = '\0';
			c->format(row, t->ctx, cell_room(&l, c), t->utf8, text,
			          sizeof text);
			cell = text;
		}
		place_cell(&l, c, cell, t->utf8, i == last, span);
	}
	return l.used;
}

int table_format_title(const struct table *t, int width, char *buf,
                       size_t size, struct table_span *spans)
{
	return format_line(t, NULL, width, buf, size, spans);
}

int table_format_row(const struct table *t, const void *row, int width,
                     char *buf, size_t size, struct table_span *spans)
{
	return format_line(t, row, width, buf, size, spans);
}

struct sort_by {
	const struct table *t;
	const struct table_column *col;
};

static int compare_rows(const void *a, const void *b, void *arg)
{
	const struct sort_by *by = arg;
	int c = by->col->compare_ctx != NULL
	        ? by->col->compare_ctx(a, b, by->t->ctx, by->col->key)
	        : by->col->compare(a, b);

	if (c == 0 && by->t->tie_break != NULL)
		c = by->t->tie_break(a, b);
	return c;
}

void table_sort(const struct table *t, size_t col, const void **rows,
                size_t n)
{
	struct sort_by by;

	if (col >= t->ncols || n < 2 ||
	    (t->cols[col].compare == NULL && t->cols[col].compare_ctx == NULL))
		return;
	by = (struct sort_by){ t, &t->cols[col] };
	qsort_r(rows, n, sizeof rows[0], compare_rows, &by);
}
