/* test_same_stack.c - issue 12: identical consecutive stacks must not be
 * re-hashed frame by frame.  A thread whose stack is the same as at its
 * previous sample is counted from the frames it resolved then (one
 * memcmp against its memo), not resolved again one frame at a time
 * (a frame-cache lookup each); a thread of its own, a changed frame or a
 * sweep (which may renumber rows or drop codes) resolves anew.  The rows
 * counted stay what every sample says. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "profile/aggregator.h"
#include "profile/aggregator_priv.h"
#include "profile/snapshot.h"
#include "sim_stream.h"
#include "transport/record.h"

#define DEPTH 400u
#define N 1000u

static uint64_t buf[(sizeof(struct rec_sample) + DEPTH * sizeof(struct rec_frame)) / 8 + 1];

/* One sample of tid: the codes DEPTH..1, leaf first, the leaf at
 * instruction offset leaf_off. */
static void sample(struct aggregator *a, pid_t tid, int32_t leaf_off)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *s + DEPTH * sizeof(struct rec_frame)) },
		.time_ns = 1, .interval_ns = 1000000, .tid = tid, .pid = 7,
		.nframes = DEPTH, .flags = SAMPLE_RUNNING,
	};
	for (uint32_t i = 0; i < DEPTH; i++)
		s->frames[i] = (struct rec_frame){ DEPTH - i, i == 0 ? leaf_off : 0 };
	aggregator_ingest(a, s, s->h.size);
}

static struct aggregator *setup(void)
{
	struct aggregator *a = aggregator_new(true);
	cr_assert_not_null(a);
	a->next_sweep_ns = UINT64_MAX; /* no sweep but the test's */
	for (uint32_t id = 1; id <= DEPTH; id++)
		sim_def_code(a, id, id);
	return a;
}

/* Every function is on every sample once: total = samples; the leaf's
 * own = samples; nothing else own. */
static void check_rows(struct aggregator *a, uint64_t samples)
{
	struct snapshot s = { .funcs = NULL };
	aggregator_snapshot(a, &s);
	cr_assert_eq(s.samples, samples);
	cr_assert_eq(s.nfuncs, DEPTH, "%zu functions", s.nfuncs);
	for (size_t i = 0; i < s.nfuncs; i++) {
		bool leaf = strcmp(s.funcs[i].name, "f400") == 0;
		cr_assert_eq(s.funcs[i].c.total, samples, "%s: total %llu", s.funcs[i].name,
		             (unsigned long long)s.funcs[i].c.total);
		cr_assert_eq(s.funcs[i].c.own, leaf ? samples : 0, "%s: own %llu",
		             s.funcs[i].name, (unsigned long long)s.funcs[i].c.own);
	}
	snapshot_free(&s);
}

Test(same_stack, an_unchanged_deep_stack_is_resolved_once)
{
	struct aggregator *a = setup();
	for (unsigned i = 0; i < N; i++)
		sample(a, 11, 0);
	cr_expect_eq(a->frames_resolved, DEPTH, "%llu frames resolved for %u samples of one stack",
	             (unsigned long long)a->frames_resolved, N);
	check_rows(a, N);
	aggregator_free(a);
}

Test(same_stack, another_thread_a_changed_frame_or_a_sweep_resolve_anew)
{
	struct aggregator *a = setup();
	for (unsigned i = 0; i < N; i++) {
		sample(a, 11, 0);
		sample(a, 12, 0);
	}
	cr_expect_eq(a->frames_resolved, 2 * DEPTH, "two threads: %llu frames resolved",
	             (unsigned long long)a->frames_resolved);
	sample(a, 11, 2); /* the leaf moved on */
	sample(a, 11, 2);
	cr_expect_eq(a->frames_resolved, 3 * DEPTH, "a changed leaf: %llu frames resolved",
	             (unsigned long long)a->frames_resolved);
	a->next_sweep_ns = 0;
	agg_sweep(a);
	a->next_sweep_ns = UINT64_MAX;
	sample(a, 11, 2);
	sample(a, 11, 2);
	cr_expect_eq(a->frames_resolved, 4 * DEPTH, "after a sweep: %llu frames resolved",
	             (unsigned long long)a->frames_resolved);
	check_rows(a, 2 * N + 4);
	aggregator_free(a);
}
