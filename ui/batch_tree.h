/* batch_tree.h - -b --tree: the call tree (call_tree.h) in batch text,
 * with the tree screen's columns (tree_table.h, every one: a file has no
 * edge) and indentation, every node with at least BATCH_TREE_MIN_PERMILLE
 * of the samples, children by %Total; a line says how many smaller
 * nodes were left out. */
#ifndef PYTOP_UI_BATCH_TREE_H
#define PYTOP_UI_BATCH_TREE_H

#include <stdio.h>

#include "profile/snapshot.h"

#define BATCH_TREE_MIN_PERMILLE 5 /* 0.5 % */

/* Print the tree's lines (no blank line).  Returns 0, or -1 on OOM. */
int batch_tree_print(FILE *out, const struct snapshot *s);

#endif
