/* test_cpu_split.c - the split arithmetic (cpu_split.h), the aggregator's
 * use of it on hand-built records, and the verdict rules (verdict.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim_stream.h"
#include "profile/aggregator.h"
#include "profile/cpu_split.h"
#include "transport/record.h"
#include "profile/verdict.h"

#define MS 1000000ull

static bool close_to(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/* ---- shares ------------------------------------------------------------- */

Test(shares, system_time_goes_to_native_samples_first)
{
	struct split_share nat, py;
	/* 10 samples, 4 native, 30 % system: 3 samples' worth, all native. */
	cpu_split_shares(10, 4, 0.3, &nat, &py);
	cr_expect(close_to(nat.system, 0.75) && close_to(nat.native, 0.25));
	cr_expect(close_to(py.python, 1) && close_to(py.system, 0));
	/* 60 %: 6 samples' worth; 4 native ones all system, 2 spread on 6. */
	cpu_split_shares(10, 4, 0.6, &nat, &py);
	cr_expect(close_to(nat.system, 1) && close_to(nat.native, 0));
	cr_expect(close_to(py.system, 2.0 / 6) && close_to(py.python, 4.0 / 6));
}

Test(shares, every_sample_sums_to_one_and_totals_match_f)
{
	for (size_t n = 1; n <= 12; n++)
		for (size_t k = 0; k <= n; k++)
			for (double f = 0; f <= 1.0001; f += 0.125) {
				struct split_share nat, py;
				cpu_split_shares(n, k, f, &nat, &py);
				double sys = (double)k * nat.system + (double)(n - k) * py.system;
				cr_assert(close_to(sys, f * (double)n), "n %zu k %zu f %g", n, k, f);
				if (k)
					cr_assert(close_to(nat.native + nat.system, 1));
				cr_assert(close_to(py.python + py.system, 1));
			}
}

Test(shares, fractions_outside_0_1_are_clamped)
{
	struct split_share nat, py;
	cpu_split_shares(4, 0, 1.5, &nat, &py);
	cr_expect(close_to(py.system, 1));
	cpu_split_shares(4, 2, -1, &nat, &py);
	cr_expect(close_to(nat.native, 1) && close_to(py.python, 1));
}

/* ---- the queue ------------------------------------------------------------ */

Test(queue, due_when_the_counters_move)
{
	struct split_queue q = {0};
	struct split_item it = {.native = true};
	double f = -1;
	cr_assert(split_queue_push(&q, it));
	cr_expect_not(split_queue_due(&q, 100 * MS, 0, &f), "first sight only sets the base");
	cr_assert(split_queue_push(&q, it));
	cr_expect_not(split_queue_due(&q, 100 * MS, 0, &f));
	cr_assert(split_queue_push(&q, it));
	cr_expect(split_queue_due(&q, 110 * MS, 30 * MS, &f));
	cr_expect(close_to(f, 0.75), "f %g", f);
	cr_expect_eq(q.n, 3);
	cr_expect_eq(q.n_native, 3);
	split_queue_clear(&q);
	cr_expect_eq(q.n, 0);
	cr_expect(close_to(split_queue_lifetime(&q), 30.0 / 140));
	split_queue_free(&q);
}

Test(queue, counters_going_back_restart_without_system)
{
	struct split_queue q = {0};
	double f = -1;
	split_queue_push(&q, (struct split_item){0});
	split_queue_due(&q, 50 * MS, 50 * MS, &f);
	split_queue_push(&q, (struct split_item){0});
	cr_expect(split_queue_due(&q, 10 * MS, 0, &f), "a TID reused: settle what is queued");
	cr_expect(close_to(f, 0));
	split_queue_free(&q);
}

Test(queue, full_queue_settles_with_the_lifetime_ratio)
{
	struct split_queue q = {0};
	double f = -1;
	bool due = false;
	split_queue_push(&q, (struct split_item){0});
	split_queue_due(&q, 30 * MS, 10 * MS, &f);
	for (size_t i = 1; i < SPLIT_QUEUE_MAX && !due; i++) {
		split_queue_push(&q, (struct split_item){0});
		due = split_queue_due(&q, 30 * MS, 10 * MS, &f);
	}
	cr_expect(due, "a queue that never settles would grow without bound");
	cr_expect(close_to(f, 0.25), "f %g", f);
	split_queue_free(&q);
}

/* ---- through the aggregator ------------------------------------------------ */

static uint64_t buf[64];

/* The code id's function name in app.py, first line 10 * id. */
static void def_code(struct aggregator *a, uint32_t id, const char *name)
{
	sim_def_code_as(a, id, name, "app.py", 10 * (int)id);
}

/* One sample of tid in process 1 with a single frame in code `id`. */
static void sample_of(struct aggregator *a, int tid, uint32_t id,
                      uint16_t flags, uint64_t user_ms, uint64_t sys_ms,
                      uint64_t growth, uint32_t minflt)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = {REC_SAMPLE, sizeof *s + sizeof(struct rec_frame)},
		.interval_ns = 1000000, .tid = tid, .nframes = 1,
		.flags = (uint16_t)(flags | SAMPLE_GIL_KNOWN), .pid = 1,
		.cpu_user_ns = user_ms * MS, .cpu_sys_ns = sys_ms * MS,
		.minflt = minflt, .mem_growth = growth,
	};
	s->frames[0] = (struct rec_frame){.code_id = id, .instr_offset = 0};
	aggregator_ingest(a, s, s->h.size);
}

static void sample(struct aggregator *a, uint32_t id, uint16_t flags,
                   uint64_t user_ms, uint64_t sys_ms, uint64_t growth,
                   uint32_t minflt)
{
	sample_of(a, 7, id, flags, user_ms, sys_ms, growth, minflt);
}

/* A thread report of process 1 listing tids (running, no CPU time). */
static void report(struct aggregator *a, uint64_t ms, const int *tids,
                   size_t n)
{
	static uint64_t rb[(sizeof(struct rec_threads) +
	                    256 * sizeof(struct rec_thread_state)) / 8 + 1];
	struct rec_threads *r = (struct rec_threads *)rb;
	cr_assert_leq(n, 256);
	memset(rb, 0, sizeof rb);
	r->h = (struct rec_header){REC_THREADS,
		REC_ALIGN((uint32_t)(sizeof *r + n * sizeof r->threads[0]))};
	r->time_ns = ms * MS;
	r->nthreads = (uint32_t)n;
	r->pid = 1;
	for (size_t i = 0; i < n; i++)
		r->threads[i] = (struct rec_thread_state){ .tid = tids[i],
		                                           .state = 'R' };
	aggregator_ingest(a, r, r->h.size);
}

static const struct snap_func *func(const struct snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	cr_assert_fail("no function %s", name);
	return NULL;
}

Test(aggregator_split, classes_system_share_memory_and_waiting)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = {0};
	const uint16_t R = SAMPLE_RUNNING, GIL = SAMPLE_HAS_GIL;
	def_code(a, 1, "py");
	def_code(a, 2, "syscall");
	/* Base at 0/0; then 10 ms of CPU, 5 of it system, over 4 samples:
	 * 2 Python (with the GIL, not in a call), 2 in a call. */
	sample(a, 1, R | GIL, 0, 0, 0, 0);
	sample(a, 1, R | GIL, 0, 0, 4096, 3);
	sample(a, 2, R | GIL | SAMPLE_IN_CALL, 0, 0, 8192, 1);
	sample(a, 2, R | GIL | SAMPLE_IN_CALL, 5, 5, 0, 0);
	/* Off CPU: waiting at once.  Without the GIL in a call (which
	 * released it): native. */
	sample(a, 1, GIL, 5, 5, 0, 0);
	sample(a, 2, R | SAMPLE_IN_CALL, 5, 5, 0, 0);
	aggregator_snapshot(a, &snap);
	const struct snap_func *py = func(&snap, "py"), *sc = func(&snap, "syscall");
	/* 4 settled samples x 0.5 system = 2 samples: the 2 in a call. */
	cr_expect(close_to(py->c.split.python, 2), "python %g", py->c.split.python);
	cr_expect(close_to(py->c.split.system, 0));
	cr_expect(close_to(py->c.split.waiting, 1));
	cr_expect(close_to(sc->c.split.system, 2), "system %g", sc->c.split.system);
	cr_expect(close_to(sc->c.split.native, 1),
	          "the native one is still queued: its class until it settles");
	cr_expect_eq(py->c.split.mem_growth, 4096);
	cr_expect_eq(sc->c.split.mem_growth, 8192);
	cr_expect_eq(py->c.split.minflt, 3);
	cr_expect(close_to(snap.split.system, 2) && close_to(snap.split.waiting, 1));
	snapshot_free(&snap);
	/* The end of the run settles what is queued with the lifetime ratio. */
	aggregator_settle(a);
	aggregator_snapshot(a, &snap);
	sc = func(&snap, "syscall");
	cr_expect(close_to(sc->c.split.native + sc->c.split.system, 3),
	          "native %g system %g", sc->c.split.native, sc->c.split.system);
	cr_expect(close_to(sc->c.split_win.native + sc->c.split_win.system, 0),
	          "the settled sample counted in its own window (as its class)");
	double sum = 0;
	for (size_t i = 0; i < snap.nfuncs; i++) {
		const struct snap_split *x = &snap.funcs[i].c.split;
		sum += x->python + x->native + x->system + x->waiting +
		       x->cpu_wait + x->gil_wait;
	}
	cr_expect(close_to(sum, (double)snap.samples), "classes %g, samples %llu",
	          sum, (unsigned long long)snap.samples);
	snapshot_free(&snap);
	/* The process's own rows carry the same split (the processes
	 * screen's filter shows them). */
	aggregator_filter_process(a, 1);
	aggregator_snapshot(a, &snap);
	const struct snap_func *psc = func(&snap, "syscall");
	cr_expect(close_to(psc->c.split.native + psc->c.split.system, 3),
	          "process rows: native %g system %g", psc->c.split.native,
	          psc->c.split.system);
	cr_expect(close_to(func(&snap, "py")->c.split.python, 2));
	snapshot_free(&snap);
	aggregator_filter_process(a, 0);
	aggregator_reset(a);
	aggregator_snapshot(a, &snap);
	cr_expect(close_to(snap.split.python + snap.split.native + snap.split.system, 0));
	snapshot_free(&snap);
	aggregator_free(a);
}

/* ---- verdict -------------------------------------------------------------- */

static enum snap_verdict decide(struct snap_gauges g, double active, char *why)
{
	g.valid = true;
	return verdict_decide(&g, active, 1.0, why, 96);
}

Test(verdict, each_rule_in_order)
{
	char why[96];
	struct snap_gauges cpu = {.cpu_user_pct = 97, .cpu_system_pct = 2,
	                          .mem_limit = 1000, .rss = 100};
	cr_expect_eq(decide(cpu, 99, why), VERDICT_CPU);
	cr_expect(strstr(why, "user 98%") != NULL, "%s", why);

	struct snap_gauges sys = cpu;
	sys.cpu_user_pct = 40, sys.cpu_system_pct = 60;
	cr_expect_eq(decide(sys, 99, why), VERDICT_SYSTEM);
	cr_expect(strstr(why, "system 60%") != NULL, "%s", why);

	cr_expect_eq(decide(cpu, 20, why), VERDICT_WAITING, "mostly not runnable");
	struct snap_gauges starved = cpu;
	starved.cpu_user_pct = 20; /* runnable, but the machine is busy */
	cr_expect_eq(decide(starved, 95, why), VERDICT_CPU);

	struct snap_gauges paging = sys;
	paging.majflt_rate = 400;
	cr_expect_eq(decide(paging, 20, why), VERDICT_MEMORY, "paging wins");
	cr_expect(strstr(why, "400 major faults/s") != NULL, "%s", why);
	struct snap_gauges slow_disk = cpu;
	slow_disk.majflt_rate = 8;
	cr_expect_eq(decide(slow_disk, 20, why), VERDICT_MEMORY,
	             "waiting on page-ins is paging");
	cr_expect_eq(decide(slow_disk, 99, why), VERDICT_CPU,
	             "a few page-ins in a busy program are not");
	struct snap_gauges full = cpu;
	full.rss = 950;
	cr_expect_eq(decide(full, 99, why), VERDICT_MEMORY);
	cr_expect(strstr(why, "95%") != NULL, "%s", why);
}

Test(verdict, nothing_to_say_without_data)
{
	char why[96] = "x";
	struct snap_gauges g = {.cpu_user_pct = 100};
	cr_expect_eq(verdict_decide(&g, 100, 1.0, why, sizeof why), VERDICT_NONE);
	cr_expect_str_empty(why);
	g.valid = true;
	cr_expect_eq(verdict_decide(&g, 100, 0.05, why, sizeof why), VERDICT_NONE,
	             "a window too short to judge");
	cr_expect_str_eq(snapshot_verdict_word(VERDICT_NONE), "");
	cr_expect_str_eq(snapshot_verdict_word(VERDICT_SYSTEM), "system-bound");
}

/* Samples waiting for their system share keep finding their thread's rows
 * after the table of ended threads is trimmed (which moves the rows). */
Test(aggregator_split, queued_samples_survive_trimming_ended_threads)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = {0};
	const uint16_t R = SAMPLE_RUNNING, GIL = SAMPLE_HAS_GIL;
	int tids[101];
	def_code(a, 1, "py");
	def_code(a, 2, "syscall");
	for (int i = 0; i < 100; i++)
		tids[i] = 100 + i;
	tids[100] = 7;
	report(a, 0, tids, 101);
	/* 100 threads' rows first, so that thread 7's move when they go. */
	for (int i = 0; i < 100; i++)
		sample_of(a, tids[i], 1, R | GIL, 0, 0, 0, 0);
	sample(a, 2, R | GIL | SAMPLE_IN_CALL, 0, 0, 0, 0);
	sample(a, 2, R | GIL | SAMPLE_IN_CALL, 0, 0, 0, 0);
	report(a, 100, &tids[100], 1); /* the 100 have ended */
	aggregator_snapshot(a, &snap);
	cr_assert_lt(snap.nthreads, 101, "no thread was trimmed: %zu", snap.nthreads);
	snapshot_free(&snap);
	/* Thread 7's counters move: its queue settles, 50 % system. */
	sample(a, 2, R | GIL | SAMPLE_IN_CALL, 5, 5, 0, 0);
	aggregator_snapshot(a, &snap);
	const struct snap_func *all = func(&snap, "syscall");
	double want = all->c.split.native + all->c.split.system;
	cr_expect_gt(want, 0, "nothing settled");
	snapshot_free(&snap);
	aggregator_filter_thread(a, 7);
	aggregator_snapshot(a, &snap);
	const struct snap_func *mine = func(&snap, "syscall");
	cr_expect(close_to(mine->c.split.native + mine->c.split.system, want),
	          "thread 7's row: %g of the %g settled", mine->c.split.native +
	          mine->c.split.system, want);
	snapshot_free(&snap);
	aggregator_free(a);
}
