/* mem_region.c - see mem_region.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/mem_region.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define MEM_REGION_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_REGION_ASAN 1
#endif
#endif

#ifdef MEM_REGION_ASAN
#include <sanitizer/asan_interface.h>
/* AddressSanitizer does not watch mapped memory: the region poisons what
 * it has not handed out and leaves a poisoned gap after each allocation,
 * so that an overrun of one table into the next is still reported. */
#define REDZONE 32
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define REDZONE 0
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Small allocations share blocks of this size; a larger one gets a block
 * of its own, so that no block is left mostly unused.  Untouched pages
 * cost nothing either way. */
#define BLOCK_BYTES (256u << 10)

struct mem_block {
	struct mem_block *next;
	size_t bytes; /* mapped, this header included */
	uint8_t _Alignas(16) data[];
};

void mem_region_init(struct mem_region *m)
{
	*m = (struct mem_region){ 0 };
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static struct mem_block *map_block(size_t data_bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes;
	struct mem_block *b;

	if (data_bytes > SIZE_MAX - sizeof(*b) - page) {
		errno = ENOMEM;
		return NULL;
	}
	bytes = round_up(sizeof(*b) + data_bytes, page);
	b = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	b->bytes = bytes;
	POISON(b->data, bytes - sizeof(*b));
	return b;
}

/* A block of its own, linked behind the newest so that the newest's room
 * for small allocations stays in use. */
static void *alloc_alone(struct mem_region *m, size_t n)
{
	struct mem_block *b = map_block(n);

	if (b == NULL)
		return NULL;
	m->mapped += b->bytes;
	if (m->blocks == NULL) {
		b->next = NULL;
		m->blocks = b;
		m->used = m->cap = 0;
	} else {
		b->next = m->blocks->next;
		m->blocks->next = b;
	}
	UNPOISON(b->data, n);
	return b->data;
}

void *mem_region_alloc(struct mem_region *m, size_t n)
{
	size_t step;
	struct mem_block *b;
	uint8_t *p;

	if (n > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	step = round_up(n + REDZONE, 16);
	if (step > BLOCK_BYTES / 4)
		return alloc_alone(m, n);
	if (m->blocks == NULL || m->used + step > m->cap) {
		b = map_block(BLOCK_BYTES - sizeof(*b));
		if (b == NULL)
			return NULL;
		m->mapped += b->bytes;
		b->next = m->blocks;
		m->blocks = b;
		m->used = 0;
		m->cap = b->bytes - sizeof(*b);
	}
	p = m->blocks->data + m->used;
	m->used += step;
	UNPOISON(p, n);
	return p;
}

void mem_region_release(struct mem_region *m)
{
	struct mem_block *b = m->blocks, *next;

	while (b != NULL) {
		next = b->next;
		/* ASan remembers poisoning by address: a later mapping there must
		 * not inherit it. */
		UNPOISON(b->data, b->bytes - sizeof(*b));
		munmap(b, b->bytes);
		b = next;
	}
	mem_region_init(m);
}
