/* test_split_carry.c - the system share of a thread whose CPU time is
 * mostly of one kind, on hand-built streams of its counters.
 *
 * The kernel steps a thread's user and system time by 10 ms each, so the
 * kind a thread spends little time in (the user time of a loop around
 * pread, the system time of a bytecode loop) steps once per many steps of
 * the other, among only the samples since the other last stepped.  Shared
 * over just those samples, that kind came out at about 60 % of its share
 * here (test_split's read_file line: 2.9 % user against 8.0 % measured,
 * on a busy machine).  Each stream cycles, like test_split's workload,
 * through phases of 500 ms of CPU time of a known, constant mix, its
 * counters floored to 10 ms as /proc shows them and its schedstat run time
 * exact; the measured phase's python + native (or system) share of its
 * time on a CPU must be its mix to 1 percentage point (before the carry:
 * 1.3 to 2.1 short; the carry's cap of half a tick leaves up to 0.8).
 * Streams with and without waits for a CPU (a busy machine: the thread is
 * runnable, its counters and run time still, twice as long as it runs).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim_stream.h"
#include "profile/aggregator.h"
#include "transport/record.h"

#define MS 1000000ull
#define TICK_MS 10.0
#define TOLERANCE_PP 1.0

static uint64_t buf[64];

/* The code id's function name in app.py, first line 10 * id. */
static void def_code(struct aggregator *a, uint32_t id, const char *name)
{
	sim_def_code_as(a, id, name, "app.py", 10 * (int)id);
}

/* What the sampler reads of the thread at one tick. */
struct reading {
	uint64_t user_ns, sys_ns; /* /proc: floored to the clock tick */
	uint64_t run_ns, delay_ns; /* schedstat: exact */
};

static void sample(struct aggregator *a, uint32_t id, uint16_t flags,
                   struct reading r)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	memset(buf, 0, sizeof buf);
	*s = (struct rec_sample){
		.h = {REC_SAMPLE, sizeof *s + sizeof(struct rec_frame)},
		.interval_ns = 1000000, .tid = 7, .nframes = 1,
		.flags = (uint16_t)(flags | SAMPLE_RUNNING | SAMPLE_GIL_KNOWN |
		                    SAMPLE_HAS_GIL),
		.pid = 1,
		.cpu_user_ns = r.user_ns, .cpu_sys_ns = r.sys_ns,
		.run_ns = r.run_ns, .delay_ns = r.delay_ns,
	};
	s->frames[0] = (struct rec_frame){.code_id = id, .instr_offset = 0};
	aggregator_ingest(a, s, s->h.size);
}

static uint64_t floored(double ms)
{
	return (uint64_t)(floor(ms / TICK_MS) * TICK_MS * (double)MS);
}

/* The stream of one thread that runs `run_ms` of every `run_ms + wait_ms`
 * ms of wall time (one sample per ms) and waits for a CPU the rest, in
 * rounds of three phases of 500 ms of CPU time each: all user time in
 * native code ("before"), then the phase measured ("phase", `user` of its
 * CPU time user time, native code or bytecode), then all user time in
 * bytecode ("after"), as test_split's workload cycles.  Returns the share
 * (percent) of the measured phase's time on a CPU that pytop gives the
 * one class `cls` ("python", "native" or "system"). */
static double stream_share(double user, bool native, int run_ms, int wait_ms,
                           const char *cls)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot snap = {0};
	double user_ms = 0, sys_ms = 0, waited_ms = 0, got = 0;
	int cpu_ms = 0;
	def_code(a, 1, "before");
	def_code(a, 2, "phase");
	def_code(a, 3, "after");
	for (int ms = 0; cpu_ms < 3 * 1500; ms++) {
		int at = ms % (run_ms + wait_ms), part = cpu_ms % 1500 / 500;
		bool running = at < run_ms;
		double u = part == 1 ? user : 1;
		if (running) {
			cpu_ms++;
			user_ms += u;
			sys_ms += 1 - u;
		} else {
			waited_ms += 1;
		}
		/* The kernel adds a wait to the delay when it ends. */
		double delay_ms = running ? waited_ms : waited_ms - (at - run_ms + 1);
		struct reading r = {
			.user_ns = floored(user_ms),
			.sys_ns = floored(sys_ms),
			.run_ns = (uint64_t)cpu_ms * MS + 1,
			.delay_ns = (uint64_t)(delay_ms * (double)MS),
		};
		bool in_call = part == 0 || (part == 1 && native);
		sample(a, (uint32_t)part + 1, in_call ? SAMPLE_IN_CALL : 0, r);
	}
	aggregator_settle(a);
	aggregator_snapshot(a, &snap);
	for (size_t i = 0; i < snap.nfuncs; i++) {
		const struct snap_split *x = &snap.funcs[i].c.split;
		double on_cpu = x->python + x->native + x->system;
		if (strcmp(snap.funcs[i].name, "phase") != 0 || on_cpu <= 0)
			continue;
		got = 100.0 * (strcmp(cls, "python") == 0   ? x->python
		               : strcmp(cls, "native") == 0 ? x->native
		                                            : x->system) / on_cpu;
	}
	snapshot_free(&snap);
	aggregator_free(a);
	return got;
}

static void check(double user, bool native, int run_ms, int wait_ms,
                  const char *cls, double want)
{
	double got = stream_share(user, native, run_ms, wait_ms, cls);
	cr_log_info("%s share at %.0f%% user, running %d ms of %d: %.2f%%, want %.2f%%",
	            cls, 100 * user, run_ms, run_ms + wait_ms, got, want);
	cr_expect_leq(fabs(got - want), TOLERANCE_PP,
	              "%s share at %.0f%% user, running %d ms of %d: %.2f%%, want %.2f%%",
	              cls, 100 * user, run_ms, run_ms + wait_ms, got, want);
}

Test(split_carry, little_user_time_in_system_calls)
{
	check(0.03, true, 1, 0, "native", 3);
	check(0.05, true, 1, 0, "native", 5);
}

Test(split_carry, little_user_time_in_system_calls_under_load)
{
	check(0.03, true, 3, 6, "native", 3);
	check(0.05, true, 3, 6, "native", 5);
}

Test(split_carry, little_system_time_in_bytecode)
{
	check(0.97, false, 1, 0, "system", 3);
}

Test(split_carry, little_system_time_in_bytecode_under_load)
{
	check(0.97, false, 3, 6, "system", 3);
}
