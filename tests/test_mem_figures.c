/* test_mem_figures.c - net and kept memory per row (mem_kept.h, the
 * aggregator's shrink charging) and the header's RSS growth rate
 * (rss_rate.h), on hand-built records with known times. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim_stream.h"
#include "profile/aggregator.h"
#include "profile/mem_kept.h"
#include "profile/rss_rate.h"
#include "transport/record.h"

#define MS 1000000ull
#define S 1000000000ull
#define MIB (1ll << 20)

static uint64_t buf[64];

/* The code id's function name in app.py, first line 10 * id. */
static void def_code(struct aggregator *a, uint32_t id, const char *name)
{
	sim_def_code_as(a, id, name, "app.py", 10 * (int)id);
}

/* A running sample of thread 7 at time t_ns in code `id`, with the RSS
 * growth and shrink the sampler charged to it. */
static void sample(struct aggregator *a, uint64_t t_ns, uint32_t id, uint64_t growth,
                   uint64_t shrink)
{
	struct rec_sample *s = (struct rec_sample *)buf;

	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = { REC_SAMPLE, sizeof *s + sizeof(struct rec_frame) },
		.time_ns = t_ns, .interval_ns = 1000000, .tid = 7, .nframes = 1,
		.flags = SAMPLE_RUNNING | SAMPLE_HAS_GIL | SAMPLE_GIL_KNOWN, .pid = 1,
		.mem_growth = growth, .mem_shrink = shrink,
	};
	s->frames[0] = (struct rec_frame){ .code_id = id, .instr_offset = 0 };
	aggregator_ingest(a, s, s->h.size);
}

static const struct snap_func *func(const struct snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	cr_assert_fail("no function %s", name);
	return NULL;
}

/* A free is seen at the tick after it, when the thread has moved on: the
 * shrink belongs to where it was at the tick before. */
Test(net, shrink_goes_to_the_previous_sample)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = { 0 };

	def_code(a, 1, "churn");
	def_code(a, 2, "after");
	sample(a, 1 * MS, 1, 0, 0);
	sample(a, 2 * MS, 1, 40 * MIB, 0);          /* churn faults 40 MiB in */
	sample(a, 3 * MS, 2, 0, 40 * MIB);          /* ... frees it, seen later */
	sample(a, 4 * MS, 2, 1 * MIB, 0);           /* after keeps 1 MiB */
	aggregator_snapshot(a, &snap);
	const struct snap_func *churn = func(&snap, "churn"), *after = func(&snap, "after");
	cr_expect_eq(churn->c.split.mem_growth, 40 * MIB);
	cr_expect_eq(churn->c.split.mem_shrink, 40 * MIB);
	cr_expect_eq(snap_mem_net(&churn->c.split), 0);
	cr_expect_eq(after->c.split.mem_shrink, 0);
	cr_expect_eq(snap_mem_net(&after->c.split), 1 * MIB);
	cr_expect_eq(snap_mem_net(&snap.split), 1 * MIB, "the total nets out too");
	snapshot_free(&snap);
	aggregator_free(a);
}

/* Kept is the net growth of the last minute: a row that grew long ago and
 * then stopped keeps its net, not its kept; a row that grows now has both. */
Test(kept, only_the_last_minute_counts)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = { 0 };
	uint64_t t = 1 * S;

	def_code(a, 1, "early");
	def_code(a, 2, "late");
	def_code(a, 3, "idle");
	for (int i = 0; i < 5; i++, t += S)
		sample(a, t, 1, 2 * MIB, 0);          /* 10 MiB in the first 5 s */
	for (; t < 65 * S; t += S)
		sample(a, t, 3, 0, 0);                /* a minute of nothing */
	for (int i = 0; i < 3; i++, t += S)
		sample(a, t, 2, 1 * MIB, 0);          /* 3 MiB at 65-67 s */
	aggregator_snapshot(a, &snap);
	const struct snap_func *early = func(&snap, "early"), *late = func(&snap, "late");
	cr_expect_eq(snap_mem_net(&early->c.split), 10 * MIB);
	cr_expect_eq(early->c.mem_kept, 0, "grew more than a minute ago: %lld",
	             (long long)early->c.mem_kept);
	cr_expect_eq(late->c.mem_kept, 3 * MIB, "kept %lld", (long long)late->c.mem_kept);
	snapshot_free(&snap);
	aggregator_free(a);
}

/* Before a minute has passed, kept is the net since start. */
Test(kept, is_the_net_before_the_first_minute)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = { 0 };

	def_code(a, 1, "grow");
	for (uint64_t t = 1; t <= 30; t++)
		sample(a, t * S, 1, 1 * MIB, t % 3 == 0 ? MIB / 2 : 0);
	aggregator_snapshot(a, &snap);
	const struct snap_func *g = func(&snap, "grow");
	cr_expect_eq(snap_mem_net(&g->c.split), 30 * MIB - 10 * (MIB / 2));
	cr_expect_eq(g->c.mem_kept, snap_mem_net(&g->c.split));
	snapshot_free(&snap);
	aggregator_free(a);
}

Test(kept, clock_marks_each_slot_once)
{
	struct mem_kept_clock clk = { 0 };
	struct mem_kept k = { 0 };

	cr_expect_not(mem_kept_due(&clk, 5 * S), "the first call starts the clock");
	cr_expect_not(mem_kept_due(&clk, 14 * S));
	cr_expect(mem_kept_due(&clk, 15 * S));
	mem_kept_mark(&k, &clk, 7);
	cr_expect_not(mem_kept_due(&clk, 16 * S));
	/* Six boundaries later the mark at 15 s is the oldest kept: kept =
	 * net now - 7. */
	for (uint64_t t = 25; t <= 65; t += 10)
		cr_expect(mem_kept_due(&clk, t * S));
	cr_expect_eq(mem_kept_value(&k, &clk, 20), 13);
}

Test(rate, bytes_per_minute_over_the_last_minute)
{
	struct rss_rate r = { 0 };

	cr_expect(rss_rate_update(&r, 1 * S, 100 * MIB) == 0, "one read: no rate");
	/* 6 MiB in 3 s = 120 MiB/min. */
	cr_expect(fabs(rss_rate_update(&r, 4 * S, 106 * MIB) - 120.0 * MIB) < 1);
	/* Steady for 10 minutes, then 30 MiB more in the last 30 s: over the
	 * last minute that is about 30 MiB/min, not what the start said. */
	for (uint64_t t = 11; t <= 600; t++)
		rss_rate_update(&r, t * S, 106 * MIB);
	double v = 0;
	for (uint64_t t = 601; t <= 630; t++)
		v = rss_rate_update(&r, t * S, 106 * MIB + (int64_t)(t - 600) * MIB);
	cr_expect(v > 25.0 * MIB && v < 40.0 * MIB, "rate %.0f MiB/min", v / MIB);
	/* Shrinking: negative. */
	cr_expect(rss_rate_update(&r, 700 * S, 50 * MIB) < 0);
}
