/* test_split_adds_up.c - a property of the aggregator: whatever the sample
 * stream, every own sample lands in exactly one kind of time, so on every
 * row of every snapshot python + native + system + cpu_wait + gil_wait +
 * waiting = own (and the window's kinds = own_win), to rounding.
 *
 * The streams are random but seeded (the seed is in the failure message):
 * several processes and threads, Python and native leaves, every
 * combination of the sample flags, CPU and schedstat counters that move,
 * stall or go backwards (a TID reused), threads that end before their
 * counters move (left out of their process's next report), resets (`r`),
 * thread and process filters, and the end of the run (aggregator_settle).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregator.h"
#include "sim_stream.h"
#include "transport/record.h"

#define NCODES 12        /* Python codes 1..NCODES */
#define NNATIVE 4        /* native functions from 0x80000000 */
#define NATIVE_BASE 0x80000000u
#define MAX_THREADS 6
#define MS 1000000ull

static uint64_t buf[4096];

struct sim {
	uint64_t rng;
	struct aggregator *a;
	struct sim_thread t[MAX_THREADS];
	uint64_t now;
	int next_tid;
	bool filtered; /* a thread or process filter is set */
};

static void sim_sample(struct sim *s, struct sim_thread *t)
{
	struct rec_sample *r = (struct rec_sample *)buf;
	uint16_t n = (uint16_t)(1 + sim_below(&s->rng, 4));
	memset(buf, 0, sizeof buf);
	sim_thread_advance(&s->rng, t);
	*r = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *r + n * sizeof(struct rec_frame)) },
		.time_ns = s->now, .interval_ns = 1000000, .tid = t->tid,
		.nframes = n, .flags = sim_random_flags(&s->rng), .pid = t->pid,
		.cpu_user_ns = t->user, .cpu_sys_ns = t->sys,
		.minflt = sim_below(&s->rng, 3), .mem_growth = sim_below(&s->rng, 2) * 4096,
		.run_ns = sim_below(&s->rng, 8) ? t->run : 0,
		.delay_ns = t->delay,
	};
	for (uint16_t i = 0; i < n; i++) {
		/* A native leaf (--native) now and then, under Python frames. */
		bool native = i == 0 && sim_below(&s->rng, 4) == 0;
		r->frames[i] = (struct rec_frame){
			.code_id = native ? NATIVE_BASE + sim_below(&s->rng, NNATIVE)
			                  : 1 + sim_below(&s->rng, NCODES),
			.instr_offset = (int32_t)(2 * sim_below(&s->rng, 4)) };
	}
	aggregator_ingest(s->a, r, r->h.size);
}

static double kinds(const struct snap_split *x)
{
	return x->python + x->native + x->system + x->cpu_wait + x->gil_wait +
	       x->waiting;
}

/* Rounding: each settled sample adds a few fractions of one. */
static bool adds_up(double sum, uint64_t own)
{
	return fabs(sum - (double)own) <= 1e-6 * (double)own + 1e-6;
}

static void check_counts(const struct snap_counts *c, const char *what,
                         const char *name, uint64_t seed, int step)
{
	cr_assert(adds_up(kinds(&c->split), c->own),
	          "seed %llu step %d: %s %s: kinds %.6f, own %llu",
	          (unsigned long long)seed, step, what, name, kinds(&c->split),
	          (unsigned long long)c->own);
	cr_assert(adds_up(kinds(&c->split_win), c->own_win),
	          "seed %llu step %d: %s %s: window kinds %.6f, own_win %llu",
	          (unsigned long long)seed, step, what, name,
	          kinds(&c->split_win), (unsigned long long)c->own_win);
}

static void check_snapshot(struct sim *s, uint64_t seed, int step)
{
	struct snapshot snap;
	memset(&snap, 0, sizeof snap);
	aggregator_snapshot(s->a, &snap);
	for (size_t i = 0; i < snap.nfuncs; i++)
		check_counts(&snap.funcs[i].c, "function", snap.funcs[i].name,
		             seed, step);
	for (size_t i = 0; i < snap.nlines; i++)
		check_counts(&snap.lines[i].c, "line", snap.lines[i].name, seed,
		             step);
	for (size_t i = 0; i < snap.ncallees; i++)
		check_counts(&snap.callees[i].c, "callee", snap.callees[i].name,
		             seed, step);
	if (!s->filtered)
		cr_assert(adds_up(kinds(&snap.split), snap.samples),
		          "seed %llu step %d: all samples: kinds %.6f, samples %llu",
		          (unsigned long long)seed, step, kinds(&snap.split),
		          (unsigned long long)snap.samples);
	snapshot_free(&snap);
}

/* One random stream of `steps` events. */
static void run_stream(uint64_t seed, int steps)
{
	struct sim s = { .rng = seed * 2654435761u + 1, .next_tid = 1000 };
	s.a = aggregator_new(true);
	cr_assert_not_null(s.a);
	for (uint32_t id = 1; id <= NCODES; id++)
		sim_def_code(s.a, id, id);
	for (uint32_t i = 0; i < NNATIVE; i++) {
		char name[16];
		snprintf(name, sizeof name, "nat%u", i);
		cr_assert(aggregator_define_native(s.a, NATIVE_BASE + i, name,
		                                   "lib.c", 0, "lib.so"));
	}
	for (int i = 0; i < MAX_THREADS; i++)
		sim_thread_start(&s.t[i], &s.next_tid, i);
	for (int step = 0; step < steps; step++) {
		uint32_t ev = sim_below(&s.rng, 100);
		s.now += MS;
		if (ev < 80) {
			struct sim_thread *t = &s.t[sim_below(&s.rng, MAX_THREADS)];
			if (t->alive)
				sim_sample(&s, t);
		} else if (ev < 86) {
			sim_report(s.a, s.t, MAX_THREADS, s.now);
		} else if (ev < 90) {
			sim_thread_churn(&s.rng, s.t, MAX_THREADS, &s.next_tid);
		} else if (ev < 97) {
			check_snapshot(&s, seed, step);
		} else if (ev < 98) {
			aggregator_reset(s.a);
		} else {
			/* The thread and process screens' filters. */
			uint32_t f = sim_below(&s.rng, 3);
			aggregator_filter_thread(s.a, f == 0 ? s.t[0].tid : 0);
			aggregator_filter_process(s.a, f == 1 ? 101 : 0);
			s.filtered = f != 2;
		}
	}
	check_snapshot(&s, seed, steps);
	aggregator_settle(s.a);
	check_snapshot(&s, seed, steps + 1);
	aggregator_filter_thread(s.a, 0);
	aggregator_filter_process(s.a, 0);
	s.filtered = false;
	check_snapshot(&s, seed, steps + 2);
	aggregator_free(s.a);
}

Test(split_adds_up, on_every_row_of_random_streams)
{
	for (uint64_t seed = 1; seed <= 200; seed++)
		run_stream(seed, 600);
}

/* The case of the report: a thread that ends before its CPU counters
 * move leaves samples that no counter will ever settle. */
Test(split_adds_up, thread_that_ends_before_its_counters_move)
{
	struct sim s = { .rng = 7, .next_tid = 1000 };
	s.a = aggregator_new(true);
	sim_def_code(s.a, 1, 1);
	sim_thread_start(&s.t[0], &s.next_tid, 0);
	sim_thread_start(&s.t[1], &s.next_tid, 1);
	sim_report(s.a, s.t, MAX_THREADS, s.now);
	for (int i = 0; i < 20; i++) {
		struct rec_sample *r = (struct rec_sample *)buf;
		memset(buf, 0, sizeof buf);
		*r = (struct rec_sample){
			.h = { REC_SAMPLE, sizeof *r + sizeof(struct rec_frame) },
			.interval_ns = 1000000, .tid = s.t[1].tid, .nframes = 1,
			.flags = SAMPLE_RUNNING | SAMPLE_HAS_GIL | SAMPLE_GIL_KNOWN,
			.pid = s.t[1].pid, .cpu_user_ns = 10 * MS,
			.run_ns = 5 * MS, .delay_ns = MS };
		r->frames[0] = (struct rec_frame){ 1, 0 };
		aggregator_ingest(s.a, r, r->h.size);
	}
	s.t[1].alive = false;
	sim_report(s.a, s.t, MAX_THREADS, s.now);
	struct snapshot snap;
	memset(&snap, 0, sizeof snap);
	aggregator_snapshot(s.a, &snap);
	cr_assert_eq(snap.nfuncs, 1);
	cr_assert_eq(snap.funcs[0].c.own, 20);
	cr_assert(adds_up(kinds(&snap.funcs[0].c.split), 20),
	          "kinds %.3f of 20 own samples", kinds(&snap.funcs[0].c.split));
	/* Settled, not only counted as Python: with the thread's lifetime
	 * run-queue share, 1 ms waited of 6 ms runnable. */
	cr_assert(fabs(snap.funcs[0].c.split.cpu_wait - 20.0 / 6) < 1e-6,
	          "cpu_wait %.3f", snap.funcs[0].c.split.cpu_wait);
	snapshot_free(&snap);
	aggregator_free(s.a);
}

/* The kernel books a run-queue wait when it ends: here each 30 ms wait
 * shows in the counters only at the sample after it, so any one stretch
 * between two settlings may hold another stretch's wait.  Over the
 * thread's life its samples' CPU wait must still be delay / (run + delay)
 * of them. */
Test(split_adds_up, cpu_wait_follows_the_life_ratio_when_waits_book_late)
{
	struct aggregator *a = aggregator_new(true);
	struct rec_sample *r = (struct rec_sample *)buf;
	uint64_t user = 0, run = 1000, delay = 0;
	sim_def_code(a, 1, 1);
	for (int i = 0; i < 400; i++) {
		if (i % 10 == 3)
			user += 10 * MS; /* the tick that settles the queue */
		if (i % 10 == 7)
			delay += 30 * MS; /* a wait that ended */
		run += MS;
		memset(buf, 0, sizeof buf);
		*r = (struct rec_sample){
			.h = { REC_SAMPLE, sizeof *r + sizeof(struct rec_frame) },
			.interval_ns = 1000000, .tid = 5, .nframes = 1, .pid = 1,
			.flags = SAMPLE_RUNNING | SAMPLE_HAS_GIL | SAMPLE_GIL_KNOWN,
			.cpu_user_ns = user, .run_ns = run, .delay_ns = delay };
		r->frames[0] = (struct rec_frame){ 1, 0 };
		aggregator_ingest(a, r, r->h.size);
	}
	aggregator_settle(a);
	struct snapshot snap;
	memset(&snap, 0, sizeof snap);
	aggregator_snapshot(a, &snap);
	/* The first sample is the base: 399 ms run and 1200 ms waited after
	 * it, over 400 samples. */
	double want = 400.0 * 1200.0 / (399.0 + 1200.0);
	cr_assert(fabs(snap.funcs[0].c.split.cpu_wait - want) < 1.0,
	          "cpu_wait %.2f of 400 samples, the life ratio gives %.2f",
	          snap.funcs[0].c.split.cpu_wait, want);
	cr_assert(adds_up(kinds(&snap.funcs[0].c.split), 400));
	snapshot_free(&snap);
	aggregator_free(a);
}
