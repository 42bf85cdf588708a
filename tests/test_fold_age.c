/* test_fold_age.c - rows that have aged fold even under the soft caps: a
 * function or line not sampled in the last 120 000 samples (two minutes
 * at 1 kHz) with at most a thousandth of all samples goes to "[other]",
 * so that a service compiling code at run time keeps small tables instead
 * of filling them to 2048 rows over half an hour; a row sampled since, or
 * with a real share, stays. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "profile/aggregator.h"
#include "profile/snapshot.h"
#include "sim_stream.h"
#include "transport/record.h"

#define MAIN_ID 1
#define HOT_ID 2
#define TEMPLATES 100
#define AGE 120000u /* AGG_AGE_SAMPLES */

static uint64_t recbuf[64];

/* A running sample of thread 1: leaf called from main. */
static void sample(struct aggregator *a, uint32_t leaf)
{
	struct rec_sample *s = (void *)recbuf;
	struct rec_frame f[2] = { { leaf, 0 }, { MAIN_ID, 0 } };
	memset(recbuf, 0, sizeof recbuf);
	s->h.type = REC_SAMPLE;
	s->h.size = (uint32_t)(sizeof *s + sizeof f);
	s->interval_ns = 1000000;
	s->tid = 1;
	s->pid = 7;
	s->nframes = 2;
	s->flags = SAMPLE_RUNNING;
	memcpy(s->frames, f, sizeof f);
	aggregator_ingest(a, recbuf, s->h.size);
}

/* main, hot and TEMPLATES template functions, each in its own file. */
static struct aggregator *with_templates(void)
{
	struct aggregator *a = aggregator_new(true);
	char name[32], file[32];
	cr_assert_not_null(a);
	sim_def_code_as(a, MAIN_ID, "main", "app.py", 1);
	sim_def_code_as(a, HOT_ID, "hot", "app.py", 10);
	for (uint32_t i = 0; i < TEMPLATES; i++) {
		snprintf(name, sizeof name, "render_%u", i);
		snprintf(file, sizeof file, "<template-%u>", i);
		sim_def_code_as(a, 100 + i, name, file, 1);
	}
	return a;
}

static const struct snap_func *func_named(const struct snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	return NULL;
}

static uint64_t own_sum(const struct snapshot *s)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < s->nfuncs; i++)
		sum += s->funcs[i].c.own;
	return sum;
}

/* Each template sampled once, then only hot for longer than the age: the
 * templates fold, with their samples, and nothing else does. */
Test(fold_age, rare_rows_unsampled_for_the_age_fold)
{
	struct aggregator *a = with_templates();
	uint64_t n = 0;
	for (uint32_t i = 0; i < TEMPLATES; i++, n++)
		sample(a, 100 + i);
	for (uint32_t i = 0; i < AGE + AGE / 4; i++, n++)
		sample(a, HOT_ID);
	aggregator_settle(a);

	struct snapshot s;
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	cr_expect_eq(s.samples, n);
	cr_expect_eq(own_sum(&s), n, "own adds up to the samples");
	cr_expect_null(func_named(&s, "render_0"), "render_0 did not fold");
	cr_expect_null(func_named(&s, "render_99"), "render_99 did not fold");
	const struct snap_func *other = func_named(&s, "[other]");
	cr_assert_not_null(other, "no [other] row");
	cr_expect_eq(other->c.own, TEMPLATES);
	cr_expect_eq(s.folded_funcs, TEMPLATES);
	cr_expect_geq(s.folded_lines, TEMPLATES);
	cr_expect_not_null(func_named(&s, "hot"));
	const struct snap_func *m = func_named(&s, "main");
	cr_assert_not_null(m);
	cr_expect_eq(m->c.total, n, "main is on every stack");
	snapshot_free(&s);
	aggregator_free(a);
}

/* Sampled again within the age, or holding more than a thousandth of the
 * samples: the row stays. */
Test(fold_age, recent_or_real_rows_stay)
{
	struct aggregator *a = with_templates();
	uint64_t n = 0;
	for (uint32_t i = 0; i < 1000; i++, n++) /* 0.67 % of the samples */
		sample(a, 100);
	sample(a, 101), n++;
	for (uint32_t i = 0; i < AGE + AGE / 4; i++, n++)
		sample(a, HOT_ID);
	sample(a, 102), n++; /* rare but recent */
	for (uint32_t i = 0; i < AGE / 4; i++, n++)
		sample(a, HOT_ID);
	aggregator_settle(a);

	struct snapshot s;
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	cr_expect_eq(own_sum(&s), n);
	const struct snap_func *big = func_named(&s, "render_0");
	cr_expect_not_null(big, "render_0, with 1000 samples, folded");
	cr_expect_null(func_named(&s, "render_1"), "render_1, one sample long ago, stayed");
	const struct snap_func *recent = func_named(&s, "render_2");
	cr_expect_not_null(recent, "render_2, sampled within the age, folded");
	if (big != NULL)
		cr_expect_eq(big->c.own, 1000);
	cr_expect_eq(s.folded_funcs, 1);
	snapshot_free(&s);
	aggregator_free(a);
}
