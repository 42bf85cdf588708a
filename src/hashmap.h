/* hashmap.h - a small open-addressing map from uint64_t keys to uint64_t
 * values, for the aggregator side (code ids, row keys, frame cache).
 *
 * Linear probing over a power-of-two table kept at most half full, so a
 * lookup is one or two cache lines.  Key 0 is legal: it is kept outside the
 * table because 0 marks an empty slot.  Not thread-safe; the struct is
 * public so owners can embed it (explicit state, no hidden allocation until
 * the first put).
 */
#ifndef PYTOP_HASHMAP_H
#define PYTOP_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_slot {
	uint64_t key; /* 0 = empty */
	uint64_t val;
};

struct hashmap {
	struct hashmap_slot *slots; /* owned; NULL until the first put */
	size_t cap;                 /* power of two, or 0 */
	size_t count;               /* keys stored, the zero key included */
	bool has_zero;
	uint64_t zero_val;
};

void hashmap_init(struct hashmap *m);
void hashmap_destroy(struct hashmap *m); /* frees the table; m is reusable */

/* true and *val set when key is present. */
bool hashmap_get(const struct hashmap *m, uint64_t key, uint64_t *val);
/* Insert or overwrite.  false only when growing the table failed (the map
 * is unchanged then). */
bool hashmap_put(struct hashmap *m, uint64_t key, uint64_t val);
/* Remove every key but keep the table's memory for reuse. */
void hashmap_clear(struct hashmap *m);
size_t hashmap_count(const struct hashmap *m);

#endif
