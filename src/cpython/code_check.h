/* code_check.h - every cached code on a sampled stack is checked every
 * tick, because the target reuses a freed code object's address at once:
 * the fingerprints of the codes a thread ran last tick ride in the tick's
 * first scatter read; codes new to a stack this tick are checked after the
 * walk in one more read, and a replaced one is read again within the tick
 * (a sample that used it is torn only when that fails). */
#ifndef PYTOP_CODE_CHECK_H
#define PYTOP_CODE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/code_cache.h"
#include "cpython/scatter.h"
#include "cpython/thread_list.h"
#include "cpython/tick_arena.h"

#define MAX_CHECKS 4096 /* codes checked in the first read, all threads */

/* A cached code re-checked in this tick's first scatter read. */
struct code_check {
	uint32_t id;
	uint8_t *buf; /* code_fp_len() bytes, in the arena */
	bool ok;      /* arrived */
};

struct code_checks {
	struct code_check *k; /* MAX_CHECKS, in the reader's mem_region */
	size_t n;
};

/* The table comes from mem and goes with it. */
int code_checks_init(struct code_checks *ck, struct mem_region *mem);

/* Put code c on thread t's list, checked next tick (once per tick).
 * Inline: once per frame per tick. */
static inline void code_checks_list(struct thread_slot *t, struct py_code *c,
                                    uint64_t tick)
{
	if (c->listed_tick != tick && t->ncheck < MAX_CHECK) {
		c->listed_tick = tick;
		t->check_ids[t->ncheck++] = c->id;
	}
}

/* Queue into s the fingerprint reads of the codes on t's list, and empty
 * the list. */
void code_checks_queue(struct code_checks *ck, struct code_cache *cc,
                       struct thread_slot *t, uint64_t tick,
                       struct tick_arena *arena, struct scatter *s);
/* After the read: a code whose fingerprint changed (or could not be read)
 * was replaced at its address and is read afresh when next seen. */
void code_checks_apply(struct code_checks *ck, struct code_cache *cc);

/* After the walk: check, in one more read, the codes on this tick's
 * stacks that were not checked in the first one (new to their thread's
 * stack and not just read).  A code replaced at its address is read
 * again, once: the frames that used it name the new code when it is the
 * one this check saw; otherwise (changed again, unreadable, or too short
 * for a frame's offset) their samples are torn (SAMPLE_ERR_CODE_CHANGED). */
void code_checks_verify(struct code_cache *cc, struct thread_slot *slots,
                        size_t n, uint64_t tick, struct tick_arena *arena);

#endif
