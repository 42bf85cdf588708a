/* flame_layout.h - a call tree (call_tree.h) laid out as an icicle
 * graph: the zoomed node spans the whole width on the first row, each
 * node's children below it, side by side in the tree's order (by name,
 * as flame graphs do, so blocks do not jump between refreshes), each as
 * wide as its share of its parent's samples (whole columns: a block
 * narrower than one is left out, with what is under it).  Each block
 * has the kind that dominates its samples and those under it: Python,
 * native or system time. */
#ifndef PYTOP_UI_FLAME_LAYOUT_H
#define PYTOP_UI_FLAME_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call_tree.h"

enum flame_kind {
	FLAME_PYTHON,
	FLAME_NATIVE,
	FLAME_SYSTEM,
};

struct flame_block {
	uint32_t node;
	int row, x, width;
	enum flame_kind kind;
};

struct flame_layout {
	struct flame_block *blocks; size_t n; /* owned; by row, then x */
	struct snap_split *under; /* owned: per node, the split of its own
	                             samples and of every node under it */
	int rows;                 /* rows used */
	bool cut;                 /* deeper rows did not fit */
};

/* Lay t out from node zoom in width columns and at most rows rows.
 * false on OOM (fl empty). */
bool flame_layout_build(struct flame_layout *fl, const struct call_tree *t,
                        uint32_t zoom, int width, int rows);
void flame_layout_free(struct flame_layout *fl);

/* The block of node, or fl->n. */
size_t flame_layout_find(const struct flame_layout *fl, uint32_t node);

/* The block beside block i on its row (dir -1 left, +1 right), or i. */
size_t flame_layout_beside(const struct flame_layout *fl, size_t i, int dir);

#endif
