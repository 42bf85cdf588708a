/* ring.h - lock-free single-producer / single-consumer byte ring carrying
 * variable-size records (record.h) from the sampler to the aggregator.
 *
 * Concurrency contract:
 *  - Exactly one thread may call ring_push (the producer) and exactly one
 *    thread may call ring_pop (the consumer) at any time.  The two may be
 *    different threads and run concurrently.  ring_dropped, ring_oversize
 *    and ring_used may be called from any thread.
 *  - ring_push never blocks, never allocates and never takes a lock: when
 *    the record does not fit, it is discarded, the drop counter is
 *    incremented, and ring_push returns false.
 *  - A record is published with a release store of the producer index after
 *    its bytes are written; the consumer loads that index with acquire, so
 *    it sees every byte of a record it can see at all.  The consumer frees
 *    space with a release store of its index, which the producer acquires
 *    before reusing those bytes.
 *  - Indices are free-running 64-bit counters (no wrap in practice); each
 *    lives on its own cache line so the two threads do not false-share.
 *  - Index i lives at byte (i - base) & (capacity - 1).  The producer
 *    moves base, so that its next record starts at byte 0, only when it
 *    finds the ring empty past 64 KiB (a quarter of a smaller ring) into
 *    the buffer: a ring that is drained as it fills touches only its
 *    first pages, however long it runs (its RSS stays flat), and no
 *    capacity is lost.
 *  - Records are copied in and out with wrap-around; a record may straddle
 *    the end of the buffer.  The maximum record size is capacity / 2.
 */
#ifndef PYTOP_RING_H
#define PYTOP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring;

/* capacity is rounded up to a power of two (minimum 4096).  NULL on OOM. */
struct ring *ring_new(size_t capacity);
void ring_free(struct ring *r);
size_t ring_capacity(const struct ring *r);

/* Producer: copy len bytes (a whole record, len a multiple of 8, > 0).
 * rec must start with a struct rec_header whose size equals len: the
 * consumer finds record boundaries from that field.  A malformed push
 * (len 0, not a multiple of 8, above capacity / 2, or header size != len)
 * is a caller bug: it returns false and is NOT counted in ring_dropped. */
bool ring_push(struct ring *r, const void *rec, size_t len);

/* Consumer: if a record is available, copy it into buf (at most cap bytes)
 * and return its length; return 0 when the ring is empty.  A record larger
 * than cap is skipped and counted in ring_oversize(); returns 0 then only if
 * no further record is ready. */
size_t ring_pop(struct ring *r, void *buf, size_t cap);

/* Records discarded by ring_push because the ring was full. */
uint64_t ring_dropped(const struct ring *r);
/* Records skipped by ring_pop because they were larger than its buffer. */
uint64_t ring_oversize(const struct ring *r);
/* Bytes currently queued (approximate when called by a third thread).
 * The producer never sees it too low, so capacity - ring_used bytes are
 * free for its next push. */
size_t ring_used(const struct ring *r);

#endif
