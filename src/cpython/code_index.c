/* code_index.c - see code_index.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/code_index.h"

#include <stdlib.h>
#include <string.h>

#define CODE_INDEX_MIN_CAP 1024

/* The slot holding addr, or the empty one where it would go. */
static struct code_index_slot *probe(struct code_index_slot *slots, size_t cap,
                                     uintptr_t addr)
{
	size_t i = code_index_slot_of(cap, addr);

	while (slots[i].addr != 0 && slots[i].addr != addr)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct code_index *ix)
{
	size_t ncap = ix->cap ? ix->cap * 2 : CODE_INDEX_MIN_CAP;
	struct code_index_slot *ns = calloc(ncap, sizeof(*ns));

	if (ns == NULL)
		return -1;
	for (size_t i = 0; i < ix->cap; i++)
		if (ix->slots[i].addr != 0)
			*probe(ns, ncap, ix->slots[i].addr) = ix->slots[i];
	free(ix->slots);
	ix->slots = ns;
	ix->cap = ncap;
	return 0;
}

int code_index_init(struct code_index *ix)
{
	*ix = (struct code_index){ 0 };
	return grow(ix);
}

void code_index_destroy(struct code_index *ix)
{
	free(ix->slots);
	*ix = (struct code_index){ 0 };
}

int code_index_put(struct code_index *ix, uintptr_t addr, uint32_t id)
{
	struct code_index_slot *s;

	if ((ix->count + 1) * 2 > ix->cap && grow(ix) != 0)
		return -1;
	s = probe(ix->slots, ix->cap, addr);
	if (s->addr == 0)
		ix->count++;
	s->addr = addr;
	s->id = id;
	return 0;
}

void code_index_clear(struct code_index *ix)
{
	if (ix->slots != NULL)
		memset(ix->slots, 0, ix->cap * sizeof(*ix->slots));
	ix->count = 0;
}
