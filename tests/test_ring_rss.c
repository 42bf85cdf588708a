/* test_ring_rss.c - a ring drained as it fills keeps its RSS flat: the
 * session's 16 MiB ring under a slow, steady stream (1 kHz for an hour)
 * must not touch its pages one by one as the indices go round (issue 15's
 * soak: pytop grew by the whole buffer over the first laps). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "transport/record.h"
#include "transport/ring.h"

#define RING_CAP (16u << 20) /* the session's RING_BYTES */
#define REC_BYTES 256u

/* The resident bytes of the mapping that holds address p (its Rss line
 * in /proc/self/smaps).  The ring's 16 MiB is one allocation large enough
 * to get a mapping of its own (glibc's and the sanitizer's allocators
 * alike); the whole process's RSS would also count what the test's
 * asserts allocate, which the sanitizer's quarantine keeps resident. */
static size_t resident_bytes_at(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	uintptr_t at = (uintptr_t)p;
	bool inside = false;
	size_t kib = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ':') != NULL &&
		    line[0] != ' ' && strncmp(line, "Rss:", 4) != 0) {
			inside = at >= lo && at < hi;
			continue;
		}
		if (inside && sscanf(line, "Rss: %zu kB", &kib) == 1)
			break;
	}
	fclose(f);
	cr_assert(inside, "no mapping holds the ring at %p", p);
	return kib << 10;
}

static void make_rec(uint64_t *w, uint64_t seq)
{
	struct rec_header h = { .type = REC_SAMPLE, .size = REC_BYTES };

	memcpy(&w[0], &h, sizeof(h));
	for (size_t i = 1; i < REC_BYTES / 8; i++)
		w[i] = seq * 64 + i;
}

/* Queue records seq .. seq + n - 1 without reading any. */
static void push_backlog(struct ring *r, uint64_t seq, size_t n)
{
	static uint64_t w[REC_BYTES / 8];
	for (size_t i = 0; i < n; i++) {
		make_rec(w, seq + i);
		cr_assert(ring_push(r, w, REC_BYTES), "push %llu",
		          (unsigned long long)(seq + i));
	}
}

/* Read back records seq .. seq + n - 1, each intact. */
static void drain_backlog(struct ring *r, uint64_t seq, size_t n)
{
	static uint64_t w[REC_BYTES / 8], got[REC_BYTES / 8];
	for (size_t i = 0; i < n; i++) {
		make_rec(w, seq + i);
		cr_assert_eq(ring_pop(r, got, sizeof(got)), REC_BYTES);
		cr_assert(memcmp(got, w, REC_BYTES) == 0, "record %llu corrupted",
		          (unsigned long long)(seq + i));
	}
}

/* Four laps of the buffer, one record in flight at a time, as a consumer
 * that keeps up sees them: every record comes back intact, and the
 * ring's resident memory grows by far less than the buffer (it grew by all of it,
 * 16 MiB, when each index kept its own byte). */
Test(ring_rss, drained_ring_touches_only_its_first_pages)
{
	static uint64_t w[REC_BYTES / 8], got[REC_BYTES / 8];
	struct ring *r = ring_new(RING_CAP);
	size_t laps = 4, n = laps * (RING_CAP / REC_BYTES);

	cr_assert_not_null(r);
	size_t before = resident_bytes_at(r);
	for (uint64_t seq = 0; seq < n; seq++) {
		make_rec(w, seq);
		cr_assert(ring_push(r, w, REC_BYTES), "push %llu",
		          (unsigned long long)seq);
		cr_assert_eq(ring_pop(r, got, sizeof(got)), REC_BYTES);
		cr_assert(memcmp(got, w, REC_BYTES) == 0, "record %llu corrupted",
		          (unsigned long long)seq);
	}
	size_t grown = resident_bytes_at(r) - before;
	cr_expect_lt(grown, 1u << 20, "RSS grew by %zu KiB over %zu laps of a "
	             "%u MiB ring that never held more than one record",
	             grown >> 10, laps, RING_CAP >> 20);
	ring_free(r);
}

/* A backlog touches the pages it needs, and the next drained stretch
 * goes back to the start: RSS after a burst and many more laps stays
 * within the burst's reach. */
Test(ring_rss, burst_then_steady_stays_within_the_burst)
{
	static uint64_t w[REC_BYTES / 8], got[REC_BYTES / 8];
	struct ring *r = ring_new(RING_CAP);
	size_t burst = (2u << 20) / REC_BYTES; /* 2 MiB queued at once */

	cr_assert_not_null(r);
	size_t before = resident_bytes_at(r);
	uint64_t seq = burst;
	push_backlog(r, 0, burst);
	drain_backlog(r, 0, burst);
	for (size_t i = 0; i < 4 * (RING_CAP / REC_BYTES); i++, seq++) {
		make_rec(w, seq);
		cr_assert(ring_push(r, w, REC_BYTES));
		cr_assert_eq(ring_pop(r, got, sizeof(got)), REC_BYTES);
		cr_assert(memcmp(got, w, REC_BYTES) == 0);
	}
	size_t grown = resident_bytes_at(r) - before;
	cr_expect_lt(grown, (2u << 20) + (1u << 20), "RSS grew by %zu KiB after "
	             "a 2 MiB burst and four laps one record at a time",
	             grown >> 10);
	ring_free(r);
}

/* The pages a backlog touched are given back once the ring has been
 * drained and rebased: a 2 MiB burst followed by a stretch of records
 * one at a time leaves the ring as small as if the burst had not been
 * (the soak's ring kept a backlog's 1 MiB resident for the rest of the
 * hour). */
Test(ring_rss, burst_pages_are_given_back_after_the_backlog)
{
	static uint64_t w[REC_BYTES / 8], got[REC_BYTES / 8];
	struct ring *r = ring_new(RING_CAP);
	size_t burst = (2u << 20) / REC_BYTES;

	cr_assert_not_null(r);
	size_t before = resident_bytes_at(r);
	uint64_t seq = burst;
	push_backlog(r, 0, burst);
	size_t at_burst = resident_bytes_at(r) - before;
	drain_backlog(r, 0, burst);
	/* Past the rebase point twice: the first rebase gives back. */
	for (size_t i = 0; i < 2 * (128u << 10) / REC_BYTES; i++, seq++) {
		make_rec(w, seq);
		cr_assert(ring_push(r, w, REC_BYTES));
		cr_assert_eq(ring_pop(r, got, sizeof(got)), REC_BYTES);
		cr_assert(memcmp(got, w, REC_BYTES) == 0, "record %llu corrupted",
		          (unsigned long long)seq);
	}
	size_t after = resident_bytes_at(r) - before;
	cr_expect_geq(at_burst, 3u << 19, "the burst touched only %zu KiB",
	              at_burst >> 10);
	cr_expect_lt(after, 512u << 10, "%zu KiB still resident after the "
	             "2 MiB backlog was drained and the ring rebased",
	             after >> 10);
	ring_free(r);
}
