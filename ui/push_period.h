/* push_period.h - the samples of one push period, as a stack table of
 * their own.
 *
 * Every snapshot's stacks carry samples_win, the samples since the
 * snapshot before (folding into "[other stacks]" and merging gone
 * threads move a cell's window count with its samples, so the window
 * counts of all snapshots add up to every sample exactly once).  Adding
 * each snapshot's window counts here, keyed by the frames' content (the
 * engine renumbers frames and nodes when it folds), gives the period's
 * profile; the `r` key and the n key forget counts, so push_live takes a
 * snapshot just before them and nothing counted is lost.
 *
 * Single-threaded: the views' thread owns it.
 */
#ifndef PYTOP_UI_PUSH_PERIOD_H
#define PYTOP_UI_PUSH_PERIOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/snapshot.h"

/* uint64 key -> index, open addressing (ui/ has no map of the engine's:
 * the layer rules keep ui/ to snapshots). */
struct push_map {
	uint64_t *keys;
	uint32_t *vals;    /* UINT32_MAX: empty slot */
	size_t cap, count; /* cap a power of two, or 0 */
};

struct push_period {
	struct snap_frame *frames; size_t nframes, frames_cap; /* strings owned */
	struct push_map frame_by_hash;  /* content hash (+ probe) -> frame */
	struct snap_stack_node *nodes; size_t nnodes, nodes_cap;
	struct push_map node_by_key;   /* parent << 32 | frame -> node */
	struct snap_stack *stacks; size_t nstacks, stacks_cap;
	struct push_map stack_by_key;  /* node << 32 | (uint32)tid -> stack */
	uint64_t samples;              /* all the period's samples */
	bool oom;                      /* some samples could not be added */
};

/* false on OOM. */
bool push_period_init(struct push_period *p);
void push_period_destroy(struct push_period *p);
/* Start a new, empty period (memory kept). */
bool push_period_clear(struct push_period *p);

/* Add s's window: every stack's samples_win, its split_win, and its
 * share of the stack's sampled time.  false when some could not be added
 * (no memory): p->oom says so until cleared. */
bool push_period_add(struct push_period *p, const struct snapshot *s);

/* A snapshot that borrows p's stack table (stack_frames, stack_nodes,
 * stacks; samples = p->samples) with from's identity (command, Python
 * version, rate): what the export writers read.  Do not snapshot_free
 * it; it is valid until p changes. */
void push_period_view(const struct push_period *p, const struct snapshot *from,
                      struct snapshot *out);

#endif
