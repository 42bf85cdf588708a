/* test_folded_rows.c - the stack table's own cap (STACK_MAX_CELLS): the
 * stacks with fewest samples fold into "[other stacks]", and what they
 * were samples of goes to folded_rows.h, so the functions, lines and
 * callees counted from a snapshot's stacks (stack_derive.h) are still the
 * row counters' figures after the fold: globally, per thread and per
 * process, the split included, shares settled after the fold (a
 * thread's system time, the memory it gives back) too, and after the
 * rows fold into "[other]" as well. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "derive_compare.h"
#include "profile/aggregator.h"
#include "profile/aggregator_priv.h"
#include "sample_oracle.h"
#include "sim_stream.h"
#include "transport/record.h"

#define MAIN 1u
#define HOT 2u
#define LEAF 100u   /* leaf_i is code LEAF + i */
#define MID 1000u   /* mid_j is code MID + j */
#define N 300u      /* N * N distinct stacks: over STACK_MAX_CELLS */
#define NAT 0x80000000u
#define MS 1000000ull

static uint64_t buf[64];
/* Thread 13 samples only before the stacks fold and after. */
static const pid_t tids[4] = { 11, 12, 21, 13 }, pids[4] = { 7, 7, 8, 7 };
#define EARLY 3

struct run {
	struct aggregator *a;
	struct sample_oracle *o; /* fed every record a gets */
	uint64_t n, cpu[4];
	bool stall[4]; /* the thread's CPU counters do not move */
};

static void sample(struct run *r, int k, const uint32_t *codes, uint16_t nframes,
                   uint64_t shrink)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	r->n++;
	if (!r->stall[k])
		r->cpu[k] += MS;
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *s + nframes * sizeof(struct rec_frame)) },
		.time_ns = r->n * MS, .interval_ns = (uint32_t)(MS + r->n % 7),
		.tid = tids[k], .pid = pids[k], .nframes = nframes,
		.flags = r->n % 3 ? SAMPLE_RUNNING : 0,
		.cpu_user_ns = r->cpu[k] * 7 / 10, .cpu_sys_ns = r->cpu[k] * 3 / 10,
		.minflt = r->n % 3, .mem_growth = r->n % 5 == 0 ? 8192 : 0,
		.mem_shrink = shrink,
	};
	for (uint16_t i = 0; i < nframes; i++)
		s->frames[i] = (struct rec_frame){ codes[i], 0 };
	aggregator_ingest(r->a, s, s->h.size);
	oracle_ingest(r->o, s, s->h.size);
}

static void setup(struct run *r)
{
	char name[32], file[32];
	*r = (struct run){ .a = aggregator_new(true), .o = oracle_new(true) };
	cr_assert(r->a != NULL && r->o != NULL);
	r->a->next_sweep_ns = UINT64_MAX;
	sim_tee(oracle_ingest_to, r->o);
	sim_def_code_as(r->a, MAIN, "main", "app.py", 1);
	sim_def_code_as(r->a, HOT, "hot", "app.py", 10);
	for (uint32_t i = 0; i < N; i++) {
		snprintf(name, sizeof name, "leaf_%u", i);
		snprintf(file, sizeof file, "leaf%u.py", i % 7);
		sim_def_code_as(r->a, LEAF + i, name, file, 1 + (int)i);
		snprintf(name, sizeof name, "mid_%u", i);
		sim_def_code_as(r->a, MID + i, name, "mid.py", 1 + (int)i);
	}
	cr_assert(aggregator_define_native(r->a, NAT, "nat", "lib.c", 0, "lib.so"));
	cr_assert(oracle_define_native(r->o, NAT, "nat", "lib.c", 0, "lib.so"));
	sim_def_process(r->a, 7, 0);
	sim_def_process(r->a, 8, 0);
}

static void sweep(struct run *r)
{
	r->a->next_sweep_ns = 0;
	agg_sweep(r->a);
	r->a->next_sweep_ns = UINT64_MAX;
}

/* Every (leaf, mid) pair once, a native leaf under every ninth, hot
 * often enough to be kept; thread 2 stalled (its samples queue).  First
 * the early thread's stacks, the oldest (they fold first), its samples
 * queued until after the fold. */
static void many_stacks(struct run *r)
{
	r->stall[2] = r->stall[EARLY] = true;
	for (uint32_t i = 0; i < 40; i++) {
		uint32_t early[] = { LEAF + i, MAIN }, nat[] = { NAT, LEAF + i, MAIN };
		r->n += r->n % 3 == 0; /* running */
		sample(r, EARLY, i % 4 ? early : nat, i % 4 ? 2 : 3, 0);
	}
	for (uint32_t i = 0; i < N; i++)
		for (uint32_t j = 0; j < N; j++) {
			int k = (int)((i + j) % 3);
			uint32_t plain[] = { LEAF + i, MID + j, MAIN };
			uint32_t nat[] = { NAT, LEAF + i, MID + j, MAIN };
			if ((i * N + j) % 9 == 0)
				sample(r, k, nat, 4, 0);
			else
				sample(r, k, plain, 3, 0);
			if (j % 30 == 0) {
				uint32_t hot[] = { HOT, MAIN };
				sample(r, k, hot, 2, 0);
			}
		}
}

/* After the fold: the stalled thread's counters move (its queued
 * samples, some on folded stacks, settle), and memory given back goes
 * where each thread's previous sample was, a folded stack. */
static void after_fold(struct run *r)
{
	uint32_t hot[] = { HOT, MAIN };
	uint64_t idx;
	cr_assert(hashmap_get(&r->a->thread_by_tid, (uint32_t)tids[EARLY], &idx));
	const struct agg_thread *t = &agg_threads(r->a)[idx];
	cr_assert_gt(t->queue.n, 0, "nothing queued: no test");
	cr_assert_lt(t->prev.cell, r->a->stacks.ncells);
	cr_assert_eq(r->a->stacks.cells[t->prev.cell].node, STACK_OTHER,
	             "the early stacks did not fold: no test");
	r->stall[2] = r->stall[EARLY] = false;
	for (int k = 0; k < 4; k++)
		sample(r, k, hot, 2, 4096u * (unsigned)(k + 1));
}

static void finish(struct run *r)
{
	sim_tee(NULL, NULL);
	oracle_free(r->o);
	aggregator_free(r->a);
}

/* A snapshot under a filter against the oracle. */
static void check(struct run *r, pid_t tid, pid_t pid)
{
	char label[64];
	snprintf(label, sizeof label, "tid %d pid %d", tid, pid);
	const struct derive_cmp c = { .label = label, .first_line = true };
	derive_check_oracle(&c, r->a, r->o, tid, pid, true);
}

static void check_all(struct run *r)
{
	check(r, 0, 0);
	check(r, tids[0], 0);
	check(r, tids[2], 0);
	check(r, tids[EARLY], 0);
	check(r, 0, pids[2]);
	check(r, 0, pids[0]);
}

Test(folded_rows, rows_derive_exactly_after_the_stack_table_folds)
{
	struct run r;
	setup(&r);
	many_stacks(&r);
	/* Over the cap, the table folds at the next sweep, which ingest
	 * runs every 1024 records. */
	cr_assert_gt(r.a->stacks.folded, N * N - STACK_MAX_CELLS, "no stack folded: no test");
	cr_assert_eq(r.a->folded_funcs, 0, "a row folded: not this test's case");
	check_all(&r);
	after_fold(&r);
	check_all(&r);
	finish(&r);
}

/* nat stays: too often sampled to age (not rare). */
static bool aged_func(void *ctx, const char *name, const char *file)
{
	(void)ctx;
	(void)file;
	return strcmp(name, "hot") != 0 && strcmp(name, "main") != 0 && strcmp(name, "nat") != 0;
}

static bool not_app_py(void *ctx, const char *file, int line)
{
	(void)ctx;
	(void)line;
	return strcmp(file, "app.py") != 0;
}

/* Then the rows the folded stacks name fold into "[other]" themselves
 * (aged: not sampled for AGG_AGE_SAMPLES, a thousandth of the samples
 * at most): the folded rows follow them there, and "[other]"'s total
 * counts each folded sample once, not once per folded row it held (every
 * folded stack holds an aged leaf_ and mid_ row, so that is all of them:
 * stack_derive.h). */
Test(folded_rows, folded_rows_follow_the_rows_into_other)
{
	struct run r;
	uint32_t hot[] = { HOT, MAIN };
	setup(&r);
	many_stacks(&r);
	sweep(&r);
	after_fold(&r);
	cr_assert_gt(r.a->stacks.folded, 0, "no stack folded: no test");
	for (uint32_t i = 0; i < 320000; i++)
		sample(&r, (int)(i % 3), hot, 2, 0);
	cr_assert_gt(r.a->folded_funcs, N, "the rows did not fold: no test");
	/* Their stacks folded and their codes went: no frame names them any
	 * more.  The test knows which aged: all but hot, main and nat. */
	const struct oracle_folds aged = { aged_func, not_app_py, NULL };
	cr_assert_gt(oracle_fold(r.o, &aged), 2 * N);
	check_all(&r);
	finish(&r);
}
