/* test_fold.c - the engine's bounds under code churn, without a target:
 * the aggregator folding function rows into "[other]" with every total
 * kept right (globally, per thread, in the split), the code table
 * dropping codes unused for a while and moving its strings to a fresh
 * string table, and snapshots owning their strings. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregator.h"
#include "profile/code_table.h"
#include "transport/record.h"
#include "profile/snapshot.h"
#include "profile/strtab.h"

static uint64_t recbuf[1024];

static size_t mk_code(uint32_t id, const char *qual, const char *file, int first)
{
	struct rec_code_def *c = (void *)recbuf;
	size_t ql = strlen(qual), fl = strlen(file);
	memset(recbuf, 0, 256);
	memcpy(c->data, qual, ql);
	memcpy(c->data + ql, file, fl);
	c->h.type = REC_CODE_DEF;
	c->h.size = REC_ALIGN((uint32_t)(sizeof *c + ql + fl));
	c->code_id = id;
	c->firstlineno = first;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = (uint16_t)fl;
	return c->h.size;
}

/* A running sample of thread tid: leaf code `leaf` called from `caller`;
 * its CPU counters move by 1 ms a sample, a tenth of it system time. */
static size_t mk_sample(int tid, uint32_t leaf, uint32_t caller, uint64_t n)
{
	struct rec_sample *s = (void *)recbuf;
	struct rec_frame f[2] = { { leaf, 0 }, { caller, 0 } };
	memset(s, 0, sizeof *s);
	s->h.type = REC_SAMPLE;
	s->h.size = (uint32_t)(sizeof *s + sizeof f);
	s->interval_ns = 1000000;
	s->tid = tid;
	s->pid = 7;
	s->nframes = 2;
	s->flags = SAMPLE_RUNNING;
	s->cpu_user_ns = n * 900000;
	s->cpu_sys_ns = n * 100000;
	memcpy(s->frames, f, sizeof f);
	return s->h.size;
}

#define NCHURN 70000 /* function rows: over the hard cap of 65536 */
#define MAIN_ID 1
#define HOT_ID 2
#define HOT_SAMPLES 5000

static double split_sum(const struct snap_split *s)
{
	return s->python + s->native + s->system + s->waiting;
}

/* Sum of own over rows, and the "[other]" row (NULL when none). */
static uint64_t own_sum(const struct snapshot *s, const struct snap_func **other)
{
	uint64_t sum = 0;
	*other = NULL;
	for (size_t i = 0; i < s->nfuncs; i++) {
		sum += s->funcs[i].c.own;
		if (s->funcs[i].other)
			*other = &s->funcs[i];
	}
	return sum;
}

Test(fold, over_the_hard_cap_the_fewest_sampled_fold_into_other)
{
	struct aggregator *a = aggregator_new(true);
	char name[32], file[32];
	uint64_t n = 0;
	cr_assert_not_null(a);
	aggregator_ingest(a, recbuf, mk_code(MAIN_ID, "main", "app.py", 1));
	aggregator_ingest(a, recbuf, mk_code(HOT_ID, "hot", "app.py", 10));
	for (uint32_t i = 0; i < NCHURN; i++) {
		snprintf(name, sizeof name, "churn_%u", i);
		snprintf(file, sizeof file, "<churn-%u>", i);
		aggregator_ingest(a, recbuf, mk_code(100 + i, name, file, 1));
		aggregator_ingest(a, recbuf, mk_sample(1 + (int)(i & 1), 100 + i, MAIN_ID, ++n));
		if (i % 14 == 0) /* hot: sampled as often in all */
			aggregator_ingest(a, recbuf, mk_sample(1 + (int)(i & 1), HOT_ID, MAIN_ID, ++n));
	}
	aggregator_settle(a);
	cr_expect_eq(aggregator_bad(a), 0);

	struct snapshot s;
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	const struct snap_func *other;
	cr_expect_eq(s.samples, n);
	cr_expect_eq(own_sum(&s, &other), n, "own adds up to the samples");
	cr_assert_not_null(other, "no [other] row");
	cr_expect_str_eq(other->name, "[other]");
	cr_expect_leq(s.nfuncs, 65536, "%zu function rows", s.nfuncs);
	cr_expect_gt(s.folded_funcs, 0);
	cr_expect_eq(other->c.own, s.folded_funcs, "one own sample per folded row");
	cr_expect_leq(other->c.total, s.samples);
	cr_expect_float_eq(split_sum(&other->c.split), (double)other->c.own, 1e-6,
	                   "[other]'s split covers its own samples");
	cr_expect_float_eq(split_sum(&s.split), (double)s.samples, 1e-6);
	bool main_seen = false, hot_seen = false;
	for (size_t i = 0; i < s.nfuncs; i++) {
		if (strcmp(s.funcs[i].name, "main") == 0) {
			main_seen = true;
			cr_expect_eq(s.funcs[i].c.total, n, "main is on every stack");
		}
		if (strcmp(s.funcs[i].name, "hot") == 0) {
			hot_seen = true;
			cr_expect_eq(s.funcs[i].c.own, (NCHURN + 13) / 14);
		}
	}
	cr_expect(main_seen && hot_seen, "the busiest rows were folded");
	snapshot_free(&s);

	/* Per thread: thread 1's rows add up to its samples too. */
	aggregator_filter_thread(a, 1);
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	cr_expect_eq(own_sum(&s, &other), s.samples, "thread 1: own adds up");
	cr_expect_gt(s.samples, 0);
	cr_expect_not_null(other, "thread 1 has an [other] row");
	snapshot_free(&s);

	/* A folded function that runs again gets a row of its own anew. */
	aggregator_filter_thread(a, 0);
	aggregator_ingest(a, recbuf, mk_sample(1, 100, MAIN_ID, ++n));
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	cr_expect_eq(own_sum(&s, &other), n);
	bool again = false;
	for (size_t i = 0; i < s.nfuncs; i++)
		again |= strcmp(s.funcs[i].name, "churn_0") == 0 && s.funcs[i].c.own == 1;
	cr_expect(again, "churn_0 did not come back");
	snapshot_free(&s);
	aggregator_free(a);
}

Test(fold, codes_unused_go_strings_move_to_a_fresh_table)
{
	struct strtab *st = strtab_new(), *to = strtab_new();
	struct code_table *ct = code_table_new(st);
	cr_assert(st && to && ct);
	cr_assert_eq(code_table_add_record(ct, recbuf, mk_code(1, "used", "a.py", 3)), CODE_ADDED);
	cr_assert_eq(code_table_add_record(ct, recbuf, mk_code(2, "idle", "a.py", 9)), CODE_ADDED);
	cr_assert_eq(code_table_add_native(ct, 0x80000000u, "memcpy", "", 0, "libc.so.6"),
	             CODE_ADDED);
	for (int epoch = 0; epoch < 3; epoch++) {
		cr_expect_not_null(code_table_use(ct, 1));
		cr_expect_eq(code_table_age(ct, 2), epoch < 2 ? 0 : 1, "epoch %d", epoch);
	}
	cr_expect_null(code_table_get(ct, 2), "an unused code stayed");
	cr_expect_not_null(code_table_get(ct, 1), "a used code went");
	cr_expect_not_null(code_table_get(ct, 0x80000000u), "a native function went");
	cr_expect_eq(code_table_count(ct), 2);

	cr_assert(code_table_rehome(ct, to));
	strtab_free(st); /* every string must now live in `to` */
	const struct code_info *ci = code_table_get(ct, 1);
	cr_expect_str_eq(ci->qualname, "used");
	cr_expect_str_eq(ci->filename, "a.py");
	cr_expect_str_eq(strtab_get(to, ci->qualname_sid), "used");
	ci = code_table_get(ct, 0x80000000u);
	cr_expect_str_eq(ci->qualname, "memcpy");
	cr_expect_str_eq(ci->module, "libc.so.6");
	/* Defined again under a new id (the sampler forgot and re-read it). */
	cr_expect_eq(code_table_add_record(ct, recbuf, mk_code(3, "idle", "a.py", 9)), CODE_ADDED);
	cr_expect_str_eq(code_table_get(ct, 3)->qualname, "idle");
	code_table_free(ct);
	strtab_free(to);
}

Test(fold, snapshots_own_their_strings)
{
	char *name = strdup("f"), *file = strdup("x.py"), *tname = strdup("worker");
	struct snap_func fn = { .name = name, .file = file, .module = "" };
	struct snap_thread th = { .tid = 5, .name = tname, .top_func = name };
	struct snapshot s = { .nfuncs = 1, .nthreads = 1 };
	s.funcs = malloc(sizeof fn);
	s.threads = malloc(sizeof th);
	cr_assert(name && file && tname && s.funcs && s.threads);
	s.funcs[0] = fn;
	s.threads[0] = th;
	cr_assert(snapshot_own_strings(&s));
	free(name);
	free(file);
	free(tname);
	cr_expect_str_eq(s.funcs[0].name, "f");
	cr_expect_str_eq(s.funcs[0].file, "x.py");
	cr_expect_str_eq(s.threads[0].name, "worker");
	cr_expect_eq(s.threads[0].top_func, s.funcs[0].name, "one copy per string");
	snapshot_free(&s);
	cr_expect_null(s.strings);
}
