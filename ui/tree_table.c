/* tree_table.c - a call tree's rows and columns (tree_table.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tree_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define INDENT 2 /* columns per level, when there is room */

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

/* ---- the Function cell ------------------------------------------------ */

/* Columns of indentation at depth d (1 = outermost) in a cell of width
 * columns (< 0: unlimited): INDENT per level, 1 when the deepest row
 * would leave the name less than TREE_NAME_MIN_COLS, and never more
 * than leaves it that. */
static int indent_of(const struct tree_table *tt, uint32_t d, int width)
{
	long step = INDENT, cap;

	if (width < 0)
		return (int)((d - 1) * INDENT);
	cap = width - TREE_NAME_MIN_COLS;
	if (cap < 0)
		cap = 0;
	if ((long)(tt->max_depth - 1) * INDENT > cap)
		step = 1;
	return (long)(d - 1) * step > cap ? -1 : (int)((d - 1) * step);
}

/* "name (file:line)" in room columns: the file's directories go first,
 * then the name is cut. */
static void fmt_name(const struct call_node *n, int room, bool utf8,
                     char *buf, size_t size)
{
	char tail[24], name[1024], file[1024];
	const char *nm = or_empty(n->name), *fl = or_empty(n->file);
	int fixed, name_w;

	if (n->other) {
		snprintf(buf, size, "%s (stacks folded away)", nm);
		return;
	}
	if (n->native && n->line <= 0) {
		snprintf(name, sizeof name, "[native] %s", nm);
		snprintf(buf, size, "%s (%s)", name, or_empty(n->module));
		text_fit(name, sizeof name, buf, room, TEXT_CUT_RIGHT, utf8);
		snprintf(buf, size, "%s", name);
		return;
	}
	if (fl[0] == '\0' && n->line <= 0) { /* "[N more frames]" */
		text_fit_name(buf, size, nm, room, utf8);
		return;
	}
	snprintf(tail, sizeof tail, ":%d)", n->line);
	fixed = 2 + (int)strlen(tail);
	name_w = text_width(nm, utf8);
	if (room < 0 || name_w + fixed + text_width(fl, utf8) <= room) {
		snprintf(buf, size, "%s%s (%s%s", n->native ? "[native] " : "",
		         nm, fl, tail);
		return;
	}
	int file_room = room - fixed - name_w;
	if (file_room < 6) {
		/* The name is what the row is about: the file gives way. */
		text_fit_name(buf, size, nm, room, utf8);
		return;
	}
	text_fit(file, sizeof file, fl, file_room, TEXT_CUT_LEFT, utf8);
	text_fit_name(name, sizeof name, nm,
	              room - fixed - text_width(file, utf8), utf8);
	snprintf(buf, size, "%s (%s%s", name, file, tail);
}

static void fmt_function(const void *row, const void *ctx, int width,
                         bool utf8, char *buf, size_t size)
{
	const struct tree_row *r = row;
	const struct tree_table *tt = ctx;
	int indent = indent_of(tt, r->n->depth, width), used;
	const char *mark = !r->has_kids ? " "
	                   : r->open ? (utf8 ? "\u25be" : "-")
	                             : (utf8 ? "\u25b8" : "+");
	char lead[64], name[4096];

	if (indent >= 0) {
		snprintf(lead, sizeof lead, "%*s%s ", indent, "", mark);
	} else {
		/* Too deep for the line: its depth, ending where the
		 * deepest indentation does, says where it is. */
		char depth[16];
		int cap = width - TREE_NAME_MIN_COLS;

		snprintf(depth, sizeof depth, "%s%u", utf8 ? "\u00b7" : ":",
		         (unsigned)r->n->depth);
		cap -= text_width(depth, utf8);
		snprintf(lead, sizeof lead, "%*s%s%s ", cap > 0 ? cap : 0, "",
		         depth, mark);
	}
	used = text_width(lead, utf8);
	fmt_name(r->n, width < 0 ? -1 : width - used, utf8, name, sizeof name);
	snprintf(buf, size, "%s%s", lead, name);
}

static const struct snap_counts *row_counts(const void *row)
{
	return &((const struct tree_row *)row)->n->c;
}

static const struct table_column name_column = {
	.title = "Function (file:line)", .width = 0, .gap = 1,
	.format = fmt_function, .ascending = true,
};

/* ---- building ---------------------------------------------------------- */

static int by_column(const struct call_node *a, const struct call_node *b,
                     const void *ctx)
{
	profile_col col = *(const profile_col *)ctx;

	if (col >= COUNT_NCOLS)
		return call_node_by_name(a, b, NULL);
	return count_compare((enum count_col)col, &a->c, &b->c);
}

static bool matches(const struct call_node *n, const char *filter)
{
	return strcasestr(or_empty(n->name), filter) != NULL ||
	       strcasestr(or_empty(n->file), filter) != NULL;
}

/* Under a filter: the nodes that match or lead to one that does
 * (children come after their parents, so one pass from the end). */
static bool *keep_matching(const struct call_tree *t, const char *filter)
{
	bool *keep = calloc(t->n ? t->n : 1, sizeof *keep);

	if (keep == NULL)
		return NULL;
	for (size_t i = t->n; i-- > 1;) {
		keep[i] = keep[i] || matches(&t->nodes[i], filter);
		if (keep[i])
			keep[t->nodes[i].parent] = true;
	}
	return keep;
}

static void add_row(struct tree_table *tt, uint32_t i, bool open)
{
	const struct call_node *n = &tt->tree->nodes[i];

	tt->rows[tt->n] = (struct tree_row){ i, n,
		n->first_child != CALL_NONE, open };
	tt->order[tt->n] = &tt->rows[tt->n];
	if (n->depth > tt->max_depth)
		tt->max_depth = n->depth;
	tt->n++;
}

/* Depth first, without recursion (stacks are deep): stack[] holds the
 * next sibling to visit at each level. */
static bool walk(struct tree_table *tt, const bool *keep, tree_is_open is_open,
                 const void *open_ctx)
{
	const struct call_tree *t = tt->tree;
	uint32_t *stack = malloc((t->n ? t->n : 1) * sizeof *stack);
	size_t sp = 0;

	if (stack == NULL)
		return false;
	stack[sp++] = t->nodes[0].first_child;
	while (sp > 0) {
		uint32_t i = stack[sp - 1];

		if (i == CALL_NONE) {
			sp--;
			continue;
		}
		stack[sp - 1] = t->nodes[i].next_sibling;
		if (keep != NULL && !keep[i])
			continue;
		bool open = t->nodes[i].first_child != CALL_NONE &&
		            (keep != NULL || is_open == NULL ||
		             is_open(&t->nodes[i], open_ctx));
		add_row(tt, i, open);
		if (open)
			stack[sp++] = t->nodes[i].first_child;
	}
	free(stack);
	return true;
}

bool tree_table_build(struct tree_table *tt, struct call_tree *tree,
                      tree_is_open is_open, const void *open_ctx,
                      const char *filter, profile_col sort,
                      unsigned long hidden, bool utf8)
{
	bool *keep = NULL, ok;

	if (sort >= PROFILE_NCOLS || (hidden >> sort) & 1)
		sort = COUNT_TOTAL;
	*tt = (struct tree_table){ .cc = { tree->samples, row_counts },
		.tree = tree, .sort = sort, .utf8 = utf8 };
	for (int i = 0; i < COUNT_NCOLS; i++)
		tt->cols[i] = count_column((enum count_col)i);
	tt->cols[PROFILE_COL_NAME] = name_column;
	tt->table = (struct table){ .cols = tt->cols, .ncols = PROFILE_NCOLS,
		.ctx = tt, .utf8 = utf8, .sort_col = (int)sort,
		.hidden = hidden | 1UL << COUNT_KEPT,
		.stretch_min = PROFILE_NAME_MIN_COLS };
	if (tree->n <= 1)
		return true;
	tt->rows = malloc(tree->n * sizeof *tt->rows);
	tt->order = malloc(tree->n * sizeof *tt->order);
	if (filter != NULL && filter[0] != '\0')
		keep = keep_matching(tree, filter);
	ok = tt->rows != NULL && tt->order != NULL &&
	     (keep != NULL || filter == NULL || filter[0] == '\0') &&
	     call_tree_order(tree, by_column, &sort) &&
	     walk(tt, keep, is_open, open_ctx);
	free(keep);
	if (!ok)
		tree_table_free(tt);
	return ok;
}

void tree_table_free(struct tree_table *tt)
{
	free(tt->rows);
	free(tt->order);
	tt->rows = NULL;
	tt->order = NULL;
	tt->n = 0;
}

size_t tree_table_find(const struct tree_table *tt, uint32_t node)
{
	for (size_t i = 0; i < tt->n; i++)
		if (tt->rows[i].node == node)
			return i;
	return tt->n;
}
