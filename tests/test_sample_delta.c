/* The consumer's side of REC_SAMPLE_DELTA (src/profile/sample_delta.h): a
 * delta becomes exactly the whole REC_SAMPLE the sampler would have sent,
 * chains of deltas stay right as the stack moves at its leaf, and a delta
 * that cannot be rebuilt reaches the aggregator unchanged (counted bad
 * there), never as a made-up stack. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "profile/sample_delta.h"
#include "transport/record.h"

#define MAXF 64

static _Alignas(8) uint8_t buf[sizeof(struct rec_sample) + MAXF * sizeof(struct rec_frame) + 8];

/* A whole sample of thread tid with frames f (leaf first). */
static size_t whole(uint64_t t, int32_t tid, const struct rec_frame *f, uint16_t n)
{
	struct rec_sample *r = (struct rec_sample *)buf;
	size_t size = sizeof(*r) + n * sizeof(*f);

	*r = (struct rec_sample){ .h = { REC_SAMPLE, (uint32_t)size }, .time_ns = t, .tid = tid,
	                          .pid = 42, .nframes = n, .flags = SAMPLE_RUNNING,
	                          .cpu_user_ns = 7 };
	memcpy(r->frames, f, n * sizeof(*f));
	return size;
}

/* The delta the sampler sends for the same sample when its outer `keep`
 * frames are the previous sample's. */
static size_t delta(uint64_t t, int32_t tid, const struct rec_frame *f, uint16_t n,
                    uint32_t keep)
{
	struct rec_sample *r = (struct rec_sample *)buf;
	uint32_t nsend = n - keep;
	size_t size = sizeof(*r) + nsend * sizeof(*f) + sizeof(struct rec_sample_keep);

	whole(t, tid, f, n);
	r->h = (struct rec_header){ REC_SAMPLE_DELTA, (uint32_t)size };
	memcpy(&r->frames[nsend], &(struct rec_sample_keep){ .keep = keep }, 8);
	return size;
}

static void frames(struct rec_frame *f, uint16_t n, uint32_t leaf_code)
{
	for (uint16_t i = 0; i < n; i++)
		f[i] = (struct rec_frame){ 100 + (uint32_t)(n - i), (int32_t)i * 2 };
	f[0].code_id = leaf_code;
}

static void expect_whole(const void *got, size_t len, uint64_t t, int32_t tid,
                         const struct rec_frame *f, uint16_t n)
{
	const struct rec_sample *r = got;

	cr_assert_eq(len, sizeof(*r) + n * sizeof(*f));
	cr_assert_eq(r->h.type, REC_SAMPLE);
	cr_assert_eq(r->h.size, len);
	cr_assert_eq(r->nframes, n);
	cr_assert_eq(r->time_ns, t);
	cr_assert_eq(r->tid, tid);
	cr_assert_eq(r->cpu_user_ns, 7);
	for (uint16_t i = 0; i < n; i++)
		cr_assert(r->frames[i].code_id == f[i].code_id &&
		          r->frames[i].instr_offset == f[i].instr_offset,
		          "frame %u: %u+%d, want %u+%d", i, r->frames[i].code_id,
		          r->frames[i].instr_offset, f[i].code_id, f[i].instr_offset);
}

Test(sample_delta, rebuilds_the_whole_sample_along_a_chain)
{
	struct sample_delta *d = sample_delta_new();
	struct rec_frame a[MAXF], b[MAXF + 1];
	size_t len, out;
	const void *got;

	cr_assert_not_null(d);
	frames(a, 40, 1);
	len = whole(1000, 7, a, 40);
	cr_assert_eq(sample_delta_expand(d, buf, len, &out), buf, "a whole sample passes as is");
	/* Same outer 39 frames, another leaf. */
	memcpy(b, a, sizeof(a));
	b[0] = (struct rec_frame){ 9, 4 };
	len = delta(2000, 7, b, 40, 39);
	got = sample_delta_expand(d, buf, len, &out);
	cr_assert_neq(got, buf);
	expect_whole(got, out, 2000, 7, b, 40);
	/* One frame deeper, on top of the rebuilt one: a chain of deltas. */
	memmove(b + 1, b, 40 * sizeof(*b));
	b[0] = (struct rec_frame){ 11, 6 };
	len = delta(3000, 7, b, 41, 40);
	got = sample_delta_expand(d, buf, len, &out);
	expect_whole(got, out, 3000, 7, b, 41);
	/* Back up to 20 frames, all of them kept. */
	len = delta(4000, 7, b + 21, 20, 20);
	got = sample_delta_expand(d, buf, len, &out);
	expect_whole(got, out, 4000, 7, b + 21, 20);
	sample_delta_free(d);
}

Test(sample_delta, threads_are_kept_apart)
{
	struct sample_delta *d = sample_delta_new();
	struct rec_frame a[8], b[8];
	size_t out;

	frames(a, 8, 1);
	frames(b, 8, 2);
	b[7].code_id = 555; /* another outermost frame */
	sample_delta_expand(d, buf, whole(10, 1, a, 8), &out);
	sample_delta_expand(d, buf, whole(10, 2, b, 8), &out);
	const void *got = sample_delta_expand(d, buf, delta(20, 2, b, 8, 8), &out);
	expect_whole(got, out, 20, 2, b, 8);
	got = sample_delta_expand(d, buf, delta(20, 1, a, 8, 8), &out);
	expect_whole(got, out, 20, 1, a, 8);
	cr_assert_eq(sample_delta_threads(d), 2);
	sample_delta_free(d);
}

Test(sample_delta, what_cannot_be_rebuilt_passes_unchanged)
{
	struct sample_delta *d = sample_delta_new();
	struct rec_frame a[8];
	size_t len, out;

	frames(a, 8, 1);
	len = delta(10, 3, a, 8, 4);
	cr_assert_eq(sample_delta_expand(d, buf, len, &out), buf, "no previous sample");
	cr_assert_eq(out, len);
	sample_delta_expand(d, buf, whole(20, 3, a, 4), &out);
	len = delta(30, 3, a, 8, 6);
	cr_assert_eq(sample_delta_expand(d, buf, len, &out), buf, "keeps more than it had");
	len = delta(30, 3, a, 8, 2);
	((struct rec_sample *)buf)->h.size += 8;
	cr_assert_eq(sample_delta_expand(d, buf, len + 8, &out), buf, "size does not add up");
	len = delta(30, 3, a, 8, 2);
	memcpy((uint8_t *)buf + len - 8, &(struct rec_sample_keep){ .keep = 9 }, 8);
	cr_assert_eq(sample_delta_expand(d, buf, len, &out), buf, "keep past nframes");
	sample_delta_free(d);
}

Test(sample_delta, threads_gone_quiet_are_forgotten)
{
	struct sample_delta *d = sample_delta_new();
	struct rec_frame a[4];
	size_t out;

	frames(a, 4, 1);
	for (int32_t tid = 1; tid <= 100; tid++)
		sample_delta_expand(d, buf, whole(1000, tid, a, 4), &out);
	cr_assert_eq(sample_delta_threads(d), 100);
	/* Thread 1 goes on; the others end.  Long after, the sweep has
	 * dropped them. */
	for (uint64_t i = 1; i <= 5000; i++)
		sample_delta_expand(d, buf, whole(1000 + i * 1000000, 1, a, 4), &out);
	cr_assert_eq(sample_delta_threads(d), 1);
	const void *got = sample_delta_expand(d, buf, delta(5001000000ull + 1000, 2, a, 4, 4), &out);
	cr_assert_eq(got, buf, "a forgotten thread's delta is not rebuilt");
	sample_delta_free(d);
}
