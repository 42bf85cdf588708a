/* strtab.c - string interning for the aggregator side (strtab.h).
 *
 * Bytes live in an arena of chunks that never move (that is what makes the
 * pointers stable); an entry array gives ids; an open-addressing index of
 * entry numbers finds existing strings by hash.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/strtab.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define STRTAB_CHUNK 65536u

struct strtab_chunk {
	struct strtab_chunk *next;
	size_t used, cap;
	char bytes[];
};

struct strtab_entry {
	const char *s; /* points into a chunk */
	size_t len;
	uint64_t hash;
};

struct strtab {
	struct strtab_chunk *chunks;  /* owned list, newest first */
	struct strtab_entry *entries; /* owned, indexed by id */
	size_t nentries, entries_cap;
	uint32_t *index;              /* owned; entry id + 1, 0 = empty */
	size_t index_cap;             /* power of two */
};

/* FNV-1a: short names, so simplicity beats speed here. */
static uint64_t strtab_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct strtab *strtab_new(void)
{
	return calloc(1, sizeof(struct strtab));
}

void strtab_free(struct strtab *t)
{
	if (t == NULL)
		return;
	struct strtab_chunk *c = t->chunks;
	while (c != NULL) {
		struct strtab_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(t->entries);
	free(t->index);
	free(t);
}

/* Slot of the entry equal to (s, len), or of the empty slot for it. */
static size_t strtab_slot(const struct strtab *t, const char *s, size_t len,
                          uint64_t hash)
{
	size_t mask = t->index_cap - 1;
	size_t i = (size_t)(hash ^ (hash >> 32)) & mask;

	for (;;) {
		uint32_t e = t->index[i];
		if (e == 0)
			return i;
		const struct strtab_entry *en = &t->entries[e - 1];
		if (en->hash == hash && en->len == len &&
		    (len == 0 || memcmp(en->s, s, len) == 0))
			return i;
		i = (i + 1) & mask;
	}
}

static bool strtab_grow_index(struct strtab *t)
{
	size_t ncap = t->index_cap ? t->index_cap * 2 : 64;
	uint32_t *ni = calloc(ncap, sizeof *ni);
	if (ni == NULL)
		return false;
	free(t->index);
	t->index = ni;
	t->index_cap = ncap;
	for (size_t id = 0; id < t->nentries; id++) {
		const struct strtab_entry *en = &t->entries[id];
		t->index[strtab_slot(t, en->s, en->len, en->hash)] =
			(uint32_t)id + 1;
	}
	return true;
}

/* Copy bytes into the arena, NUL-terminated; NULL on OOM. */
static char *strtab_store(struct strtab *t, const char *s, size_t len)
{
	struct strtab_chunk *c = t->chunks;
	if (c == NULL || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > STRTAB_CHUNK ? len + 1 : STRTAB_CHUNK;
		c = malloc(sizeof *c + cap);
		if (c == NULL)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* An oversized string gets a chunk of its own behind the
		 * current one, so the current one keeps filling up. */
		if (t->chunks != NULL && cap > STRTAB_CHUNK) {
			c->next = t->chunks->next;
			t->chunks->next = c;
		} else {
			c->next = t->chunks;
			t->chunks = c;
		}
	}
	char *dst = c->bytes + c->used;
	if (len > 0)
		memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

const char *strtab_intern(struct strtab *t, const char *s, size_t len,
                          uint32_t *id)
{
	if (len >= UINT32_MAX)
		return NULL;
	/* Grow before searching so the slot found stays valid; keep the index
	 * at most half full. */
	if ((t->nentries + 1) * 2 > t->index_cap && !strtab_grow_index(t))
		return NULL;
	uint64_t hash = strtab_hash(s, len);
	size_t slot = strtab_slot(t, s, len, hash);
	if (t->index[slot] != 0) {
		uint32_t e = t->index[slot] - 1;
		if (id != NULL)
			*id = e;
		return t->entries[e].s;
	}
	if (t->nentries >= UINT32_MAX - 1)
		return NULL;
	if (t->nentries == t->entries_cap) {
		size_t ncap = t->entries_cap ? t->entries_cap * 2 : 64;
		struct strtab_entry *ne =
			realloc(t->entries, ncap * sizeof *ne);
		if (ne == NULL)
			return NULL;
		t->entries = ne;
		t->entries_cap = ncap;
	}
	char *copy = strtab_store(t, s, len);
	if (copy == NULL)
		return NULL;
	t->entries[t->nentries] =
		(struct strtab_entry){ .s = copy, .len = len, .hash = hash };
	t->index[slot] = (uint32_t)t->nentries + 1;
	if (id != NULL)
		*id = (uint32_t)t->nentries;
	t->nentries++;
	return copy;
}

const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->nentries ? t->entries[id].s : NULL;
}
