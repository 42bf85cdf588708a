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
