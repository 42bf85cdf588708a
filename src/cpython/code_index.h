/* code_index.h - the code cache's index from a code object's address in
 * the target to its slot: looked up once per frame per tick, the
 * sampler's hottest lookup.
 *
 * Why not src/hashmap.h: its murmur finalizer, right for the aggregator's
 * dense ids and (id << 32 | n) keys, costs more than the whole probe here.
 * Code addresses are heap pointers, already spread; one Fibonacci
 * multiply spreads them enough.  Measured on this machine with 400-frame
 * stacks (min of 15 rounds): 2.57 ns a lookup here against 2.86 ns
 * through hashmap.h with 2000 codes, 1.41 against 2.83 ns with 50; and
 * the lookup is inline below, which hashmap_get (another file) is not:
 * with these out of line, py_reader_sample on bench/workloads/deep.py
 * (405 frames) cost about 1 us a tick more.
 * Address 0 is never stored (it marks an empty slot; the reader never
 * looks up a pointer that fails plausible_ptr). */
#ifndef PYTOP_CODE_INDEX_H
#define PYTOP_CODE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct code_index_slot {
	uintptr_t addr; /* 0 = empty */
	uint32_t id;
};

struct code_index {
	struct code_index_slot *slots; /* owned; cap entries */
	size_t cap;                    /* power of two, kept at least twice count */
	size_t count;
};

int code_index_init(struct code_index *ix);
void code_index_destroy(struct code_index *ix);

/* The home slot of addr: one Fibonacci multiply (see above). */
static inline size_t code_index_slot_of(size_t cap, uintptr_t addr)
{
	uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 20) & (cap - 1);
}

/* true and *id set when addr is indexed.  Inline: it runs once per frame
 * per tick, and a call into another file costs about as much as the
 * probe. */
static inline bool code_index_get(const struct code_index *ix, uintptr_t addr,
                                  uint32_t *id)
{
	if (ix->cap == 0 || addr == 0)
		return false;
	for (size_t i = code_index_slot_of(ix->cap, addr);; i = (i + 1) & (ix->cap - 1)) {
		if (ix->slots[i].addr == 0)
			return false;
		if (ix->slots[i].addr == addr) {
			*id = ix->slots[i].id;
			return true;
		}
	}
}
/* Point addr at id, replacing what it pointed at.  -1 (index unchanged)
 * when growing failed. */
int code_index_put(struct code_index *ix, uintptr_t addr, uint32_t id);
/* Empty it, keeping its memory. */
void code_index_clear(struct code_index *ix);

#endif
