/* call_tree.h - the call tree of a snapshot's stacks (snapshot.h:
 * stack_frames, stack_nodes, stacks), for the tree screen, the flame
 * graph and batch --tree.
 *
 * Top-down: one node per function (name, file) under each path of
 * functions from the outermost frame, the lines of a function at one
 * place merged; a recursive function is one node per depth, so no
 * sample is counted twice in one node.  A node's total is the samples
 * of every stack through it, its own those whose innermost frame it is,
 * its split and Mem+ those of its own samples (as the functions table's
 * rows).  "[other stacks]" (the stacks the engine folded away) is a
 * node of its own under the root.
 *
 * Callers (inverted): for one function, the paths that lead to it: its
 * node under the root holds every stack through it, and under it the
 * function that called its outermost call, then that one's caller, up
 * to the outermost frame.  There a node's total is the samples that
 * entered the function through that path, its own those of them where
 * the function itself was the innermost frame.
 *
 * Only the stacks of the snapshot's thread_filter / process_filter
 * count, as in the other tables.  Node 0 is the root: its total is
 * every counted sample.  Children come after their parents. */
#ifndef PYTOP_UI_CALL_TREE_H
#define PYTOP_UI_CALL_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/snapshot.h"

#define CALL_NONE UINT32_MAX

struct call_node {
	const char *name, *file, *module; /* borrowed from the snapshot */
	int line;            /* the function's (smallest) first line */
	bool native, other;
	uint32_t func;       /* equal for the nodes of one function */
	uint32_t parent, depth; /* root: CALL_NONE, 0 */
	uint32_t first_child, next_sibling; /* CALL_NONE ends; in the
	                                       order call_tree_order set */
	uint64_t path;       /* a hash of the functions from the root: the
	                        same node in the next snapshot's tree */
	struct snap_counts c;
};

struct call_tree {
	struct call_node *nodes; size_t n; /* owned; nodes[0] the root */
	size_t cap;
	uint32_t nfuncs;
	uint64_t samples, samples_win; /* of every stack counted (callers:
	                                  through the function or not): what
	                                  100 % means */
	bool inverted;
};

/* Build t (overwritten) from s, which must outlive it.  false on OOM (t
 * then holds the root only, or nothing). */
bool call_tree_build(struct call_tree *t, const struct snapshot *s);

/* The callers of function (name, file) instead. */
bool call_tree_build_callers(struct call_tree *t, const struct snapshot *s,
                             const char *name, const char *file);

void call_tree_free(struct call_tree *t);

/* Order every node's children by cmp (then by name and file, then by
 * path, so the order is total and the same at each rebuild). */
typedef int (*call_node_cmp)(const struct call_node *a,
                             const struct call_node *b, const void *ctx);
bool call_tree_order(struct call_tree *t, call_node_cmp cmp,
                     const void *ctx);

/* By name, then file (as flame graphs order siblings). */
int call_node_by_name(const struct call_node *a, const struct call_node *b,
                      const void *ctx);

/* The child of node i with the most total samples, CALL_NONE none. */
uint32_t call_tree_hottest_child(const struct call_tree *t, uint32_t i);

#endif
