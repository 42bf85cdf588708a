/* test_stack_derive.c - the functions, lines and callees counted from
 * the snapshot's stacks (profile/stack_derive.h) are what an independent
 * count of the same records, sample by sample, gives (sample_oracle.h),
 * exactly: on seeded random record streams (several processes
 * and threads, Python and native frames with and without a source line,
 * recursion, truncated stacks ("[N more frames]"), every sample flag,
 * CPU and schedstat counters that move, stall or go back, memory growth
 * and shrink, faults, kept-memory boundaries passing, threads that end,
 * resets, thread and process filters), every snapshot's function, line
 * and callee rows (own, total, their windows and seconds, the memory
 * charged, a function's first line, a line's name) equal the oracle's,
 * every row's time split adds up to its own samples and the rows' to
 * the snapshot's (unfiltered, or the filtered thread's).  The seed and
 * step are in every failure message. */
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
#include "profile/stack_derive.h"
#include "sample_oracle.h"
#include "sim_stream.h"
#include "transport/record.h"

#define NCODES 13        /* Python codes 1..NCODES; 12 shares 11's row,
                            13 (a generator expression) 1's line */
#define NNATIVE 4        /* native functions from 0x80000000 */
#define NATIVE_BASE 0x80000000u
#define MAX_THREADS 6
#define MS 1000000ull

static uint64_t buf[4096];

/* Two codes with one name and file share a function row (12 is f11); a
 * generator expression shares its function's line (13 on f1's line 10:
 * the line's name is the first function seen on it). */
static void def_code(struct aggregator *a, uint32_t id)
{
	if (id == 13)
		sim_def_code_as(a, id, "f1.<genexpr>", "m1.py", 10);
	else
		sim_def_code(a, id, id == 12 ? 11 : id);
}

struct sim {
	uint64_t rng, seed;
	struct aggregator *a;
	struct sample_oracle *o; /* fed every record a gets */
	bool split;
	struct sim_thread t[MAX_THREADS];
	uint64_t now;
	int next_tid;
	pid_t tid_filter, pid_filter;
	int step;
	bool was_reset;
	int ended; /* threads ended: the aggregator keeps the 64 last gone,
	              the oracle does not age them out */
};

/* A frame: native ones carry their source line as the offset (0:
 * unknown, no line row). */
static struct rec_frame random_frame(struct sim *s, bool leaf)
{
	if (sim_below(&s->rng, leaf ? 3 : 8) == 0)
		return (struct rec_frame){ NATIVE_BASE + sim_below(&s->rng, NNATIVE),
		                           (int32_t)(sim_below(&s->rng, 3) * 7) };
	return (struct rec_frame){ 1 + sim_below(&s->rng, NCODES),
	                           (int32_t)(2 * sim_below(&s->rng, 4)) };
}

static void sim_sample(struct sim *s, struct sim_thread *t)
{
	struct rec_sample *r = (struct rec_sample *)buf;
	uint16_t n = (uint16_t)sim_below(&s->rng, 9); /* 0: no Python stack */
	memset(buf, 0, sizeof buf);
	sim_thread_advance(&s->rng, t);
	*r = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *r + n * sizeof(struct rec_frame)) },
		.time_ns = s->now, .interval_ns = (uint32_t)(MS / 2 + sim_below(&s->rng, MS)),
		.tid = t->tid, .nframes = n, .flags = sim_random_flags(&s->rng), .pid = t->pid,
		.cpu_user_ns = t->user, .cpu_sys_ns = t->sys,
		.minflt = sim_below(&s->rng, 3), .majflt = sim_below(&s->rng, 5) == 0,
		.mem_growth = sim_below(&s->rng, 2) * 4096,
		.mem_shrink = sim_below(&s->rng, 4) == 0 ? 8192 : 0,
		.run_ns = sim_below(&s->rng, 8) ? t->run : 0, .delay_ns = t->delay,
	};
	for (uint16_t i = 0; i < n; i++)
		/* Recursion now and then: the frame below again. */
		r->frames[i] = i > 0 && sim_below(&s->rng, 5) == 0 ? r->frames[i - 1]
		               : random_frame(s, i == 0);
	/* A truncated stack: its outermost frame stands for the N frames
	 * left out ("[N more frames]", one row per bucket of N, no line). */
	if ((r->flags & SAMPLE_TRUNCATED) && n >= 2)
		r->frames[n - 1] = (struct rec_frame){ REC_MORE_FRAMES,
		                                       (int32_t)(7 + 60 * sim_below(&s->rng, 3)) };
	/* The same stack again, as a thread busy in one place sends it. */
	int repeat = sim_below(&s->rng, 3) == 0 ? 3 : 1;
	for (int k = 0; k < repeat; k++) {
		r->time_ns = s->now + (uint64_t)k;
		aggregator_ingest(s->a, r, r->h.size);
		oracle_ingest(s->o, r, r->h.size);
	}
}

/* Processes 100 and 101, as -s would report them. */
static void sim_processes(struct sim *s)
{
	for (int pid = 100; pid <= 101; pid++)
		sim_def_process(s->a, pid, s->now);
}

/* The seed, step, filters and whether a reset came in every message. */
static void check_snapshot(struct sim *s)
{
	char label[128];
	snprintf(label, sizeof label, "seed %llu step %d (filters %d %d, reset %d)",
	         (unsigned long long)s->seed, s->step, s->tid_filter, s->pid_filter,
	         s->was_reset);
	const struct derive_cmp c = { .label = label, .fatal = true, .first_line = true };
	derive_check_oracle(&c, s->a, s->o, s->tid_filter, s->pid_filter, s->split);
}

/* One thread ends or starts (sim_thread_churn), counting the ends. */
static void churn(struct sim *s)
{
	int alive = 0;
	for (int i = 0; i < MAX_THREADS; i++)
		alive -= s->t[i].alive;
	sim_thread_churn(&s->rng, s->t, MAX_THREADS, &s->next_tid);
	for (int i = 0; i < MAX_THREADS; i++)
		alive += s->t[i].alive;
	s->ended += alive < 0;
}

static void run_stream(uint64_t seed, int steps, bool split)
{
	struct sim s = { .rng = seed * 2654435761u + 1, .seed = seed, .next_tid = 1000,
	                 .split = split };
	s.a = aggregator_new(split);
	s.o = oracle_new(split);
	cr_assert(s.a != NULL && s.o != NULL);
	sim_tee(oracle_ingest_to, s.o);
	for (uint32_t id = 1; id <= NCODES; id++)
		/* Two codes with one name and file share a function row. */
		def_code(s.a, id);
	for (uint32_t i = 0; i < NNATIVE; i++) {
		char name[16];
		snprintf(name, sizeof name, "nat%u", i);
		cr_assert(aggregator_define_native(s.a, NATIVE_BASE + i, name,
		                                   i % 2 ? "lib.c" : "", 0, "lib.so"));
		cr_assert(oracle_define_native(s.o, NATIVE_BASE + i, name,
		                               i % 2 ? "lib.c" : "", 0, "lib.so"));
	}
	for (int i = 0; i < MAX_THREADS; i++)
		sim_thread_start(&s.t[i], &s.next_tid, i);
	sim_processes(&s);
	for (s.step = 0; s.step < steps; s.step++) {
		uint32_t ev = sim_below(&s.rng, 100);
		/* Now and then 3 s go by: kept memory's 10 s boundaries pass. */
		s.now += sim_below(&s.rng, 100) == 0 ? 3000 * MS : MS;
		if (ev < 80) {
			struct sim_thread *t = &s.t[sim_below(&s.rng, MAX_THREADS)];
			if (t->alive)
				sim_sample(&s, t);
		} else if (ev < 86) {
			sim_report(s.a, s.t, MAX_THREADS, s.now);
		} else if (ev < 89) {
			churn(&s);
		} else if (ev < 97) {
			check_snapshot(&s);
		} else if (ev < 98) {
			aggregator_reset(s.a);
			oracle_reset(s.o);
			s.was_reset = true;
		} else {
			uint32_t f = sim_below(&s.rng, 3);
			s.tid_filter = f == 0 ? s.t[0].tid : 0;
			s.pid_filter = f == 1 ? 101 : 0;
			aggregator_filter_thread(s.a, s.tid_filter);
			aggregator_filter_process(s.a, s.pid_filter);
		}
	}
	aggregator_settle(s.a);
	check_snapshot(&s);
	cr_assert_leq(s.ended, 64, "seed %llu: %d threads ended: the aggregator ages gone "
	              "threads out beyond 64, the oracle does not", (unsigned long long)seed,
	              s.ended);
	sim_tee(NULL, NULL);
	oracle_free(s.o);
	aggregator_free(s.a);
}

Test(stack_derive, equals_the_oracle_on_random_streams)
{
	for (uint64_t seed = 1; seed <= 40; seed++)
		run_stream(seed, 2000, true);
}

Test(stack_derive, equals_the_oracle_without_the_split)
{
	for (uint64_t seed = 100; seed <= 110; seed++)
		run_stream(seed, 2000, false);
}

/* A hand-built snapshot: recursion counts a function once per stack,
 * and "[other stacks]" is a row of its own. */
Test(stack_derive, recursion_and_other_stacks)
{
	struct snap_frame frames[] = {
		{ .name = "[other stacks]", .file = "", .module = "", .other = true },
		{ .name = "main", .file = "a.py", .line = 3, .first_line = 1, .module = "" },
		{ .name = "fib", .file = "a.py", .line = 7, .first_line = 6, .module = "" },
	};
	struct snap_stack_node nodes[] = {
		{ 0, 0, 0 }, { 0, 0, 1 },
		{ 0, 1, 1 },        /* 2: main */
		{ 2, 2, 2 },        /* 3: main -> fib */
		{ 3, 2, 3 },        /* 4: main -> fib -> fib */
	};
	struct snap_stack stacks[] = {
		{ .node = 4, .tid = 1, .pid = 1, .samples = 5, .seconds = 0.005 },
		{ .node = 3, .tid = 1, .pid = 1, .samples = 2, .seconds = 0.002 },
		{ .node = 1, .tid = 2, .pid = 1, .samples = 4, .seconds = 0.004 },
	};
	struct snapshot s = { .stack_frames = frames, .nstack_frames = 3,
	                      .stack_nodes = nodes, .nstack_nodes = 5,
	                      .stacks = stacks, .nstacks = 3 };
	struct stack_derived d;
	cr_assert(stack_derive(&s, 0, 0, &d));
	cr_expect_eq(d.samples, 11);
	for (size_t i = 0; i < d.nfuncs; i++) {
		const struct snap_func *f = &d.funcs[i];
		if (strcmp(f->name, "fib") == 0)
			cr_expect(f->c.own == 7 && f->c.total == 7, "fib once per stack");
		else if (strcmp(f->name, "main") == 0)
			cr_expect(f->c.own == 0 && f->c.total == 7);
		else
			cr_expect(f->other && f->c.own == 4 && f->c.total == 4);
	}
	stack_derived_free(&d);
	cr_assert(stack_derive(&s, 2, 0, &d));
	cr_expect_eq(d.samples, 4, "thread 2's stacks only");
	stack_derived_free(&d);
}
