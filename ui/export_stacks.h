/* export_stacks.h - what every export writer reads of a snapshot's stack
 * table: a node's frames from the outermost, the samples per node summed
 * over threads, and a frame's one-line label.
 *
 * The snapshot's indices are checked here once (a node's parent comes
 * before it, frames and nodes in range), so that a snapshot from a file
 * written by anyone (a recording) cannot send a writer out of its arrays
 * or round a cycle.
 */
#ifndef PYTOP_UI_EXPORT_STACKS_H
#define PYTOP_UI_EXPORT_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/snapshot.h"

/* Whether node n is a usable stack: in range, not the root, its chain of
 * parents strictly decreasing down to the root, its frames in range. */
bool export_node_ok(const struct snapshot *s, uint32_t n);

/* export_node_ok of every node at once, in one pass (calloc'd,
 * s->nstack_nodes entries, caller frees); NULL on OOM. */
bool *export_nodes_ok(const struct snapshot *s);

/* Node n's frame indices, outermost first, into path[cap]; returns how
 * many (its depth), 0 when the node is not usable or deeper than cap. */
size_t export_node_path(const struct snapshot *s, uint32_t n,
                        uint32_t *path, size_t cap);

/* The deepest usable node's depth (the path buffer writers need). */
size_t export_max_depth(const struct snapshot *s);

/* Own samples per node, summed over threads and processes (calloc'd,
 * s->nstack_nodes entries, caller frees); NULL on OOM.  Stacks on
 * unusable nodes are left out. */
uint64_t *export_node_samples(const struct snapshot *s);

/* "function (file:line)": file:line left out when unknown, the module
 * for a native frame without a file.  Written with put, which escapes
 * what the format cannot carry. */
typedef int (*export_put_fn)(FILE *out, const char *text);
int export_put_label(FILE *out, const struct snap_frame *f, export_put_fn put);

#endif
