/* tree_table.h - the rows of a call tree (call_tree.h) as a table: the
 * nodes that are open (or, under a filter, those that match and the
 * paths to them), depth first, each node's children in the sort
 * column's order; the figure columns of the functions table
 * (count_columns.h, less Kept: no memory is kept per stack), then
 * Function, indented by depth, with an expander.  Shared by the tree
 * screen and batch --tree, so both show the same numbers. */
#ifndef PYTOP_UI_TREE_TABLE_H
#define PYTOP_UI_TREE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call_tree.h"
#include "profile_table.h"
#include "table.h"

/* The Function cell keeps this much room for the name (and its file)
 * beside the indentation: deeper nodes have their indentation
 * compressed, then cut and shown as their depth ("·23"); where the
 * name and its file do not fit, the file gives way. */
#define TREE_NAME_MIN_COLS 24

struct tree_row {
	uint32_t node;      /* index into the tree */
	const struct call_node *n;
	bool has_kids, open;
};

/* Is node open (its children shown)?  ctx: tree_table_build's. */
typedef bool (*tree_is_open)(const struct call_node *node, const void *ctx);

/* Build with tree_table_build; do not copy (table.ctx points back). */
struct tree_table {
	struct count_ctx cc;       /* first: cc.samples is 100 % */
	struct call_tree *tree;    /* borrowed (reordered by the build) */
	struct tree_row *rows;     /* owned */
	const void **order;        /* owned: pointers into rows */
	size_t n;
	uint32_t max_depth;        /* of the rows */
	profile_col sort;
	bool utf8;
	struct table_column cols[PROFILE_NCOLS];
	struct table table;
};

/* Fill tt from tree: open nodes by is_open (NULL: every node), rows
 * whose function or file contains filter and the paths to them (then
 * every such path open; NULL or "" = no filter), children by sort (the
 * Function column: by name).  hidden: count_hidden of the snapshot.
 * false on OOM (tt empty but valid). */
bool tree_table_build(struct tree_table *tt, struct call_tree *tree,
                      tree_is_open is_open, const void *open_ctx,
                      const char *filter, profile_col sort,
                      unsigned long hidden, bool utf8);
void tree_table_free(struct tree_table *tt);

static inline const struct tree_row *
tree_table_row(const struct tree_table *tt, size_t i)
{
	return tt->order[i];
}

/* The row of node i, or tt->n when it is not shown. */
size_t tree_table_find(const struct tree_table *tt, uint32_t node);

#endif
