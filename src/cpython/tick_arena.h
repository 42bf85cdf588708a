/* tick_arena.h - scratch memory for one tick's copies of target memory
 * (data-stack chunks, speculative ranges, code fingerprints): one block
 * owned by the reader, handed out in 16-byte steps and taken back whole at
 * the start of the next tick, so the hot path never calls malloc. */
#ifndef PYTOP_TICK_ARENA_H
#define PYTOP_TICK_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct tick_arena {
	uint8_t *base; /* owned */
	size_t used, cap;
};

/* NULL when this tick's share is used up: callers treat it as a failed
 * read, never as an error of the target. */
static inline uint8_t *tick_arena_alloc(struct tick_arena *a, size_t len)
{
	uint8_t *p;

	len = (len + 15) & ~(size_t)15;
	if (a->used + len > a->cap)
		return NULL;
	p = a->base + a->used;
	a->used += len;
	return p;
}

static inline void tick_arena_reset(struct tick_arena *a)
{
	a->used = 0;
}

#endif
