/* flame_layout.c - blocks of an icicle graph (flame_layout.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "flame_layout.h"

#include <stdlib.h>

/* Children come after their parents: one pass from the end sums every
 * node's own split into its ancestors'. */
static struct snap_split *split_under(const struct call_tree *t)
{
	struct snap_split *u = calloc(t->n ? t->n : 1, sizeof *u);

	if (u == NULL)
		return NULL;
	for (size_t i = t->n; i-- > 0;) {
		snap_split_add(&u[i], &t->nodes[i].c.split);
		if (i > 0 && t->nodes[i].parent != CALL_NONE)
			snap_split_add(&u[t->nodes[i].parent], &u[i]);
	}
	return u;
}

static enum flame_kind kind_of(const struct snap_split *s)
{
	if (s->system > s->python && s->system > s->native)
		return FLAME_SYSTEM;
	return s->native > s->python ? FLAME_NATIVE : FLAME_PYTHON;
}

static bool add_block(struct flame_layout *fl, size_t *cap, uint32_t node,
                      int row, int x, int width)
{
	if (fl->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct flame_block *b = realloc(fl->blocks, c * sizeof *b);
		if (b == NULL)
			return false;
		fl->blocks = b;
		*cap = c;
	}
	fl->blocks[fl->n++] = (struct flame_block){ node, row, x, width,
		kind_of(&fl->under[node]) };
	if (row + 1 > fl->rows)
		fl->rows = row + 1;
	return true;
}

/* Row by row: the blocks of row r + 1 are the children of row r's, in
 * order, so the array stays by row, then x. */
static bool lay_rows(struct flame_layout *fl, size_t *cap,
                     const struct call_tree *t, int rows)
{
	size_t start = 0;

	for (int row = 0; row + 1 < rows; row++) {
		size_t end = fl->n;

		for (size_t i = start; i < end; i++) {
			struct flame_block p = fl->blocks[i];
			uint64_t total = t->nodes[p.node].c.total, before = 0;

			for (uint32_t c = t->nodes[p.node].first_child;
			     c != CALL_NONE && total > 0;
			     c = t->nodes[c].next_sibling) {
				uint64_t ct = t->nodes[c].c.total;
				int x0 = p.x + (int)(before * (uint64_t)p.width / total);
				int x1 = p.x + (int)((before + ct) *
				                     (uint64_t)p.width / total);
				before += ct;
				if (x1 > x0 && !add_block(fl, cap, c, row + 1, x0,
				                          x1 - x0))
					return false;
			}
		}
		if (fl->n == end)
			return true;
		start = end;
	}
	for (size_t i = start; i < fl->n; i++)
		if (t->nodes[fl->blocks[i].node].first_child != CALL_NONE)
			fl->cut = true;
	return true;
}

bool flame_layout_build(struct flame_layout *fl, const struct call_tree *t,
                        uint32_t zoom, int width, int rows)
{
	size_t cap = 0;

	*fl = (struct flame_layout){ .blocks = NULL };
	if (t->n == 0 || zoom >= t->n || width <= 0 || rows <= 0)
		return true;
	fl->under = split_under(t);
	if (fl->under == NULL || !add_block(fl, &cap, zoom, 0, 0, width) ||
	    !lay_rows(fl, &cap, t, rows)) {
		flame_layout_free(fl);
		return false;
	}
	return true;
}

void flame_layout_free(struct flame_layout *fl)
{
	free(fl->blocks);
	free(fl->under);
	*fl = (struct flame_layout){ .blocks = NULL };
}

size_t flame_layout_find(const struct flame_layout *fl, uint32_t node)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->blocks[i].node == node)
			return i;
	return fl->n;
}

size_t flame_layout_beside(const struct flame_layout *fl, size_t i, int dir)
{
	size_t j = dir < 0 ? i - 1 : i + 1;

	if (i >= fl->n || (dir < 0 && i == 0) || j >= fl->n ||
	    fl->blocks[j].row != fl->blocks[i].row)
		return i;
	return j;
}
