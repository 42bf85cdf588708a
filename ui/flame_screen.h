/* flame_screen.h - the flame graph screen (G): the call tree of the
 * snapshot's stacks (call_tree.h) drawn as an icicle graph
 * (flame_layout.h), root on top.  Each block is labelled with its
 * function when it fits and coloured by the kind of time that dominates
 * it (Python, native, system); without colour the blocks are filled
 * with "-", "=" and "#" instead, and without UTF-8 they are separated by
 * "|".  Left and Right select the block beside, Up its caller, Down its
 * hottest callee; Enter zooms into the selected block (it becomes the
 * whole width), Esc zooms out a step; the last row says the selected
 * block's function (file:line), %Total, %Own and where its time went.
 * The zoom and the selection are kept by path across refreshes, and the
 * pause key freezes the graph as every screen. */
#ifndef PYTOP_UI_FLAME_SCREEN_H
#define PYTOP_UI_FLAME_SCREEN_H

#include <stdbool.h>
#include <stdint.h>

#include "call_tree.h"
#include "crt.h"
#include "flame_layout.h"
#include "profile/snapshot.h"
#include "screen.h"

struct flame_screen {
	const struct snapshot *snap; /* borrowed; NULL before the first */
	unsigned long synced;        /* the `shown` count the tree is of */
	struct call_tree tree;       /* owned; borrows snap */
	struct flame_layout layout;  /* owned: as last drawn */
	uint32_t zoom, sel;          /* nodes of tree */
	uint64_t zoom_path, sel_path; /* the same, across rebuilds (0: root) */
	bool utf8;
};

extern const struct screen_ops flame_screen_ops;

void flamescr_sync(struct flame_screen *fs, const struct snapshot *s,
                   unsigned long shown);

/* The selected node (the root when nothing is). */
const struct call_node *flamescr_selected(const struct flame_screen *fs);

/* Select the block beside (dir -1, +1), the caller (up) or the hottest
 * callee (down) of the selected one, as last drawn. */
void flamescr_beside(struct flame_screen *fs, int dir);
void flamescr_up_down(struct flame_screen *fs, int dir);

/* Zoom into the selected block; out one step (false: not zoomed). */
void flamescr_zoom_in(struct flame_screen *fs);
bool flamescr_zoom_out(struct flame_screen *fs);

void flamescr_draw(struct flame_screen *fs, const struct crt *crt, int y,
                   int h, const char *status, bool since_reset);

#endif
