/* frame_walk_kept.h - what a thread's last frame walk saw, frame by frame,
 * so that the next walk can take the frames below a data-stack chunk's
 * first frame from it instead of copying those chunks again
 * (frame_walk_chunks.c decides when they cannot have changed).
 *
 * A kept walk is stored outermost frame first: the frames below a chunk
 * are then a prefix of it, which the next walk keeps in place while it
 * writes its own newer frames after it.  The walk in progress collects
 * its frames newest first (struct kept_fresh, one per reader: threads are
 * walked one at a time) and is committed at its end.  Only a limited
 * number of threads keep walks (the deep stacks are the ones it pays
 * for); the memory comes from the reader's region. */
#ifndef PYTOP_FRAME_WALK_KEPT_H
#define PYTOP_FRAME_WALK_KEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/mem_region.h"
#include "cpython/py_reader.h"

#define KEPT_STEPS PY_READER_MAX_FRAMES /* frames (and shims) per walk */
#define KEPT_BOUNDS 64                  /* chunk boundaries per walk */

/* One frame the walk went through: a Python frame with its code, its
 * instruction pointer and its entry byte, or (python false) a frame that
 * runs no Python code (a 3.12+ shim on the C stack). */
struct kept_step {
	uint64_t code, instr;
	uint8_t entry;
	bool python;
};

/* The walk left `chunk` from its first frame to `caller`: steps[0, len)
 * of the kept walk are that caller and every frame older. */
struct kept_bound {
	uint64_t chunk, caller;
	uint32_t len;
};

struct kept_walk {
	struct kept_step *steps; /* KEPT_STEPS, outermost first */
	size_t n;
	struct kept_bound bound[KEPT_BOUNDS];
	size_t nbound;
	uintptr_t tstate;        /* the thread it is of */
	uint64_t read_after;     /* its frames were read after this tick's
	                            /proc stat read of the thread */
	bool ok;                 /* complete: may be reused */
};

/* The walk in progress, newest frame first. */
struct kept_fresh {
	struct kept_step steps[KEPT_STEPS];
	size_t n;
	struct { uint64_t chunk, caller; uint32_t at; } bound[KEPT_BOUNDS];
	size_t nbound;
	bool ok;
};

/* A kept walk from mem (not ok yet); NULL when out of memory. */
struct kept_walk *kept_walk_new(struct mem_region *mem);

static inline void kept_fresh_begin(struct kept_fresh *f)
{
	f->n = 0;
	f->nbound = 0;
	f->ok = true;
}

/* Record the walk's next frame; a walk longer than KEPT_STEPS is not kept. */
static inline void kept_fresh_step(struct kept_fresh *f, const struct kept_step *s)
{
	if (f->n == KEPT_STEPS)
		f->ok = false;
	else
		f->steps[f->n++] = *s;
}

/* The walk leaves chunk's first frame for `caller`, its next step. */
void kept_fresh_bound(struct kept_fresh *f, uint64_t chunk, uint64_t caller);

/* How many of w's steps (kept for tstate) are the caller of chunk's first
 * frame and the frames below it, when that caller is `caller`. */
bool kept_find(const struct kept_walk *w, uintptr_t tstate, uint64_t chunk,
               uint64_t caller, uint32_t *len);

/* The walk ended well: w becomes its first `keep` steps (from w's last
 * walk, read after tick w->read_after) with the fresh ones (read after
 * read_after) above them. */
void kept_commit(struct kept_walk *w, const struct kept_fresh *f, uint32_t keep,
                 uintptr_t tstate, uint64_t read_after);

#endif
