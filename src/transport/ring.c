/* ring.c - lock-free SPSC byte ring of variable-size records.
 *
 * Layout: the producer's line (head, its stale copy of tail, drops), the
 * consumer's line (tail, its stale copy of head, oversize skips) and the
 * read-only line (mask, buffer) each sit on their own cache line, so the
 * only lines that bounce between the cores are the two index lines, and
 * those only when a side's cached copy of the other index runs out.
 *
 * Rebasing: an index maps to the byte (index - base) & mask.  A producer
 * that finds the ring empty past RING_REBASE_AT bytes into the buffer
 * moves base so that its next record lands at byte 0.  Without it the
 * ring's pages were touched one by one as the indices went round, so a
 * slow, steady stream (1 kHz for minutes) grew pytop's RSS by the whole
 * buffer over its first lap (16 MiB, minutes 1 to 15 of a soak) though a
 * few KiB were ever in flight; now only the bytes a backlog reaches are.
 * Indices and free space are unchanged, so no capacity is lost.
 *
 * Releasing: a backlog (the consumer descheduled for a second, a burst of
 * code definitions) still touches the pages it reaches, and they stayed
 * resident for good: the soak's ring held 1 MiB an hour in though a few
 * KiB were in flight.  At a rebase the ring is empty, so the producer
 * gives back the pages between RING_REBASE_AT and the furthest byte
 * written since the last release (madvise MADV_DONTNEED: they read as
 * zeros and are faulted in again if a later backlog reaches them), once
 * that furthest byte is past RING_RELEASE_AT, which keeps the system call
 * to the rare tick after a backlog.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "transport/ring.h"

#include <assert.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/record.h"

#define RING_CACHELINE 64
#define RING_MIN_CAPACITY 4096u
/* Rebase once this far into the buffer (or a quarter of a small ring):
 * far enough that the check is rare, near enough to keep the RSS low. */
#define RING_REBASE_AT (64u << 10)
/* Give pages back at a rebase once a backlog reached this far. */
#define RING_RELEASE_AT (256u << 10)

struct ring {
	/* Written only by the producer. */
	alignas(RING_CACHELINE) _Atomic uint64_t head;
	uint64_t tail_cache; /* producer's last acquired tail; may be stale
	                        (too low), which only under-reports space */
	_Atomic uint64_t dropped;
	/* Index whose record starts at byte 0.  Written by the producer only
	 * while the ring is empty, before the release of head that publishes
	 * the first record at it; the consumer reads it after acquiring that
	 * head, and it cannot change while the consumer has records to read.
	 * Relaxed atomic: the ordering comes from head and tail. */
	_Atomic uint64_t base;
	size_t reach; /* furthest byte written since the last release */

	/* Written only by the consumer. */
	alignas(RING_CACHELINE) _Atomic uint64_t tail;
	uint64_t head_cache; /* consumer's last acquired head; may be stale */
	uint64_t base_cache; /* base as of head_cache */
	_Atomic uint64_t oversize;

	/* Set once by ring_new, read-only afterwards. */
	alignas(RING_CACHELINE) uint64_t mask; /* capacity - 1 */
	uint64_t rebase_at;  /* bytes into the buffer: see the top */
	uint64_t release_at; /* likewise */
	unsigned char *buf; /* owns: capacity bytes, allocated with the ring */
};

static size_t round_capacity(size_t want)
{
	size_t cap = RING_MIN_CAPACITY;

	while (cap < want) {
		if (cap > SIZE_MAX / 2)
			return 0;
		cap *= 2;
	}
	return cap;
}

struct ring *ring_new(size_t capacity)
{
	size_t cap = round_capacity(capacity);
	struct ring *r;

	/* The struct size is a multiple of the cache line and cap a power of
	 * two >= 4096, so the total satisfies aligned_alloc's size rule. */
	if (cap == 0 || cap > SIZE_MAX - sizeof(*r))
		return NULL;
	r = aligned_alloc(RING_CACHELINE, sizeof(*r) + cap);
	if (r == NULL)
		return NULL;
	atomic_init(&r->head, 0);
	r->tail_cache = 0;
	atomic_init(&r->dropped, 0);
	atomic_init(&r->base, 0);
	atomic_init(&r->tail, 0);
	r->head_cache = 0;
	r->base_cache = 0;
	atomic_init(&r->oversize, 0);
	r->mask = cap - 1;
	r->rebase_at = cap / 4 < RING_REBASE_AT ? cap / 4 : RING_REBASE_AT;
	r->release_at = cap / 2 < RING_RELEASE_AT ? cap / 2 : RING_RELEASE_AT;
	r->reach = 0;
	r->buf = (unsigned char *)(r + 1);
	return r;
}

void ring_free(struct ring *r)
{
	free(r);
}

size_t ring_capacity(const struct ring *r)
{
	return (size_t)r->mask + 1;
}

/* Copy len bytes to byte off of the buffer, splitting at its end. */
static void copy_in(struct ring *r, size_t off, const void *src, size_t len)
{
	size_t first = ring_capacity(r) - off;

	if (first >= len) {
		memcpy(r->buf + off, src, len);
		return;
	}
	memcpy(r->buf + off, src, first);
	memcpy(r->buf, (const unsigned char *)src + first, len - first);
}

static void copy_out(const struct ring *r, size_t off, void *dst, size_t len)
{
	size_t first = ring_capacity(r) - off;

	if (first >= len) {
		memcpy(dst, r->buf + off, len);
		return;
	}
	memcpy(dst, r->buf + off, first);
	memcpy((unsigned char *)dst + first, r->buf, len - first);
}

/* The consumer trusts rec_header.size to find the next record, so a push
 * whose header disagrees with len would desynchronise the stream. */
static bool push_is_valid(const struct ring *r, const void *rec, size_t len)
{
	struct rec_header h;

	if (len == 0 || len % 8 != 0 || len > ring_capacity(r) / 2)
		return false;
	memcpy(&h, rec, sizeof(h)); /* rec need not be aligned */
	return h.size == len;
}

/* Producer only: the single writer may bump with load+store, which is
 * cheaper than an atomic read-modify-write. */
static void count_drop(struct ring *r)
{
	uint64_t n = atomic_load_explicit(&r->dropped, memory_order_relaxed);

	atomic_store_explicit(&r->dropped, n + 1, memory_order_relaxed);
}

/* Producer only, with the ring empty: give back the pages a backlog
 * touched past rebase_at (see the top).  A failed madvise only leaves
 * them resident. */
static void release_reach(struct ring *r)
{
	if (r->reach <= r->release_at)
		return;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)r->buf + r->rebase_at + page - 1) & ~(page - 1);
	/* Whole pages inside the buffer only: a small ring shares its first
	 * and last pages with other heap blocks. */
	uintptr_t hi = ((uintptr_t)r->buf + r->reach) & ~(page - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
	r->reach = 0;
}

/* Producer only: the byte the record at head goes to, after rebasing
 * when the ring is empty and head is far into the buffer.  Empty is
 * judged on an acquired tail: the consumer has finished reading every
 * byte, and its last read of base came before. */
static size_t producer_offset(struct ring *r, uint64_t head)
{
	uint64_t base = atomic_load_explicit(&r->base, memory_order_relaxed);
	size_t off = (size_t)((head - base) & r->mask);

	if (off < r->rebase_at)
		return off;
	if (r->tail_cache != head)
		r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (r->tail_cache != head)
		return off;
	atomic_store_explicit(&r->base, head, memory_order_relaxed);
	release_reach(r);
	return 0;
}

bool ring_push(struct ring *r, const void *rec, size_t len)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t cap = ring_capacity(r);

	if (!push_is_valid(r, rec, len))
		return false;
	if (head + len - r->tail_cache > cap) {
		/* Acquire pairs with the consumer's release of tail: its reads
		 * of the bytes we are about to overwrite are finished. */
		r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (head + len - r->tail_cache > cap) {
			count_drop(r);
			return false;
		}
	}
	size_t off = producer_offset(r, head);
	copy_in(r, off, rec, len);
	if (off + len > r->reach)
		r->reach = off + len > cap ? cap : off + len;
	atomic_store_explicit(&r->head, head + len, memory_order_release);
	return true;
}

/* Consumer only.  True when at least one record is ready at tail. */
static bool consumer_has_data(struct ring *r, uint64_t tail)
{
	if (r->head_cache != tail)
		return true;
	/* Acquire pairs with the producer's release of head: every byte of
	 * the records it covers is visible. */
	r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
	/* After the acquire: a rebase before this head is visible, and none
	 * can follow while [tail, head_cache) is unread. */
	r->base_cache = atomic_load_explicit(&r->base, memory_order_relaxed);
	return r->head_cache != tail;
}

static void count_oversize(struct ring *r)
{
	uint64_t n = atomic_load_explicit(&r->oversize, memory_order_relaxed);

	atomic_store_explicit(&r->oversize, n + 1, memory_order_relaxed);
}

size_t ring_pop(struct ring *r, void *buf, size_t cap)
{
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);

	while (consumer_has_data(r, tail)) {
		struct rec_header h;
		size_t size;

		size_t off = (size_t)((tail - r->base_cache) & r->mask);

		/* tail and base are multiples of 8, so the header never wraps;
		 * copy_out copes either way. */
		copy_out(r, off, &h, sizeof(h));
		size = h.size;
		assert(size >= sizeof(h) && size % 8 == 0 &&
		       size <= r->head_cache - tail);
		if (size <= cap)
			copy_out(r, off, buf, size);
		else
			count_oversize(r);
		/* Release: our reads of these bytes happen before the producer
		 * may overwrite them. */
		tail += size;
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		if (size <= cap)
			return size;
	}
	return 0;
}

uint64_t ring_dropped(const struct ring *r)
{
	return atomic_load_explicit(&r->dropped, memory_order_relaxed);
}

uint64_t ring_oversize(const struct ring *r)
{
	return atomic_load_explicit(&r->oversize, memory_order_relaxed);
}

size_t ring_used(const struct ring *r)
{
	/* Tail first: head read afterwards is at least as new, so the
	 * difference never goes negative; a third thread may still see the
	 * consumer advance in between, hence the clamp. */
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t used = head - tail;

	return used > ring_capacity(r) ? ring_capacity(r) : (size_t)used;
}
