/* frame_walk_kept.h - what a thread's last frame walk saw, frame by frame
 * with each frame's address, so that the next walk can take the frames
 * below a data-stack chunk's first frame from it instead of copying those
 * chunks again (frame_walk_chunks.c decides when they cannot have changed).
 *
 * Two walks are kept per thread: the last one, read from, and the one in
 * progress, written to; a walk that ends well becomes the last one.  Only
 * a limited number of threads keep walks (the deep stacks are the ones it
 * pays for); the memory comes from the reader's region. */
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
	uint64_t addr, code, instr;
	uint8_t entry;
	bool python;
};

/* steps[at] is the caller of `chunk`'s first frame: from there on, every
 * step is older than the chunk. */
struct kept_bound {
	uint64_t chunk;
	uint32_t at;
};

struct kept_walk {
	struct kept_step *steps; /* KEPT_STEPS */
	size_t n;
	struct kept_bound bound[KEPT_BOUNDS];
	size_t nbound;
	uintptr_t tstate;        /* the thread it is of */
	uint64_t read_after;     /* the steps below a bound were read after
	                            this tick's /proc stat read */
	bool ok;                 /* complete: may be reused */
};

struct kept_pair {
	struct kept_walk w[2];
	unsigned last;           /* w[last]: the last walk; the other: this one */
};

/* A pair from mem, NULL when out of memory. */
struct kept_pair *kept_pair_new(struct mem_region *mem);

static inline struct kept_walk *kept_last(struct kept_pair *p) { return &p->w[p->last]; }
static inline struct kept_walk *kept_cur(struct kept_pair *p) { return &p->w[!p->last]; }

/* Start recording this tick's walk of the thread at tstate. */
void kept_begin(struct kept_pair *p, uintptr_t tstate, uint64_t read_after);
/* Record one step; a walk longer than KEPT_STEPS is not kept. */
void kept_step(struct kept_walk *w, const struct kept_step *s);
/* The next step recorded is the caller of chunk's first frame. */
void kept_bound(struct kept_walk *w, uint64_t chunk);
/* Where in w, kept for tstate, the steps below chunk's first frame start,
 * if that frame's caller is at `caller`. */
bool kept_find(const struct kept_walk *w, uintptr_t tstate, uint64_t chunk,
               uint64_t caller, uint32_t *at);
/* Append w's steps from `at` on (and its bounds among them) to cur. */
void kept_append(struct kept_walk *cur, const struct kept_walk *w, uint32_t at);
/* The walk ended: well (it becomes the last one) or not (none is kept). */
void kept_end(struct kept_pair *p, bool ok);

#endif
