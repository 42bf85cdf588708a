/* test_snapshot_derived.c - a snapshot's functions, lines and callees are
 * counted from its stacks (stack_derive.h) and are the row counters'
 * figures, row for row and in the same order, globally and under a thread
 * or process filter, after rows fold into "[other]" and stacks into
 * "[other stacks]"; the one figure that differs by design is "[other]"'s
 * total: once per sample with a folded frame, where the counters add up
 * their folded rows' totals (a sample with two folded functions counted
 * twice).  Two aggregators are fed the same records: one gives the
 * snapshot, the other the counters' rows (agg_snapshot_counted). */
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
	struct aggregator *a[2];
	uint64_t n, cpu[3];
	uint64_t with_folded; /* samples holding a frame that folds */
};

static void sample(struct feed *f, int k, const uint32_t *codes, uint16_t nframes)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	f->n++;
	f->cpu[k] += MS;
	for (int i = 0; i < 2; i++) {
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
		aggregator_ingest(f->a[i], s, s->h.size);
	}
}

static void sweep(struct feed *f)
{
	for (int i = 0; i < 2; i++) {
		f->a[i]->next_sweep_ns = 0;
		agg_sweep(f->a[i]);
		f->a[i]->next_sweep_ns = UINT64_MAX;
	}
}

static void setup(struct feed *f)
{
	char name[32], file[32];
	*f = (struct feed){ .n = 0 };
	for (int i = 0; i < 2; i++) {
		struct aggregator *a = aggregator_new(true);
		cr_assert_not_null(a);
		a->next_sweep_ns = UINT64_MAX;
		sim_def_code_as(a, MAIN, "main", "app.py", 1);
		sim_def_code_as(a, HOT, "hot", "app.py", 10);
		for (uint32_t c = 0; c < NCHURN; c++) {
			snprintf(name, sizeof name, "churn_%u", c);
			snprintf(file, sizeof file, c % 2 ? "<churn-%u>" : "shared.py", c);
			sim_def_code_as(a, CHURN + c, name, file, 1 + (int)c);
		}
		cr_assert(aggregator_define_native(a, NAT, "nat", "lib.c", 0, "lib.so"));
		f->a[i] = a;
	}
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

/* The snapshot of a[0] against the counters of a[1], under one filter:
 * the same rows in the same order.  Returns "[other]"'s function total
 * (the snapshot's) and the counters' in *counted. */
static uint64_t compare(struct feed *f, pid_t tid, pid_t pid, uint64_t *counted)
{
	struct snapshot s = { 0 }, c = { 0 };
	uint64_t other = 0;
	char label[64];
	snprintf(label, sizeof label, "tid %d pid %d", tid, pid);
	const struct derive_cmp cmp = { .label = label, .theirs = "counters" };
	*counted = 0;
	for (int i = 0; i < 2; i++) {
		aggregator_filter_thread(f->a[i], tid);
		aggregator_filter_process(f->a[i], pid);
	}
	aggregator_snapshot(f->a[0], &s);
	agg_snapshot_counted(f->a[1], &c);
	cr_assert_eq(s.nfuncs, c.nfuncs, "tid %d pid %d: %zu functions, counters %zu", tid, pid,
	             s.nfuncs, c.nfuncs);
	cr_assert_eq(s.nlines, c.nlines, "tid %d pid %d: %zu lines, counters %zu", tid, pid,
	             s.nlines, c.nlines);
	cr_assert_eq(s.ncallees, c.ncallees);
	for (size_t i = 0; i < s.nfuncs; i++) {
		const struct snap_func *x = &s.funcs[i], *y = &c.funcs[i];
		cr_expect(strcmp(x->name, y->name) == 0 && strcmp(x->file, y->file) == 0 &&
		          x->line == y->line && x->other == y->other,
		          "tid %d pid %d: function %zu: %s %s:%d, counters %s %s:%d", tid, pid, i,
		          x->name, x->file, x->line, y->name, y->file, y->line);
		derive_expect_counts(&cmp, "function", x->name, !x->other, &x->c, &y->c);
		if (x->other) {
			other = x->c.total;
			*counted = y->c.total;
		}
	}
	for (size_t i = 0; i < s.nlines; i++) {
		const struct snap_line *x = &s.lines[i], *y = &c.lines[i];
		cr_expect(strcmp(x->name, y->name) == 0 && strcmp(x->file, y->file) == 0 &&
		          x->line == y->line && x->other == y->other,
		          "tid %d pid %d: line %zu: %s %s:%d, counters %s %s:%d", tid, pid, i,
		          x->name, x->file, x->line, y->name, y->file, y->line);
		derive_expect_counts(&cmp, "line", x->file, !x->other, &x->c, &y->c);
	}
	for (size_t i = 0; i < s.ncallees; i++) {
		const struct snap_callee *x = &s.callees[i], *y = &c.callees[i];
		cr_expect(strcmp(x->name, y->name) == 0 && x->caller_line == y->caller_line &&
		          strcmp(x->caller_file, y->caller_file) == 0);
		derive_expect_counts(&cmp, "callee", x->name, true, &x->c, &y->c);
	}
	snapshot_free(&s);
	snapshot_free(&c);
	return other;
}

Test(snapshot_derived, rows_are_the_counters_but_other_counts_a_sample_once)
{
	struct feed f;
	uint64_t counted;
	setup(&f);
	churn_and_fold(&f);
	cr_assert_gt(f.a[0]->folded_funcs, 0, "no row folded: no test");
	uint64_t other = compare(&f, 0, 0, &counted);
	cr_expect_eq(other, f.with_folded, "[other] total %llu: once per sample holding a "
	             "folded frame (%llu)", (unsigned long long)other,
	             (unsigned long long)f.with_folded);
	cr_expect_gt(counted, other, "the counters add a pair's folded rows up: no test");
	compare(&f, tids[0], 0, &counted);
	compare(&f, 0, pids[2], &counted);
	compare(&f, 0, pids[0], &counted);
	for (int i = 0; i < 2; i++)
		aggregator_free(f.a[i]);
}
