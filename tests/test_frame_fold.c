/* test_frame_fold.c - the aggregator's row fold (bounded memory: idle
 * function and line rows over the soft cap go to "[other]") done in the
 * stack table's frame space too: the frames of a folded function or line
 * keep their code but count in "[other]", so the functions, lines and
 * callees counted from a snapshot's stacks (stack_derive.h) are still
 * what a count of the same records sample by sample gives
 * (sample_oracle.h, told which rows folded by the frames' marks) after a
 * fold, globally, per thread and per process, and a folded function
 * sampled again gets a row of its own again.  "[other]"'s total counts a
 * sample once however many folded frames it holds.  The sweeps are
 * forced (next_sweep_ns), not waited for. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive_compare.h"
#include "profile/aggregator.h"
#include "profile/aggregator_priv.h"
#include "profile/code_table.h"
#include "sample_oracle.h"
#include "sim_stream.h"
#include "transport/record.h"

#define MAIN 1u
#define HOT 2u
#define CHURN 100u        /* churn_i is code CHURN + i */
#define NCHURN 2200       /* function and line rows: over the soft cap (2048) */
#define NAT 0x80000000u   /* a native leaf: callees */
#define MS 1000000ull

static uint64_t buf[256];

struct run {
	struct aggregator *a;
	struct sample_oracle *o; /* fed every record a gets */
	uint64_t cpu[4];       /* each thread's CPU counter */
	uint64_t n;            /* samples sent */
	uint64_t with_folded;  /* ... of them with a frame that will fold */
	uint64_t own_folded;   /* ... whose leaf will fold */
};

/* Thread 13 samples once before the fold and once after, the same
 * stack: its memo of its last stack must not bring the folded frames
 * back. */
static const pid_t tids[4] = { 11, 12, 21, 13 }, pids[4] = { 7, 7, 8, 7 };
#define LONE 3

/* One sample of thread k (leaf first); running every other one, its
 * CPU counters moving, memory growing now and then. */
static void sample(struct run *r, int k, const uint32_t *codes, uint16_t nframes)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	r->n++;
	r->cpu[k] += MS;
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *s + nframes * sizeof(struct rec_frame)) },
		.time_ns = r->n * MS, .interval_ns = (uint32_t)(MS + r->n % 7),
		.tid = tids[k], .pid = pids[k], .nframes = nframes,
		.flags = r->n % 2 ? SAMPLE_RUNNING : 0,
		.cpu_user_ns = r->cpu[k] * 9 / 10, .cpu_sys_ns = r->cpu[k] / 10,
		.minflt = r->n % 3, .mem_growth = r->n % 4 == 0 ? 4096 : 0,
	};
	/* A marker stands for 7 frames left out ("[7 more frames]"). */
	for (uint16_t i = 0; i < nframes; i++)
		s->frames[i] = (struct rec_frame){ codes[i], codes[i] == REC_MORE_FRAMES ? 7 : 0 };
	aggregator_ingest(r->a, s, s->h.size);
	oracle_ingest(r->o, s, s->h.size);
}

/* A sweep falling due now (the fold's clock is the test's, not 2 s of
 * waiting); none meanwhile. */
static void sweep(struct run *r)
{
	r->a->next_sweep_ns = 0;
	agg_sweep(r->a);
	r->a->next_sweep_ns = UINT64_MAX;
}

static void add_processes(struct run *r);

/* An aggregator and its oracle, fed alike. */
static void start(struct run *r)
{
	*r = (struct run){ .a = aggregator_new(true), .o = oracle_new(true) };
	cr_assert(r->a != NULL && r->o != NULL);
	r->a->next_sweep_ns = UINT64_MAX;
	sim_tee(oracle_ingest_to, r->o);
}

static void finish(struct run *r)
{
	sim_tee(NULL, NULL);
	oracle_free(r->o);
	aggregator_free(r->a);
}

static void setup(struct run *r)
{
	char name[32], file[32];
	start(r);
	sim_def_code_as(r->a, MAIN, "main", "app.py", 1);
	sim_def_code_as(r->a, HOT, "hot", "app.py", 10);
	for (uint32_t i = 0; i < NCHURN; i++) {
		snprintf(name, sizeof name, "churn_%u", i);
		/* Half in files of their own, half on lines of one file. */
		snprintf(file, sizeof file, i % 2 ? "<churn-%u>" : "shared.py", i);
		sim_def_code_as(r->a, CHURN + i, name, file, 1 + (int)i);
	}
	cr_assert(aggregator_define_native(r->a, NAT, "nat", "lib.c", 0, "lib.so"));
	cr_assert(oracle_define_native(r->o, NAT, "nat", "lib.c", 0, "lib.so"));
	add_processes(r);
}

/* Under a process filter, 100 % comes from the process table (-s). */
static void add_processes(struct run *r)
{
	for (int k = 0; k < 3; k += 2)
		sim_def_process(r->a, pids[k], 0);
}

/* Churn i stays busy (sampled after the first sweep) when i % 4 == 0. */
static bool busy(uint32_t i)
{
	return i % 4 == 0;
}

/* Every churn function once under main (a native leaf under every fifth:
 * callees), hot now and then; with pairs, also stacks holding two
 * functions that fold: two churn functions, or one over "[7 more
 * frames]". */
static void phase_a(struct run *r, bool pairs)
{
	for (uint32_t i = 0; i < NCHURN; i++) {
		int k = (int)(i % 3);
		uint32_t plain[] = { CHURN + i, MAIN }, nat[] = { NAT, CHURN + i, MAIN };
		if (i % 5 == 0)
			sample(r, k, nat, 3);
		else
			sample(r, k, plain, 2);
		r->with_folded += !busy(i);
		r->own_folded += !busy(i) && i % 5 != 0;
		if (pairs && i % 7 == 3 && i + 2 < NCHURN && !busy(i + 2) && !busy(i)) {
			uint32_t two[] = { CHURN + i, CHURN + i + 2, MAIN };
			sample(r, k, two, 3);
			r->with_folded++;
			r->own_folded++;
		}
		if (i % 10 == 0) {
			uint32_t hot[] = { HOT, MAIN };
			sample(r, k, hot, 2);
		}
		/* Truncated stacks: "[7 more frames]" (no line) folds too, a
		 * second folded function on the stack. */
		if (pairs && i % 11 == 1 && !busy(i)) {
			uint32_t deep[] = { CHURN + i, MAIN, REC_MORE_FRAMES };
			sample(r, k, deep, 3);
			r->with_folded++;
			r->own_folded++;
		}
	}
	uint32_t lone[] = { CHURN + 3, MAIN };
	sample(r, LONE, lone, 2);
	r->with_folded++;
	r->own_folded++;
}

/* The busy ones and hot again, after the first sweep: they stay. */
static void phase_b(struct run *r)
{
	uint32_t hot[] = { HOT, MAIN };
	sample(r, 0, hot, 2);
	for (uint32_t i = 0; i < NCHURN; i += 4) {
		uint32_t plain[] = { CHURN + i, MAIN }, nat[] = { NAT, CHURN + i, MAIN };
		if (i % 5 == 0)
			sample(r, (int)(i % 3), nat, 3);
		else
			sample(r, (int)(i % 3), plain, 2);
	}
}

/* Rows not sampled since the sweep before the last fold. */
static void fold(struct run *r)
{
	sweep(r);
	phase_b(r);
	sweep(r);
	sweep(r);
}

/* A snapshot (filtered by tid or pid) against the oracle. */
static void check(struct run *r, pid_t tid, pid_t pid)
{
	char label[64];
	snprintf(label, sizeof label, "tid %d pid %d", tid, pid);
	const struct derive_cmp c = { .label = label, .first_line = true };
	derive_check_oracle(&c, r->a, r->o, tid, pid, true);
}

/* The "[other]" function row of an unfiltered snapshot. */
static struct snap_counts other_row(struct run *r)
{
	struct snapshot s = { 0 };
	struct snap_counts c = { 0 };
	aggregator_filter_thread(r->a, 0);
	aggregator_filter_process(r->a, 0);
	aggregator_snapshot(r->a, &s);
	oracle_close_window(r->o);
	for (size_t i = 0; i < s.nfuncs; i++)
		if (s.funcs[i].other)
			c = s.funcs[i].c;
	snapshot_free(&s);
	return c;
}

static void check_all(struct run *r)
{
	check(r, 0, 0);
	check(r, tids[0], 0);
	check(r, 0, pids[2]);
}

Test(frame_fold, folded_rows_derive_into_other_as_the_rows_fold)
{
	struct run r;
	setup(&r);
	phase_a(&r, false);
	fold(&r);
	cr_assert_gt(r.a->folded_funcs, 0, "no function row folded: no test");
	cr_assert_gt(r.a->folded_lines, 0, "no line row folded: no test");
	check_all(&r);
	struct snap_counts other = other_row(&r);
	cr_expect_eq(other.own, r.own_folded, "[other] holds the idle churn's own samples");
	cr_expect_eq(other.total, r.with_folded);

	/* Folded functions sampled again (one under a native leaf): rows of
	 * their own again, in the rows and in the stacks. */
	uint32_t again[] = { CHURN + 1, MAIN }, nat[] = { NAT, CHURN + 5, MAIN };
	uint32_t lone[] = { CHURN + 3, MAIN };
	for (int k = 0; k < 3; k++) {
		sample(&r, k, again, 2);
		sample(&r, k, nat, 3);
	}
	sample(&r, LONE, lone, 2);
	check_all(&r);

	/* They fold again, with the frames sampled since. */
	sweep(&r);
	sweep(&r);
	sweep(&r);
	check_all(&r);
	finish(&r);
}

/* Two folded functions on one stack: "[other]"'s total counts the
 * sample once. */
Test(frame_fold, other_total_is_once_per_sample_in_the_stacks)
{
	struct run r;
	setup(&r);
	phase_a(&r, true);
	fold(&r);
	check_all(&r);
	struct snap_counts other = other_row(&r);
	cr_expect_eq(other.own, r.own_folded);
	cr_expect_eq(other.total, r.with_folded, "once per sample with a folded frame");
	finish(&r);
}

/* Codes unused for 10 sweeps go: the frames of theirs that folded
 * whole become one "[other]" frame and their stacks merge, so the
 * stacks still give the rows' figures (before, those stacks folded
 * whole into "[other stacks]", main's total with them) and the table
 * shrinks.  "[7 more frames]" has no line before and after. */
Test(frame_fold, codes_that_go_merge_their_folded_frames)
{
	struct run r;
	struct snapshot s = { 0 };
	setup(&r);
	phase_a(&r, true);
	fold(&r);
	/* While the folded frames still name their rows: the oracle learns
	 * which folded (derive_sync_folds). */
	check_all(&r);
	size_t cells = r.a->stacks.ncells, codes = code_table_count(r.a->codes);
	for (int e = 0; e < 12; e++) {
		phase_b(&r);
		sweep(&r);
	}
	cr_assert_lt(code_table_count(r.a->codes), codes - NCHURN / 2, "no code went: no test");
	check_all(&r);
	cr_expect_lt(r.a->stacks.ncells, cells / 2, "%zu cells, %zu before", r.a->stacks.ncells,
	             cells);
	aggregator_filter_thread(r.a, 0);
	aggregator_filter_process(r.a, 0);
	aggregator_snapshot(r.a, &s);
	oracle_close_window(r.o);
	cr_expect_eq(s.folded_stacks, 0, "stacks folded whole");
	size_t others = 0;
	for (size_t i = 0; i < s.nstack_frames; i++)
		others += strcmp(s.stack_frames[i].name, "[other]") == 0 && s.stack_frames[i].folded_func;
	cr_expect_eq(others, 2, "one [other] frame with a line, one without");
	snapshot_free(&s);
	finish(&r);
}

/* Under the soft cap nothing folds, but codes still go (exec churn: a
 * new "<module>" of "<string>" each time): their frames move to the
 * function's own code and keep counting in its rows, so the stacks
 * still give the rows' figures (before, those stacks folded whole into
 * "[other stacks]"), the function's first line the smallest of its
 * codes'; the code table keeps one code for the fifty. */
Test(frame_fold, codes_that_go_keep_their_living_rows)
{
	struct run r;
	struct snapshot s = { 0 };
	start(&r);
	add_processes(&r);
	sim_def_code_as(r.a, MAIN, "main", "app.py", 1);
	sim_def_code_as(r.a, HOT, "hot", "app.py", 10);
	for (uint32_t k = 0; k < 50; k++) {
		sim_def_code_as(r.a, CHURN + k, "<module>", "<string>", 3 + (int)(k % 4));
		uint32_t one[] = { CHURN + k, MAIN }, two[] = { CHURN + k, CHURN + (k + 1) % 50, MAIN };
		sample(&r, (int)(k % 3), one, 2);
		if (k % 5 == 0)
			sample(&r, (int)(k % 3), two, 3);
	}
	uint32_t deep[] = { HOT, MAIN, REC_MORE_FRAMES }, hot[] = { HOT, MAIN };
	sample(&r, 0, deep, 3);
	for (int e = 0; e < 12; e++) {
		sample(&r, 1, hot, 2);
		sweep(&r);
	}
	cr_assert_eq(r.a->folded_funcs, 0, "a row folded: not this test's case");
	cr_assert_lt(code_table_count(r.a->codes), 10, "%zu codes: they did not go",
	             code_table_count(r.a->codes));
	check_all(&r);
	aggregator_snapshot(r.a, &s);
	oracle_close_window(r.o);
	cr_expect_eq(s.folded_stacks, 0, "stacks folded whole");
	snapshot_free(&s);

	/* The function runs again under a new code: one row still. */
	sim_def_code_as(r.a, CHURN + 60, "<module>", "<string>", 9);
	uint32_t again[] = { CHURN + 60, MAIN };
	sample(&r, 2, again, 2);
	check_all(&r);
	finish(&r);
}

/* Marks code 5's frames (the function) and line 20's (the line). */
static unsigned fold_code5_line20(void *ctx, uint32_t code_id, int32_t line)
{
	(void)ctx;
	return (code_id == 5 ? STACK_FOLD_FUNC : 0u) | (line == 20 ? STACK_FOLD_LINE : 0u);
}

static bool code_dead_none(void *ctx, uint32_t code_id)
{
	(void)ctx;
	(void)code_id;
	return false;
}

/* The table itself: a marked frame keeps its code and line, is
 * interned no more (the same frame again is a new one), and keeps its
 * marks through a fold of the stacks, which renumbers the frames. */
Test(frame_fold, marks_survive_a_stack_fold_and_are_not_interned)
{
	struct stack_table t;
	struct stack_frame a[] = { { 5, 10 }, { 1, 1 } }, b[] = { { 6, 20 }, { 1, 1 } },
	                   c[] = { { 7, 30 }, { 1, 1 } };
	cr_assert(stack_table_init(&t));
	uint32_t nc = stack_table_intern(&t, c, 2);
	uint32_t na = stack_table_intern(&t, a, 2), nb = stack_table_intern(&t, b, 2);
	cr_assert(stack_table_count(&t, na, 1, 1, MS) != STACK_NO_CELL);
	cr_assert(stack_table_count(&t, nb, 1, 1, MS) != STACK_NO_CELL);
	/* c's cell is the rarest: the fold below drops it, and its frame. */
	(void)nc;
	uint64_t gen = t.gen;
	cr_assert(stack_table_fold_frames(&t, fold_code5_line20, NULL));
	cr_expect_gt(t.gen, gen, "memos must start over");
	uint32_t fa = t.nodes[na].frame, fb = t.nodes[nb].frame, fm = t.nodes[t.nodes[na].parent].frame;
	cr_expect_eq(stack_table_frame_fold(&t, fa), STACK_FOLD_FUNC);
	cr_expect_eq(stack_table_frame_fold(&t, fb), STACK_FOLD_LINE);
	cr_expect_eq(stack_table_frame_fold(&t, fm), 0);
	cr_expect_neq(stack_table_intern(&t, a, 2), na, "a marked frame was interned again");

	uint32_t *cmap = stack_table_fold(&t, 2, code_dead_none, NULL);
	cr_assert_not_null(cmap);
	free(cmap);
	size_t seen = 0;
	for (uint32_t f = 1; f < t.nframes; f++) {
		unsigned want = t.frames[f].code_id == 5 ? STACK_FOLD_FUNC
		                : t.frames[f].code_id == 6 ? STACK_FOLD_LINE : 0;
		cr_expect_neq(t.frames[f].code_id, 7, "c's frame should have gone");
		cr_expect_eq(stack_table_frame_fold(&t, f), want, "frame %u (code %u)", f,
		             t.frames[f].code_id);
		seen += want != 0;
	}
	cr_expect_eq(seen, 2);
	/* Still not interned: b again is a stack of its own. */
	uint32_t nb2 = stack_table_intern(&t, b, 2);
	cr_expect_eq(stack_table_frame_fold(&t, t.nodes[nb2].frame), 0);
	stack_table_destroy(&t);
}

/* Rows that aged (not sampled for AGG_AGE_SAMPLES, at most a thousandth
 * of the samples) fold under the soft caps too, by the same fold: their
 * frames must be marked as a cap fold's are, or the stacks would keep
 * giving the aged functions rows of their own. */
Test(frame_fold, aged_rows_derive_into_other_as_the_rows_fold)
{
	struct run r;
	setup(&r);
	for (uint32_t i = 0; i < 60; i++) {
		uint32_t plain[] = { CHURN + i, MAIN }, nat[] = { NAT, CHURN + i, MAIN };
		if (i % 5 == 0)
			sample(&r, (int)(i % 3), nat, 3);
		else
			sample(&r, (int)(i % 3), plain, 2);
	}
	uint32_t lone[] = { CHURN + 3, MAIN }, hot[] = { HOT, MAIN };
	sample(&r, LONE, lone, 2);
	/* Past the age, and past the next look at it (every eighth of the
	 * age, made by the sweeps every 1024 records). */
	for (uint32_t i = 0; i < 120000 + 120000 / 4; i++)
		sample(&r, (int)(i % 3), hot, 2);
	cr_assert_lt(r.a->funcs.n, 2048, "over the soft cap: not the aging path");
	/* The sixty and their native leaf. */
	cr_assert_eq(r.a->folded_funcs, 61, "the aged functions did not fold: no test (%llu)",
	             (unsigned long long)r.a->folded_funcs);
	cr_assert_gt(r.a->folded_lines, 0, "no line row folded: no test");
	/* A native leaf and its caller fold both: "[other]"'s total
	 * counts their samples once. */
	check_all(&r);
	check(&r, tids[LONE], 0);
	struct snap_counts other = other_row(&r);
	cr_expect_eq(other.own, 61, "[other] holds the aged rows' own samples");
	cr_expect_eq(other.total, 61, "once per sample with an aged frame");
	finish(&r);
}
