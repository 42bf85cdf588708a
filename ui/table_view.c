/* table_view.c - selection, scrolling and the common rows of a table
 * screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "table_view.h"

#include <stdio.h>
#include <string.h>

#include "header.h"
#include "text.h"

void list_pos_clamp(struct list_pos *p, size_t n)
{
	size_t page = p->page > 0 ? (size_t)p->page : 1;

	if (n == 0) {
		p->sel = p->top = 0;
		return;
	}
	if (p->sel >= n)
		p->sel = n - 1;
	if (p->sel < p->top)
		p->top = p->sel;
	if (p->sel >= p->top + page)
		p->top = p->sel - page + 1;
	/* No blank space at the bottom while rows are scrolled away. */
	if (p->top + page > n)
		p->top = n > page ? n - page : 0;
}

bool list_pos_move(struct list_pos *p, size_t n, long delta)
{
	long target = (long)p->sel + delta;

	if (n == 0)
		return false;
	if (target < 0)
		target = 0;
	if (target >= (long)n)
		target = (long)n - 1;
	p->sel = (size_t)target;
	list_pos_clamp(p, n);
	return true;
}

long list_pos_page_rows(const struct list_pos *p)
{
	return p->page > 1 ? p->page - 1 : 1;
}

bool list_pos_step(struct list_pos *p, size_t n, enum list_step step,
                   long count)
{
	switch (step) {
	case LIST_PAGES:
		return list_pos_move(p, n, count * list_pos_page_rows(p));
	case LIST_FIRST:
		return list_pos_move(p, n, -(long)n);
	case LIST_LAST:
		return list_pos_move(p, n, (long)n);
	case LIST_ROWS:
	default:
		return list_pos_move(p, n, count);
	}
}

/* The selection mid-page (on opening: the line asked for, in context). */
static void list_pos_center(struct list_pos *p, size_t n)
{
	size_t half = (size_t)(p->page / 2);

	p->top = p->sel > half ? p->sel - half : 0;
	list_pos_clamp(p, n);
	p->center = false;
}

void table_view_span(const struct crt *crt, int y, const char *line,
                     size_t start, size_t end, enum crt_elem elem)
{
	char part[TABLE_VIEW_LINE], prefix[TABLE_VIEW_LINE];
	size_t n = end - start;

	if (end <= start || n >= sizeof part || start >= sizeof prefix)
		return;
	memcpy(prefix, line, start);
	prefix[start] = '\0';
	memcpy(part, line + start, n);
	part[n] = '\0';
	crt_put(crt, y, text_width(prefix, crt->utf8), elem, part);
}

void table_view_description(const struct crt *crt, int y, const char *left,
                            const char *right)
{
	char line[TABLE_VIEW_LINE];

	header_left_right(left, right, COLS, crt->utf8, line, sizeof line);
	crt_put(crt, y, 0, CRT_NORMAL, line);
	/* The status half is what changes state: make it stand out. */
	if (right[0] != '\0') {
		char fitted[512];
		int w = text_fit(fitted, sizeof fitted, right, COLS,
		                 TEXT_CUT_RIGHT, crt->utf8);
		crt_put(crt, y, COLS - w, CRT_STATUS, fitted);
	}
}

void table_view_filtered_description(const struct crt *crt, int y,
                                     const char *left, const char *filter,
                                     const char *status)
{
	char right[512];

	if (filter[0] != '\0')
		snprintf(right, sizeof right, "[filter: %s] %s", filter, status);
	else
		snprintf(right, sizeof right, "%s", status);
	table_view_description(crt, y, left, right);
}

void table_view_row(const struct crt *crt, int y, const struct table *t,
                    const void *row, bool selected)
{
	char line[TABLE_VIEW_LINE];

	table_format_row(t, row, COLS, line, sizeof line, NULL);
	if (selected)
		table_view_selected(crt, y, line);
	else
		crt_put(crt, y, 0, CRT_NORMAL, line);
}

void table_view_titles(const struct crt *crt, int y, const struct table *t,
                       int sort_col)
{
	struct table_span spans[TABLE_MAX_COLS];
	char line[TABLE_VIEW_LINE];

	if (t->ncols > TABLE_MAX_COLS)
		return;
	table_format_title(t, COLS, line, sizeof line, spans);
	crt_fill(crt, y, 0, CRT_TITLE);
	crt_put(crt, y, 0, CRT_TITLE, line);
	if (sort_col >= 0 && (size_t)sort_col < t->ncols)
		table_view_span(crt, y, line, spans[sort_col].start,
		                spans[sort_col].end, CRT_TITLE_SORTED);
}

void table_view_selected(const struct crt *crt, int y, const char *line)
{
	crt_fill(crt, y, 0, CRT_SELECTED);
	crt_put(crt, y, 0, CRT_SELECTED, line);
}

/* The line that says why a table has no rows; "" when it says nothing. */
static void empty_line(const struct table_body *b, char *buf, size_t size)
{
	buf[0] = '\0';
	if (b->filter != NULL && b->filter[0] != '\0' && b->no_match != NULL)
		snprintf(buf, size, "  (%s; / then Enter on an empty line "
		         "clears it)", b->no_match);
	else if (b->no_rows != NULL)
		snprintf(buf, size, "  (%s)", b->no_rows);
}

static void body_row(const struct crt *crt, int y,
                     const struct table_body *b, size_t i, bool selected)
{
	if (b->draw_row != NULL)
		b->draw_row(b->screen, crt, y, i, selected);
	else
		table_view_row(crt, y, b->table, b->order[i], selected);
}

void table_view_body(const struct crt *crt, int y, int h,
                     struct list_pos *pos, const struct table_body *b)
{
	char why[512];

	if (h <= 0)
		return;
	table_view_titles(crt, y, b->table, b->sort_col);
	pos->page = h - 1 > 0 ? h - 1 : 1;
	if (pos->center)
		list_pos_center(pos, b->n);
	list_pos_clamp(pos, b->n);
	empty_line(b, why, sizeof why);
	if (b->n == 0 && h > 1 && why[0] != '\0')
		crt_put(crt, y + 1, 0, CRT_NORMAL, why);
	for (int r = 0; r < h - 1 && pos->top + (size_t)r < b->n; r++)
		body_row(crt, y + 1 + r, b, pos->top + (size_t)r,
		         pos->top + (size_t)r == pos->sel);
}

void table_view_draw(const struct crt *crt, int y, int h, const char *left,
                     const char *status, struct list_pos *pos,
                     const struct table_body *b)
{
	if (h <= 0)
		return;
	table_view_filtered_description(crt, y, left, b->filter, status);
	table_view_body(crt, y + 1, h - 1, pos, b);
}

bool table_view_resync(const struct snapshot **snap, unsigned long *synced,
                       const struct snapshot *s, unsigned long shown)
{
	if (s == *snap && shown == *synced)
		return false;
	*snap = s;
	*synced = shown;
	return true;
}

void table_view_set_filter(char *filter, size_t size, struct list_pos *pos,
                           const char *text)
{
	snprintf(filter, size, "%s", text != NULL ? text : "");
	pos->sel = pos->top = 0;
}
