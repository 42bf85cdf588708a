/* tree_screen.h - the call tree screen (T): the snapshot's stacks as a
 * tree of functions (call_tree.h), drawn by tree_table.h, with its
 * figure columns, their sort keys and the / filter of the functions
 * table.  Right or + opens the selected node (again: to its first
 * child), Left or - closes it (again: to its parent), e opens the
 * hottest path under it, i shows the callers of its function (again, or
 * Esc: the whole tree), Enter its function's lines.  Which nodes are
 * open is kept by their path of functions, so it survives refreshes;
 * the first tree with samples opens at its hottest path. */
#ifndef PYTOP_UI_TREE_SCREEN_H
#define PYTOP_UI_TREE_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call_tree.h"
#include "crt.h"
#include "prompt.h"
#include "profile/snapshot.h"
#include "screen.h"
#include "table_view.h"
#include "tree_table.h"

struct tree_screen {
	const struct snapshot *snap; /* borrowed; NULL before the first */
	unsigned long synced;        /* the `shown` count the tree is of */
	struct call_tree tree;       /* owned; borrows snap */
	struct tree_table table;     /* owned; borrows tree */
	uint64_t *open; size_t nopen, capopen; /* owned: open nodes' paths,
	                                          sorted */
	bool opened_hot;             /* the first hottest path was opened */
	char *callers_of, *callers_file; /* owned: the callers view's
	                                    function; NULL: the whole tree */
	char filter[PROMPT_MAX];     /* "" = no filter */
	profile_col sort;
	bool utf8;
	struct list_pos pos;
	uint64_t sel_path;           /* the selected node's path, 0 none */
};

extern const struct screen_ops tree_screen_ops;

/* Rebuild from s when shown differs from the last call. */
void treescr_sync(struct tree_screen *ts, const struct snapshot *s,
                  unsigned long shown);

/* The node under the selection bar, NULL when there are no rows. */
const struct call_node *treescr_selected(const struct tree_screen *ts);

/* Open (true) or close the selected node; a second open goes to its
 * first child, a second close to its parent. */
void treescr_open(struct tree_screen *ts, bool open);

/* Open the hottest path under the selected node (the root when none),
 * selecting its end. */
void treescr_open_hottest(struct tree_screen *ts);

/* The callers of the selected node's function, or (on) back to the
 * whole tree. */
void treescr_toggle_callers(struct tree_screen *ts);

void treescr_set_filter(struct tree_screen *ts, const char *filter);

void treescr_draw(struct tree_screen *ts, const struct crt *crt, int y,
                  int h, const char *status, bool since_reset);

#endif
