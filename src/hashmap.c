/* hashmap.c - open-addressing map from uint64_t keys to uint64_t values
 * (hashmap.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#define HASHMAP_MIN_CAP 16

/* Keys are often small dense integers or (id << 32 | n) pairs: mix all bits
 * so that linear probing does not cluster (murmur3's 64-bit finalizer). */
static uint64_t hashmap_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

void hashmap_init(struct hashmap *m)
{
	memset(m, 0, sizeof *m);
}

void hashmap_destroy(struct hashmap *m)
{
	free(m->slots);
	hashmap_init(m);
}

/* The slot holding key, or the empty slot where it would go. */
static struct hashmap_slot *hashmap_find(struct hashmap_slot *slots,
                                         size_t cap, uint64_t key)
{
	size_t mask = cap - 1;
	size_t i = (size_t)hashmap_mix(key) & mask;

	while (slots[i].key != 0 && slots[i].key != key)
		i = (i + 1) & mask;
	return &slots[i];
}

bool hashmap_get(const struct hashmap *m, uint64_t key, uint64_t *val)
{
	if (key == 0) {
		if (m->has_zero)
			*val = m->zero_val;
		return m->has_zero;
	}
	if (m->cap == 0)
		return false;
	const struct hashmap_slot *s = hashmap_find(m->slots, m->cap, key);
	if (s->key == 0)
		return false;
	*val = s->val;
	return true;
}

static bool hashmap_grow(struct hashmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : HASHMAP_MIN_CAP;
	if (ncap < m->cap || ncap > SIZE_MAX / sizeof(struct hashmap_slot))
		return false;
	struct hashmap_slot *ns = calloc(ncap, sizeof *ns);
	if (ns == NULL)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i].key != 0)
			*hashmap_find(ns, ncap, m->slots[i].key) = m->slots[i];
	}
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return true;
}

bool hashmap_put(struct hashmap *m, uint64_t key, uint64_t val)
{
	if (key == 0) {
		m->count += !m->has_zero;
		m->has_zero = true;
		m->zero_val = val;
		return true;
	}
	/* Keep the load factor <= 1/2 (counting the new key). */
	if ((m->count + 1) * 2 > m->cap && !hashmap_grow(m))
		return false;
	struct hashmap_slot *s = hashmap_find(m->slots, m->cap, key);
	if (s->key == 0) {
		s->key = key;
		m->count++;
	}
	s->val = val;
	return true;
}

void hashmap_clear(struct hashmap *m)
{
	if (m->slots != NULL)
		memset(m->slots, 0, m->cap * sizeof *m->slots);
	m->count = 0;
	m->has_zero = false;
	m->zero_val = 0;
}

size_t hashmap_count(const struct hashmap *m)
{
	return m->count;
}
