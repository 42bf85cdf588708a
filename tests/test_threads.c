/* test_threads.c - the threads panel's figures, end to end, on every
 * interpreter: pytop -b --json launches tests/workloads/thread_states.py,
 * which keeps one thread in each state (a GIL-bound Python loop, native
 * hashing with the GIL released, a sleeper, a thread blocked on a lock, one
 * that ends early, the main thread waiting) and measures each thread's own
 * CPU use.  Every snapshot of the steady part of the run must show each
 * thread's state, its share of the GIL, and its CPU within
 * CPU_TOLERANCE_PP of what the thread measured itself (the machine may be
 * busy with other work, so CPU is compared with that, not with 100 %).
 *
 * The figures go to the test log as "# threads (<slot> <version>): ..."
 * lines.  Tests run one at a time (see main): two busy workloads on a
 * two-core machine would starve each other.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define RUN_S 4.0           /* the workload's run after it is ready */
#define DELAY_S "0.25"      /* pytop's refresh interval */
#define MIN_STEADY 6        /* steady snapshots needed */
#define CPU_TOLERANCE_PP 15.0
#define IDLE_CPU_MAX 3.0
#define TIMEOUT_S 40.0

/* The workload's threads, as its truth file names them. */
enum role { GIL_BOUND, NATIVE, SLEEPER, LOCK_WAITER, SHORT_LIVED, MAIN,
            NROLES };

static const char *const role_names[NROLES] = {
	"gil_bound", "native", "sleeper", "lock_waiter", "short_lived", "main",
};

/* What the steady snapshots showed of one thread. */
struct seen {
	int tid;
	double truth_cpu;     /* steady_cpu_pct the thread measured */
	int states[8];        /* snapshots per state, by index in state_names */
	double cpu, gil;      /* sums over the steady snapshots */
	double samples_first; /* in the first steady snapshot */
	double samples;       /* in the last one */
	const char *name;     /* OS name in the last one (borrowed) */
};

static const char *const state_names[] = {
	"running_gil", "running", "gil_wait", "idle", "gone", "unknown", NULL,
};

static int state_index(const char *state)
{
	for (int i = 0; state_names[i]; i++)
		if (state && strcmp(state, state_names[i]) == 0)
			return i;
	cr_assert_fail("thread state \"%s\" is not one of the documented ones",
	               state ? state : "(missing)");
	return 0;
}

/* One finished run; owns everything. */
struct run {
	char *dir;
	struct h_proc p;
	json_t *lines;   /* every refresh */
	json_t *truth;
	const char *slot, *version;
	double launched_s; /* CLOCK_MONOTONIC just before pytop started: at or
	                      before its elapsed 0 */
};

static struct run g_run; /* torn down by .fini even after a failure */

static void run_teardown(void)
{
	json_decref(g_run.lines);
	json_decref(g_run.truth);
	h_proc_free(&g_run.p);
	h_rmtree(g_run.dir);
	free(g_run.dir);
	memset(&g_run, 0, sizeof g_run);
}

static void run_workload_named(const char *slot, bool idle,
                               const char *workload, double seconds_run)
{
	struct run *r = &g_run;
	const struct h_python *py = h_python_slot(slot);
	cr_assert_not_null(py, "unknown interpreter slot %s", slot);
	char *python = h_need_python_slot(slot);
	r->slot = py->slot;
	r->version = py->version;
	r->dir = h_tmpdir();
	char *wl = h_workload(workload);
	char *truth = h_path(r->dir, "truth.json");
	char *ready = h_path(r->dir, "ready");
	char seconds[16];
	snprintf(seconds, sizeof seconds, "%.1f", seconds_run);
	const char *argv[24] = {h_pytop(), "-b", "--json", "-r", "200", "-d",
	                        DELAY_S};
	size_t n = 7;
	if (idle)
		argv[n++] = "--idle";
	const char *const command[] = {"--", python, wl, "--seconds", seconds,
	                               "--truth", truth, "--ready-file", ready};
	for (size_t i = 0; i < sizeof command / sizeof command[0]; i++)
		argv[n++] = command[i];
	argv[n] = NULL;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	r->launched_s = (double)now.tv_sec + now.tv_nsec / 1e9;
	bool ok = h_run(&r->p, TIMEOUT_S, argv);
	cr_assert(ok, "%s: pytop did not finish (stderr: %s)", slot,
	          r->p.err.data ? r->p.err.data : "");
	cr_assert_eq(r->p.status, 0, "%s: pytop exited with %d: %s", slot,
	             r->p.status, r->p.err.data);
	int bad = 0;
	r->lines = h_json_lines(r->p.out.data, &bad);
	cr_assert_not_null(r->lines, "%s: line %d is not JSON:\n%s", slot, bad,
	                   r->p.out.data);
	r->truth = h_json_file(truth);
	cr_assert_not_null(r->truth, "%s: the workload wrote no truth", slot);
	cr_assert_str_eq(json_string_value(json_object_get(r->truth, "reason")),
	                 "deadline", "%s: the workload did not run to its end",
	                 slot);
	free(python), free(wl), free(truth), free(ready);
}

static void run_workload(const char *slot, bool idle)
{
	run_workload_named(slot, idle, "thread_states.py", RUN_S);
}

static json_t *truth_thread(enum role role)
{
	json_t *t = json_object_get(json_object_get(g_run.truth, "threads"),
	                            role_names[role]);
	cr_assert_not_null(t, "truth has no %s thread", role_names[role]);
	return t;
}

static json_t *thread_row(json_t *snap, int tid)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(snap, "threads"), i, t)
		if ((int)h_num(t, "tid") == tid)
			return t;
	return NULL;
}

/* When the workload had started every thread, on pytop's elapsed clock:
 * at most this (pytop's clock starts after the launch).  On a busy
 * machine that can be well over a second in. */
static double ready_at(void)
{
	double ready = h_num(g_run.truth, "ready_monotonic_s");
	cr_assert_gt(ready, g_run.launched_s, "%s: the truth's ready moment "
	             "precedes pytop's launch", g_run.slot);
	return ready - g_run.launched_s;
}

/* Steady: from when the workload's own CPU figures start (short_lived
 * has ended by then) until the exit; the workload exits with every
 * thread still in its role. */
static double steady_from(void)
{
	return ready_at() + h_num(g_run.truth, "steady_after_s");
}

static bool steady(json_t *snap, double from)
{
	return h_num(snap, "elapsed") >= from &&
	       !json_is_true(json_object_get(snap, "exited"));
}

/* Collect every role over the steady snapshots; returns how many there
 * were and the header's mean GIL-held and active shares. */
static int collect(struct seen seen[NROLES], double *gil_held, double *active)
{
	size_t i;
	json_t *snap;
	int n = 0;

	for (int r = 0; r < NROLES; r++) {
		json_t *t = truth_thread((enum role)r);
		seen[r] = (struct seen){ .tid = (int)h_num(t, "tid"),
		                         .truth_cpu = h_num(t, "steady_cpu_pct") };
	}
	*gil_held = *active = 0;
	double from = steady_from();
	json_array_foreach(g_run.lines, i, snap) {
		if (!steady(snap, from))
			continue;
		n++;
		*gil_held += h_num(snap, "gil_held_pct");
		/* Runnable: on a CPU or waiting for one (active_pct is the
		 * first part only, and this machine may be busy). */
		*active += h_num(snap, "runnable_pct");
		for (int r = 0; r < NROLES; r++) {
			json_t *t = thread_row(snap, seen[r].tid);
			cr_assert_not_null(t, "%s: no row for %s (tid %d) at %.2f s",
			                   g_run.slot, role_names[r], seen[r].tid,
			                   h_num(snap, "elapsed"));
			seen[r].states[state_index(json_string_value(
				json_object_get(t, "state")))]++;
			seen[r].cpu += h_num(t, "cpu_user") + h_num(t, "cpu_sys");
			seen[r].gil += h_num(t, "gil_pct");
			if (n == 1)
				seen[r].samples_first = h_num(t, "samples");
			seen[r].samples = h_num(t, "samples");
			seen[r].name = json_string_value(json_object_get(t, "name"));
		}
	}
	cr_assert_geq(n, MIN_STEADY, "%s: only %d snapshots from %.1f s to "
	              "the exit:\n%s", g_run.slot, n, from, g_run.p.out.data);
	*gil_held /= n;
	*active /= n;
	for (int r = 0; r < NROLES; r++) {
		seen[r].cpu /= n;
		seen[r].gil /= n;
	}
	return n;
}

static int count(const struct seen *s, const char *state)
{
	return s->states[state_index(state)];
}

/* The state the thread showed in at least half of the snapshots. */
static void expect_mostly(const struct seen *s, enum role role,
                          const char *state, int n)
{
	cr_expect_geq(2 * count(s, state), n, "%s: %s was %s in only %d of %d "
	              "steady snapshots (running_gil %d, running %d, gil_wait "
	              "%d, idle %d, gone %d)", g_run.slot, role_names[role],
	              state, count(s, state), n, count(s, "running_gil"),
	              count(s, "running"), count(s, "gil_wait"),
	              count(s, "idle"), count(s, "gone"));
}

static void expect_cpu_like_truth(const struct seen *s, enum role role)
{
	cr_expect_leq(fabs(s->cpu - s->truth_cpu), CPU_TOLERANCE_PP,
	              "%s: %s CPU %.1f%%, the thread measured %.1f%%",
	              g_run.slot, role_names[role], s->cpu, s->truth_cpu);
}

/* Off CPU.  A thread that wakes up now and then can be caught on a CPU by
 * a report, so it is idle in most snapshots; one that never wakes
 * (strict) in every one. */
static void expect_off_cpu(const struct seen *s, enum role role, int n,
                           bool strict)
{
	if (strict)
		cr_expect_eq(count(s, "idle"), n, "%s: %s idle in %d of %d "
		             "snapshots", g_run.slot, role_names[role],
		             count(s, "idle"), n);
	else
		expect_mostly(s, role, "idle", n);
	cr_expect_leq(s->cpu, IDLE_CPU_MAX, "%s: %s CPU %.1f%%", g_run.slot,
	              role_names[role], s->cpu);
	cr_expect_leq(s->gil, 5.0, "%s: %s held the GIL %.1f%% of the time",
	              g_run.slot, role_names[role], s->gil);
}

/* From 3.14 the OS thread name follows threading's name. */
static bool names_follow_threading(const char *version)
{
	int major = 0, minor = 0;
	return sscanf(version, "%d.%d", &major, &minor) == 2 &&
	       (major > 3 || (major == 3 && minor >= 14));
}

static void check_states(const char *slot)
{
	struct seen seen[NROLES];
	double gil_held, active;

	run_workload(slot, true);
	int n = collect(seen, &gil_held, &active);
	const char *sha = json_string_value(json_object_get(g_run.truth,
	                                                    "sha256"));
	h_note("threads (%s %s): %d snapshots; gil_bound %s/%d cpu %.0f%% "
	       "(own %.0f%%) gil %.0f%%; native running %d/%d cpu %.0f%% (own "
	       "%.0f%%) gil %.0f%%; sleeper %.1f%% lock_waiter %.1f%% cpu; "
	       "header GIL %.0f%% active %.0f%%; sha256 %s", slot,
	       g_run.version, n, "running_gil",
	       count(&seen[GIL_BOUND], "running_gil"), seen[GIL_BOUND].cpu,
	       seen[GIL_BOUND].truth_cpu, seen[GIL_BOUND].gil,
	       count(&seen[NATIVE], "running"), n, seen[NATIVE].cpu,
	       seen[NATIVE].truth_cpu, seen[NATIVE].gil, seen[SLEEPER].cpu,
	       seen[LOCK_WAITER].cpu, gil_held, active, sha ? sha : "?");

	/* Python code: on a CPU with the GIL, nearly always its holder. */
	expect_mostly(&seen[GIL_BOUND], GIL_BOUND, "running_gil", n);
	cr_expect_geq(seen[GIL_BOUND].gil, 70.0, "%s: gil_bound held the GIL "
	              "%.1f%% of the time", slot, seen[GIL_BOUND].gil);
	expect_cpu_like_truth(&seen[GIL_BOUND], GIL_BOUND);
	/* Native code: on a CPU without it. */
	expect_mostly(&seen[NATIVE], NATIVE, "running", n);
	cr_expect_leq(seen[NATIVE].gil, 20.0, "%s: native held the GIL "
	              "%.1f%% of the time", slot, seen[NATIVE].gil);
	expect_cpu_like_truth(&seen[NATIVE], NATIVE);
	/* Off CPU, and not asking for the GIL. */
	expect_off_cpu(&seen[SLEEPER], SLEEPER, n, false);
	expect_off_cpu(&seen[LOCK_WAITER], LOCK_WAITER, n, true);
	expect_off_cpu(&seen[MAIN], MAIN, n, false);
	/* Ended long before: listed as gone, with what it was sampled. */
	cr_expect_eq(count(&seen[SHORT_LIVED], "gone"), n,
	             "%s: short_lived gone in %d of %d snapshots", slot,
	             count(&seen[SHORT_LIVED], "gone"), n);
	cr_expect_gt(seen[SHORT_LIVED].samples, 0, "%s: short_lived has no "
	             "samples", slot);
	/* Someone holds the GIL nearly always; a thread is always on a CPU
	 * (or runnable). */
	cr_expect_geq(gil_held, 70.0, "%s: header GIL %.1f%%", slot, gil_held);
	cr_expect_geq(active, 90.0, "%s: header runnable %.1f%%", slot, active);

	for (int r = 0; r < NROLES; r++) {
		cr_expect(seen[r].name && seen[r].name[0] != '\0',
		          "%s: %s has no OS name", slot, role_names[r]);
		/* The sampler reads a thread's name once, when it first sees
		 * it, which can be before the thread names itself: report a
		 * stale name, do not fail on it. */
		if (r != MAIN && names_follow_threading(g_run.version) &&
		    seen[r].name && strcmp(seen[r].name, role_names[r]) != 0)
			h_note("threads (%s): %s shows OS name \"%s\" (read "
			       "before the thread named itself)", slot,
			       role_names[r], seen[r].name);
	}
}

TestSuite(threads, .fini = run_teardown);

#define ON(slot)                                                           \
	Test(threads, states_##slot, .timeout = TIMEOUT_S + 10)            \
	{                                                                  \
		check_states(#slot);                                       \
	}

ON(py311_debian)
ON(py311_pyenv)
ON(py312_pyenv)
ON(py313_pyenv)
ON(py313_sid)
ON(py314_sid)
ON(py315_sid)

/* ---- waiting for the GIL, on every version ------------------------------ */

/* tests/workloads/gil_wait.py: gil_hog keeps the GIL in long sorts, so
 * gil_waiter, a Python loop, sleeps on the GIL nearly all the time;
 * lock_waiter sleeps on a futex that is not the GIL's.  pytop finds a GIL
 * wait by the futex the thread sleeps on (3.15 also flags it itself). */
#define GIL_RUN_S 2.5
#define GIL_WAITER_CPU_MAX 50.0 /* the workload's premise: it waited */

static int gil_role_tid(const char *role)
{
	json_t *t = json_object_get(json_object_get(g_run.truth, "threads"), role);
	cr_assert_not_null(t, "truth has no %s thread", role);
	return (int)h_num(t, "tid");
}

static void check_gil_wait(const char *slot)
{
	const char *roles[] = { "gil_hog", "gil_waiter", "lock_waiter" };
	const char *want[] = { "running_gil", "gil_wait", "idle" };
	int tids[3], got[3] = { 0 }, n = 0;
	size_t i;
	json_t *snap;

	run_workload_named(slot, true, "gil_wait.py", GIL_RUN_S);
	double waiter_cpu = h_num(json_object_get(json_object_get(g_run.truth,
	                          "threads"), "gil_waiter"), "steady_cpu_pct");
	cr_assert_lt(waiter_cpu, GIL_WAITER_CPU_MAX, "%s: gil_waiter ran %.1f%% of "
	             "a CPU: it hardly waited, the workload's premise failed",
	             slot, waiter_cpu);
	for (int r = 0; r < 3; r++)
		tids[r] = gil_role_tid(roles[r]);
	/* Steady: from when the workload's own CPU figures start to its
	 * exit (it leaves every thread in its role until then). */
	double from = steady_from();
	json_array_foreach(g_run.lines, i, snap) {
		double at = h_num(snap, "elapsed");
		if (at < from || json_is_true(json_object_get(snap, "exited")))
			continue;
		n++;
		for (int r = 0; r < 3; r++) {
			json_t *t = thread_row(snap, tids[r]);
			cr_assert_not_null(t, "%s: no row for %s at %.2f s (steady "
			                   "from %.2f s)", slot, roles[r], at, from);
			got[r] += strcmp(json_string_value(json_object_get(t, "state")),
			                 want[r]) == 0;
		}
	}
	h_note("gil wait (%s %s): %d snapshots; gil_hog running_gil %d, "
	       "gil_waiter gil_wait %d (it ran %.1f%% of a CPU), lock_waiter "
	       "idle %d", slot, g_run.version, n, got[0], got[1], waiter_cpu,
	       got[2]);
	cr_assert_geq(n, 4, "%s: only %d steady snapshots", slot, n);
	cr_expect_geq(2 * got[0], n, "%s: gil_hog running_gil in %d of %d", slot,
	              got[0], n);
	cr_expect_geq(2 * got[1], n, "%s: gil_waiter gil_wait in %d of %d", slot,
	              got[1], n);
	/* A futex that is not the GIL's is no GIL wait. */
	cr_expect_eq(got[2], n, "%s: lock_waiter idle in %d of %d", slot, got[2], n);
}

/* Where the GIL lives changed in 3.12, 3.13 and 3.14; 3.15 says itself. */
#define GIL_ON(slot)                                                       \
	Test(threads, gil_wait_##slot, .timeout = TIMEOUT_S + 10)          \
	{                                                                  \
		check_gil_wait(#slot);                                     \
	}

GIL_ON(py311_debian)
GIL_ON(py312_pyenv)
GIL_ON(py313_sid)
GIL_ON(py314_sid)
GIL_ON(py315_sid)

/* Without --idle, off-CPU threads are never sampled, but every thread the
 * interpreter has is still listed, with its state. */
Test(threads, idle_threads_listed_without_idle_mode, .timeout = TIMEOUT_S)
{
	struct seen seen[NROLES];
	double gil_held, active;

	run_workload("py311_debian", false);
	int n = collect(seen, &gil_held, &active);
	expect_off_cpu(&seen[SLEEPER], SLEEPER, n, false);
	expect_off_cpu(&seen[LOCK_WAITER], LOCK_WAITER, n, true);
	/* Sampled at most while it started, before it blocked. */
	cr_expect_eq(seen[LOCK_WAITER].samples, seen[LOCK_WAITER].samples_first,
	             "the blocked lock waiter was sampled without --idle "
	             "(%.0f then %.0f samples)", seen[LOCK_WAITER].samples_first,
	             seen[LOCK_WAITER].samples);
	expect_mostly(&seen[GIL_BOUND], GIL_BOUND, "running_gil", n);
	expect_mostly(&seen[NATIVE], NATIVE, "running", n);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
