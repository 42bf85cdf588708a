/* test_ring.c - the SPSC ring: single-threaded behaviour checked against a
 * model, and two-thread stress runs that check order, payload integrity and
 * exact drop accounting.  The same file is built under ThreadSanitizer by
 * `make tsan-ring`, with standalone_runner.h in place of Criterion. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Criterion's runner cannot start under ThreadSanitizer; such builds use
 * an in-process stand-in (see standalone_runner.h). */
#if defined(__SANITIZE_THREAD__) && !defined(RING_TEST_STANDALONE)
#define RING_TEST_STANDALONE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) && !defined(RING_TEST_STANDALONE)
#define RING_TEST_STANDALONE 1
#endif
#endif

#ifdef RING_TEST_STANDALONE
#include "standalone_runner.h"
#else
#include <criterion/criterion.h>
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "transport/record.h"
#include "transport/ring.h"

#define MAX_REC 4096 /* bytes; enough for any record the tests push */

/* Records are uint64_t words: word 0 is the header, word 1 the sequence
 * number (when size >= 16), the rest a payload derived from both. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15u;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

static void make_rec(uint64_t *w, uint32_t size, uint64_t seq)
{
	struct rec_header h = { .type = REC_SAMPLE, .size = size };

	memcpy(&w[0], &h, sizeof(h));
	if (size >= 16)
		w[1] = seq;
	for (uint32_t i = 2; i < size / 8; i++)
		w[i] = mix(seq * 1024 + i);
}

/* Asserts the record in w is exactly make_rec(size, seq). */
static void check_rec(const uint64_t *w, size_t len, uint32_t size, uint64_t seq)
{
	uint64_t want[MAX_REC / 8];

	cr_assert_eq(len, size, "popped %zu bytes, expected %u", len, size);
	make_rec(want, size, seq);
	cr_assert(memcmp(w, want, size) == 0, "record seq %llu (size %u) corrupted",
		  (unsigned long long)seq, size);
}

static bool push_rec(struct ring *r, uint32_t size, uint64_t seq)
{
	uint64_t w[MAX_REC / 8];

	make_rec(w, size, seq);
	return ring_push(r, w, size);
}

static void pop_check(struct ring *r, uint32_t size, uint64_t seq)
{
	uint64_t w[MAX_REC / 8];

	check_rec(w, ring_pop(r, w, sizeof(w)), size, seq);
}

static struct ring *new_ring(size_t cap)
{
	struct ring *r = ring_new(cap);

	cr_assert_not_null(r);
	return r;
}

Test(ring, capacity_is_rounded_to_power_of_two)
{
	size_t cases[][2] = { { 0, 4096 },     { 1, 4096 },      { 4096, 4096 },
			      { 4097, 8192 },  { 65536, 65536 }, { 65537, 131072 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ring *r = new_ring(cases[i][0]);

		cr_expect_eq(ring_capacity(r), cases[i][1], "ring_new(%zu)", cases[i][0]);
		ring_free(r);
	}
	cr_expect_null(ring_new(SIZE_MAX));
}

Test(ring, empty_ring_pops_nothing)
{
	struct ring *r = new_ring(4096);
	uint64_t w[8] = { 0 };

	cr_expect_eq(ring_pop(r, w, sizeof(w)), 0);
	cr_expect_eq(ring_pop(r, w, sizeof(w)), 0);
	cr_expect_eq(ring_used(r), 0);
	cr_expect_eq(ring_dropped(r), 0);
	cr_expect_eq(ring_oversize(r), 0);
	ring_free(r);
}

Test(ring, round_trip_every_size)
{
	struct ring *r = new_ring(4096);

	for (uint32_t size = 8; size <= 2048; size += 8) {
		cr_assert(push_rec(r, size, size));
		cr_assert_eq(ring_used(r), size);
		pop_check(r, size, size);
		cr_assert_eq(ring_used(r), 0);
	}
	cr_expect_eq(ring_dropped(r), 0);
	ring_free(r);
}

Test(ring, several_records_in_flight_come_out_in_order)
{
	static const uint32_t sizes[] = { 16, 24, 8, 64, 1000, 2048, 32, 112 };
	const size_t n = sizeof(sizes) / sizeof(sizes[0]);
	struct ring *r = new_ring(8192);
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		cr_assert(push_rec(r, sizes[i], 100 + i));
		total += sizes[i];
	}
	cr_expect_eq(ring_used(r), total);
	for (size_t i = 0; i < n; i++)
		pop_check(r, sizes[i], 100 + i);
	cr_expect_eq(ring_used(r), 0);
	ring_free(r);
}

Test(ring, malformed_pushes_are_refused_and_not_counted)
{
	struct ring *r = new_ring(4096);
	uint64_t w[MAX_REC / 8];

	make_rec(w, 24, 1);
	cr_expect_not(ring_push(r, w, 0), "len 0");
	make_rec(w, 12, 1);
	cr_expect_not(ring_push(r, w, 12), "len not a multiple of 8");
	make_rec(w, 2056, 1);
	cr_expect_not(ring_push(r, w, 2056), "len above capacity / 2");
	make_rec(w, 32, 1);
	cr_expect_not(ring_push(r, w, 24), "header size != len");
	cr_expect_eq(ring_dropped(r), 0);
	cr_expect_eq(ring_used(r), 0);
	cr_expect(push_rec(r, 2048, 2), "exactly capacity / 2 is allowed");
	ring_free(r);
}

Test(ring, full_ring_drops_and_counts_exactly)
{
	struct ring *r = new_ring(4096);
	uint64_t seq = 0;

	/* 170 * 24 = 4080: the 171st does not fit, 16 bytes remain. */
	while (push_rec(r, 24, seq))
		seq++;
	cr_assert_eq(seq, 170);
	cr_assert_eq(ring_dropped(r), 1);
	cr_assert_eq(ring_used(r), 4080);
	for (int i = 0; i < 5; i++)
		cr_assert_not(push_rec(r, 24, 999));
	cr_assert_eq(ring_dropped(r), 6);
	cr_assert(push_rec(r, 16, seq++), "exact fit must succeed");
	cr_assert_eq(ring_used(r), 4096);
	cr_assert_not(push_rec(r, 8, 999));
	cr_assert_eq(ring_dropped(r), 7);

	/* Freeing one record makes room for exactly one more of its size. */
	pop_check(r, 24, 0);
	cr_assert_not(push_rec(r, 32, 999));
	cr_assert(push_rec(r, 24, seq));
	cr_assert_eq(ring_dropped(r), 8);
	for (uint64_t i = 1; i < 170; i++)
		pop_check(r, 24, i);
	pop_check(r, 16, 170);
	pop_check(r, 24, 171);
	cr_assert_eq(ring_pop(r, (uint64_t[4]){ 0 }, 32), 0);
	ring_free(r);
}

/* Shift the ring position by an odd number of 8-byte units per round, so
 * 512 rounds start records at every offset of a 4096-byte ring, including
 * 2048-byte records that straddle the end. */
Test(ring, wrap_around_at_every_offset)
{
	struct ring *r = new_ring(4096);
	uint64_t pos = 0, seq = 0;
	unsigned straddled = 0, header_at_end = 0;

	for (int round = 0; round < 512 * 2; round++) {
		static const uint32_t sizes[] = { 16, 40, 2048 };

		for (size_t i = 0; i < 3; i++) {
			uint64_t off = pos % 4096;

			straddled += off + sizes[i] > 4096;
			header_at_end += off == 4096 - 8;
			cr_assert(push_rec(r, sizes[i], seq + i));
			pos += sizes[i];
		}
		for (size_t i = 0; i < 3; i++)
			pop_check(r, sizes[i], seq + i);
		seq += 3;
	}
	cr_expect_gt(straddled, 500);
	cr_expect_gt(header_at_end, 0);
	cr_expect_eq(ring_dropped(r), 0);
	ring_free(r);
}

Test(ring, straddling_record_bytes_are_intact)
{
	struct ring *r = new_ring(4096);
	unsigned char in[2048], out[2048 + 8];
	struct rec_header h = { .type = REC_CODE_DEF, .size = sizeof(in) };

	/* Move to offset 3072, so the record has 1024 bytes on each side. */
	cr_assert(push_rec(r, 2048, 0));
	cr_assert(push_rec(r, 1024, 1));
	pop_check(r, 2048, 0);
	pop_check(r, 1024, 1);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	memcpy(in, &h, sizeof(h));
	cr_assert(ring_push(r, in, sizeof(in)));
	memset(out, 0xee, sizeof(out));
	cr_assert_eq(ring_pop(r, out, sizeof(out)), sizeof(in));
	cr_assert(memcmp(in, out, sizeof(in)) == 0);
	cr_assert_eq(out[sizeof(in)], 0xee, "ring_pop wrote past the record");
	ring_free(r);
}

Test(ring, oversize_record_is_skipped_and_counted)
{
	struct ring *r = new_ring(4096);
	uint64_t w[4];

	cr_assert(push_rec(r, 64, 1));
	cr_assert(push_rec(r, 16, 2));
	cr_assert(push_rec(r, 128, 3));
	check_rec(w, ring_pop(r, w, sizeof(w)), 16, 2);
	cr_expect_eq(ring_oversize(r), 1);
	cr_expect_eq(ring_pop(r, w, sizeof(w)), 0, "only an oversize record left");
	cr_expect_eq(ring_oversize(r), 2);
	cr_expect_eq(ring_used(r), 0);
	cr_expect_eq(ring_dropped(r), 0);
	ring_free(r);
}

/* Random pushes and pops against a FIFO model: every push must succeed
 * exactly when the model says the record fits. */
Test(ring, random_ops_match_model)
{
	enum { CAP = 4096, MAXQ = CAP / 8 };
	struct ring *r = new_ring(CAP);
	uint32_t qsize[MAXQ];
	uint64_t qseq[MAXQ];
	size_t qhead = 0, qlen = 0, used = 0;
	uint64_t seq = 0, drops = 0, rng = 42;

	for (int op = 0; op < 200000; op++) {
		rng = mix(rng);
		if (rng % 5 < 3) {
			uint32_t size = (uint32_t)(16 + 8 * ((rng >> 8) % 255));
			bool fits = used + size <= CAP;

			cr_assert_eq(push_rec(r, size, seq), fits, "op %d", op);
			if (fits) {
				qsize[(qhead + qlen) % MAXQ] = size;
				qseq[(qhead + qlen) % MAXQ] = seq;
				qlen++;
				used += size;
			} else {
				drops++;
			}
			seq++;
		} else if (qlen > 0) {
			pop_check(r, qsize[qhead], qseq[qhead]);
			used -= qsize[qhead];
			qhead = (qhead + 1) % MAXQ;
			qlen--;
		} else {
			cr_assert_eq(ring_pop(r, (uint64_t[4]){ 0 }, 32), 0);
		}
		cr_assert_eq(ring_used(r), used);
	}
	cr_expect_eq(ring_dropped(r), drops);
	cr_expect_gt(drops, 0);
	ring_free(r);
}

/* ---- two threads ------------------------------------------------------ */

/* Under ASan every push and pop is bounds-checked, so wrap-around bugs show
 * within a few hundred laps of the ring; the interleavings are TSan's job
 * (tsan-ring runs the full count).  A fifth of the attempts is still
 * thousands of laps and keeps the sanitizer run near its time budget. */
#if defined(__SANITIZE_ADDRESS__)
#define STRESS_ATTEMPTS 2000000u
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRESS_ATTEMPTS 2000000u
#endif
#endif
#ifndef STRESS_ATTEMPTS
#define STRESS_ATTEMPTS 10000000u
#endif
#define STRESS_RING (64 * 1024)
#define STALL_EVERY (1u << 20) /* consumer pauses this often (records) */

struct stress {
	struct ring *r;
	uint64_t attempts;
	bool no_drops;         /* producer waits for room instead of dropping */
	atomic_bool done;      /* producer finished */
	/* Producer's results, read after join. */
	uint64_t pushed, failed, pushed_sum;
	/* Consumer's results, read after join. */
	uint64_t received, received_sum, last_seq;
	bool order_ok, payload_ok;
	uint64_t bad_seq;
};

/* 16, 24 or 32 bytes: small, so millions pass in a second. */
static uint32_t stress_size(uint64_t seq)
{
	return (uint32_t)(16 + 8 * (seq % 3));
}

static void wait_for_room(struct stress *s, size_t size)
{
	while (ring_capacity(s->r) - ring_used(s->r) < size)
		sched_yield();
}

static void *producer(void *arg)
{
	struct stress *s = arg;
	uint64_t w[4];

	for (uint64_t seq = 0; seq < s->attempts; seq++) {
		uint32_t size = stress_size(seq);

		if (s->no_drops)
			wait_for_room(s, size);
		make_rec(w, size, seq);
		if (ring_push(s->r, w, size)) {
			s->pushed++;
			s->pushed_sum += seq;
		} else {
			/* Like the sampler, move on to the next record, but
			 * give the consumer the CPU so a full ring does not
			 * turn the run into millions of instant drops. */
			s->failed++;
			sched_yield();
		}
	}
	atomic_store_explicit(&s->done, true, memory_order_release);
	return NULL;
}

static bool stress_rec_ok(const uint64_t *w, size_t len)
{
	uint64_t want[4];

	if (len < 16)
		return false;
	make_rec(want, stress_size(w[1]), w[1]);
	return len == stress_size(w[1]) && memcmp(w, want, len) == 0;
}

/* Hold off consuming until the producer has dropped at least once more, so
 * the drop path really runs while records are in flight. */
static void stall_until_drop(struct stress *s)
{
	uint64_t d0 = ring_dropped(s->r);

	while (ring_dropped(s->r) == d0 &&
	       !atomic_load_explicit(&s->done, memory_order_acquire))
		sched_yield();
}

static void consume_one(struct stress *s, const uint64_t *w, size_t len)
{
	uint64_t seq = w[1];
	/* Strictly increasing; without drops also gap-free. */
	uint64_t expect_min = s->received > 0 ? s->last_seq + 1 : 0;

	if (!stress_rec_ok(w, len) && s->payload_ok) {
		s->payload_ok = false;
		s->bad_seq = s->received;
	}
	if (seq < expect_min || (s->no_drops && seq != expect_min))
		s->order_ok = false;
	s->last_seq = seq;
	s->received++;
	s->received_sum += seq;
}

static void *consumer(void *arg)
{
	struct stress *s = arg;
	uint64_t w[4];

	for (;;) {
		size_t len = ring_pop(s->r, w, sizeof(w));

		if (len == 0) {
			/* Re-check after seeing done: records pushed just
			 * before it must still be drained. */
			if (atomic_load_explicit(&s->done, memory_order_acquire) &&
			    ring_pop(s->r, w, sizeof(w)) == 0)
				break;
			sched_yield();
			continue;
		}
		consume_one(s, w, len);
		if (!s->no_drops && s->received % STALL_EVERY == 1)
			stall_until_drop(s);
	}
	return NULL;
}

static void run_stress(struct stress *s)
{
	pthread_t p, c;

	s->r = new_ring(STRESS_RING);
	s->order_ok = s->payload_ok = true;
	atomic_init(&s->done, false);
	cr_assert_eq(pthread_create(&c, NULL, consumer, s), 0);
	cr_assert_eq(pthread_create(&p, NULL, producer, s), 0);
	pthread_join(p, NULL);
	pthread_join(c, NULL);

	cr_assert(s->payload_ok, "payload corrupted at received record %llu",
		  (unsigned long long)s->bad_seq);
	cr_assert(s->order_ok, "records out of order");
	cr_assert_eq(s->pushed + s->failed, s->attempts);
	cr_assert_eq(ring_dropped(s->r), s->failed);
	cr_assert_eq(s->received, s->pushed, "received %llu, pushed %llu",
		     (unsigned long long)s->received, (unsigned long long)s->pushed);
	cr_assert_eq(s->received + ring_dropped(s->r), s->attempts);
	cr_assert_eq(s->received_sum, s->pushed_sum, "a different set of records arrived");
	cr_assert_eq(ring_used(s->r), 0);
	cr_assert_eq(ring_oversize(s->r), 0);
	ring_free(s->r);
}

Test(ring_stress, ten_million_attempts_with_drops, .timeout = 120)
{
	struct stress s = { .attempts = STRESS_ATTEMPTS };

	run_stress(&s);
	cr_expect_gt(s.failed, 0, "the consumer's stalls must cause drops");
	cr_expect_gt(s.received, s.attempts / 10, "records must flow, not only drop");
	cr_log_info("received %llu, dropped %llu", (unsigned long long)s.received,
		    (unsigned long long)s.failed);
}

Test(ring_stress, yielding_producer_never_drops, .timeout = 120)
{
	struct stress s = { .attempts = STRESS_ATTEMPTS / 4, .no_drops = true };

	run_stress(&s);
	cr_assert_eq(s.failed, 0);
	cr_assert_eq(s.received, s.attempts);
}
