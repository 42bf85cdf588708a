/* json_arena.c - a private region for the JSON tree of one batch block
 * (json_arena.h says why).  A bump allocator over mmap'd chunks: a block
 * is never freed alone, the chunks all go at json_arena_end. */
#include "json_arena.h"

#include <jansson.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Big enough that a block of a few thousand rows takes a handful of
 * mappings; an allocation over ARENA_BIG (a large array's storage) goes
 * to the heap, where it is one block freed whole. */
#define ARENA_CHUNK (1u << 20)
#define ARENA_BIG (64u << 10)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used; /* bytes of the chunk, this header included */
};

/* The calling thread's arena: only the thread that called begin sees it,
 * so another thread's JSON (a push, an export) never lands in it. */
static _Thread_local struct arena_chunk *arena_head;
static _Thread_local bool arena_on;
static _Thread_local size_t arena_bytes;

static size_t arena_round(size_t n)
{
	size_t a = alignof(max_align_t);
	return (n + a - 1) & ~(a - 1);
}

static struct arena_chunk *arena_new_chunk(void)
{
	void *p = mmap(NULL, ARENA_CHUNK, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	struct arena_chunk *c = p;
	c->next = arena_head;
	c->used = arena_round(sizeof *c);
	arena_head = c;
	return c;
}

static bool arena_owns(const void *ptr)
{
	uintptr_t p = (uintptr_t)ptr;
	for (const struct arena_chunk *c = arena_head; c != NULL; c = c->next)
		if (p >= (uintptr_t)c && p < (uintptr_t)c + ARENA_CHUNK)
			return true;
	return false;
}

static void *arena_malloc(size_t size)
{
	size_t n = arena_round(size == 0 ? 1 : size);
	if (!arena_on || n > ARENA_BIG)
		return malloc(size);
	struct arena_chunk *c = arena_head;
	if (c == NULL || ARENA_CHUNK - c->used < n)
		c = arena_new_chunk();
	if (c == NULL)
		return malloc(size); /* no mapping: the heap still works */
	void *p = (char *)c + c->used;
	c->used += n;
	arena_bytes += n;
	return p;
}

static void arena_free(void *ptr)
{
	if (ptr == NULL || (arena_on && arena_owns(ptr)))
		return; /* an arena block: its chunk goes at json_arena_end */
	free(ptr);
}

void json_arena_install(void)
{
	json_set_alloc_funcs(arena_malloc, arena_free);
}

void json_arena_begin(void)
{
	arena_on = true;
	arena_bytes = 0;
}

void json_arena_end(void)
{
	while (arena_head != NULL) {
		struct arena_chunk *next = arena_head->next;
		(void)munmap(arena_head, ARENA_CHUNK);
		arena_head = next;
	}
	arena_on = false;
	arena_bytes = 0;
}

size_t json_arena_used(void)
{
	return arena_bytes;
}
