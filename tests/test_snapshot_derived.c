/* test_snapshot_derived.c - a snapshot's functions, lines and callees are
 * counted from its stacks (stack_derive.h) and are what a count of the
 * same records sample by sample gives (sample_oracle.h), row for row and
 * in the same order, globally and under a thread or process filter,
 * after rows fold into "[other]"; "[other]"'s total counts a sample once
 * however many folded frames it holds. */
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
#define CHURN 100u
#define NCHURN 2200u /* over the soft cap (2048): idle rows fold */
#define NAT 0x80000000u
#define MS 1000000ull

static uint64_t buf[64];
static const pid_t tids[3] = { 11, 12, 21 }, pids[3] = { 7, 7, 8 };

struct feed {
	struct aggregator *a;
	struct sample_oracle *o; /* fed every record a gets */
	uint64_t n, cpu[3];
	uint64_t with_folded; /* samples holding a frame that folds */
};

static void sample(struct feed *f, int k, const uint32_t *codes, uint16_t nframes)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	f->n++;
	f->cpu[k] += MS;
	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *s + nframes * sizeof(struct rec_frame)) },
		.time_ns = f->n * MS, .interval_ns = (uint32_t)(MS + f->n % 5),
		.tid = tids[k], .pid = pids[k], .nframes = nframes,
		.flags = f->n % 2 ? SAMPLE_RUNNING : 0,
		.cpu_user_ns = f->cpu[k] * 4 / 5, .cpu_sys_ns = f->cpu[k] / 5,
		.minflt = f->n % 3, .mem_growth = f->n % 4 == 0 ? 4096 : 0,
	};
	for (uint16_t j = 0; j < nframes; j++)
		s->frames[j] = (struct rec_frame){ codes[j], 0 };
	aggregator_ingest(f->a, s, s->h.size);
	oracle_ingest(f->o, s, s->h.size);
}

static void sweep(struct feed *f)
{
	f->a->next_sweep_ns = 0;
	agg_sweep(f->a);
	f->a->next_sweep_ns = UINT64_MAX;
}

static void setup(struct feed *f)
{
	char name[32], file[32];
	*f = (struct feed){ .a = aggregator_new(true), .o = oracle_new(true) };
	cr_assert(f->a != NULL && f->o != NULL);
	f->a->next_sweep_ns = UINT64_MAX;
	sim_tee(oracle_ingest_to, f->o);
	sim_def_code_as(f->a, MAIN, "main", "app.py", 1);
	sim_def_code_as(f->a, HOT, "hot", "app.py", 10);
	for (uint32_t c = 0; c < NCHURN; c++) {
		snprintf(name, sizeof name, "churn_%u", c);
		snprintf(file, sizeof file, c % 2 ? "<churn-%u>" : "shared.py", c);
		sim_def_code_as(f->a, CHURN + c, name, file, 1 + (int)c);
	}
	cr_assert(aggregator_define_native(f->a, NAT, "nat", "lib.c", 0, "lib.so"));
	cr_assert(oracle_define_native(f->o, NAT, "nat", "lib.c", 0, "lib.so"));
	/* Under a process filter, 100 % comes from the process table (-s). */
	sim_def_process(f->a, pids[0], 0);
	sim_def_process(f->a, pids[2], 0);
}

/* Every churn function under main (a native leaf under every fifth, a
 * pair of churn functions now and then), hot often; then the sweeps that
 * fold the churn not sampled since, and the busy quarter again. */
static void churn_and_fold(struct feed *f)
{
	for (uint32_t c = 0; c < NCHURN; c++) {
		int k = (int)(c % 3);
		uint32_t plain[] = { CHURN + c, MAIN }, nat[] = { NAT, CHURN + c, MAIN };
		uint32_t two[] = { CHURN + c, CHURN + (c + 2) % NCHURN, MAIN }, hot[] = { HOT, MAIN };
		sample(f, k, c % 5 ? plain : nat, c % 5 ? 2 : 3);
		/* Only main and the busy quarter are sampled again: nat and
		 * hot fold too. */
		f->with_folded += c % 4 != 0 || c % 5 == 0;
		if (c % 7 == 3 && c % 4 != 0 && (c + 2) % 4 != 0) {
			sample(f, k, two, 3);
			f->with_folded++;
		}
		if (c % 10 == 0) {
			sample(f, k, hot, 2);
			f->with_folded++;
		}
	}
	sweep(f);
	for (uint32_t c = 0; c < NCHURN; c += 4) {
		uint32_t plain[] = { CHURN + c, MAIN };
		sample(f, (int)(c % 3), plain, 2);
	}
	sweep(f);
	sweep(f);
}

/* The snapshot under one filter against the oracle, row for row in
 * order; returns "[other]"'s function total. */
static uint64_t compare(struct feed *f, pid_t tid, pid_t pid)
{
	struct snapshot s = { 0 };
	uint64_t other = 0;
	char label[64];
	snprintf(label, sizeof label, "tid %d pid %d", tid, pid);
	const struct derive_cmp cmp = { .label = label, .first_line = true };
	aggregator_filter_thread(f->a, tid);
	aggregator_filter_process(f->a, pid);
	aggregator_snapshot(f->a, &s);
	derive_sync_folds(f->o, &s);
	derive_check_rows(&cmp, &s, f->o, tid, pid, true);
	oracle_close_window(f->o);
	for (size_t i = 0; i < s.nfuncs; i++)
		if (s.funcs[i].other)
			other = s.funcs[i].c.total;
	snapshot_free(&s);
	return other;
}

Test(snapshot_derived, rows_are_the_oracles_and_other_counts_a_sample_once)
{
	struct feed f;
	setup(&f);
	churn_and_fold(&f);
	cr_assert_gt(f.a->folded_funcs, 0, "no row folded: no test");
	uint64_t other = compare(&f, 0, 0);
	cr_expect_eq(other, f.with_folded, "[other] total %llu: once per sample holding a "
	             "folded frame (%llu)", (unsigned long long)other,
	             (unsigned long long)f.with_folded);
	compare(&f, tids[0], 0);
	compare(&f, 0, pids[2]);
	compare(&f, 0, pids[0]);
	sim_tee(NULL, NULL);
	oracle_free(f.o);
	aggregator_free(f.a);
}
