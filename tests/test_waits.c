/* test_waits.c - the kinds of time that are not running code, end to end
 * on real interpreters (pytop -b --json launching a workload that
 * measures its own threads' schedstat, the same figures pytop reads):
 *
 *  - GIL contention (workloads/gil_contention.py, two pure-Python
 *    threads): neither thread runs native code, so %Nat stays near 0;
 *    their run-queue time is CPU wait within ACCURACY_PP of what they
 *    measured; with --idle, the time they spent asleep is GIL wait.
 *  - CPU starvation (workloads/starved.py pinned to one CPU beside a
 *    CPU-bound competitor the test pins there too): CPU wait within
 *    ACCURACY_PP of the thread's run-queue share, "active" (on a CPU)
 *    within ACTIVE_PP of its CPU share, and the verdict says starved.
 *  - CPU quota (the same workload in a cgroup allowed 5% of a CPU): CPU
 *    wait likewise, and the verdict says throttled.
 *  - A thread-per-request server (workloads/thread_per_request.py,
 *    handlers that live a few ms), with and without --native: on every
 *    function and line row of every snapshot the kinds add up to %Own.
 *
 * Figures go to the test log as "# waits ..." lines.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define ACCURACY_PP 3.0   /* issue 11: within 3 points of the truth */
#define ACTIVE_PP 5.0     /* header's active %, a per-window figure */
/* The header's active share of a window covers the run time and delay
 * grown since the start of the window SCHED_HORIZON (4) before it: five
 * windows (src/session.c, fill_active). */
#define ACTIVE_SPAN_WINDOWS 5
#define NATIVE_MAX_PCT 3.0
#define ROUNDING 0.35     /* six kinds, each rounded to 0.1 in JSON */
#define TIMEOUT_S 40.0

static const char *const kinds[] = {
	"python", "native", "system", "cpu_wait", "gil_wait", "waiting", NULL,
};

/* One finished run; owns everything. */
struct run {
	char *dir;
	struct h_proc p;
	json_t *lines, *truth;
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

/* pytop -b --json [extra...] -- python workload --seconds S --truth T
 * [wargs...]; extra and wargs end with NULL. */
static void run_workload(const char *slot, const char *workload,
                         const char *seconds, const char *const *extra,
                         const char *const *wargs)
{
	struct run *r = &g_run;
	char *python = h_need_python_slot(slot);
	char *wl = h_workload(workload);
	r->dir = h_tmpdir();
	char *truth = h_path(r->dir, "truth.json");
	const char *argv[32] = {h_pytop(), "-b", "--json", "-d", "0.5"};
	size_t n = 5;
	for (size_t i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	const char *const command[] = {"--", python, wl, "--seconds", seconds,
	                               "--truth", truth, NULL};
	for (size_t i = 0; command[i]; i++)
		argv[n++] = command[i];
	for (size_t i = 0; wargs && wargs[i]; i++)
		argv[n++] = wargs[i];
	argv[n] = NULL;
	cr_assert(h_run(&r->p, TIMEOUT_S, argv), "%s: pytop did not finish: %s",
	          slot, r->p.err.data ? r->p.err.data : "");
	cr_assert_eq(r->p.status, 0, "%s: pytop exited with %d: %s", slot,
	             r->p.status, r->p.err.data ? r->p.err.data : "");
	int bad = 0;
	r->lines = h_json_lines(r->p.out.data, &bad);
	cr_assert_not_null(r->lines, "%s: line %d is not JSON", slot, bad);
	cr_assert_gt(json_array_size(r->lines), 0, "%s: no snapshot", slot);
	r->truth = h_json_file(truth);
	cr_assert_not_null(r->truth, "%s: the workload wrote no truth", slot);
	cr_assert_str_eq(json_string_value(json_object_get(r->truth, "reason")),
	                 "deadline", "%s: the workload did not run to its end",
	                 slot);
	free(python), free(wl), free(truth);
}

static json_t *last_snapshot(void)
{
	return json_array_get(g_run.lines, json_array_size(g_run.lines) - 1);
}

/* A function's kind as % of its own samples. */
static double kind_pct(json_t *row, const char *kind)
{
	double own = h_num(row, "own");
	cr_assert_not_null(json_object_get(row, kind), "no \"%s\" in the row",
	                   kind);
	return own > 0 ? 100.0 * h_num(row, kind) / own : 0;
}

static json_t *func_row(json_t *snap, const char *name)
{
	json_t *f = h_func(snap, name);
	cr_assert_not_null(f, "no function %s in the last snapshot", name);
	cr_assert_gt(h_num(f, "own"), 100, "%s: too few samples", name);
	return f;
}

/* ---- GIL contention ---------------------------------------------------- */

/* By default pytop samples runnable threads: their run-queue share is
 * delay / (cpu + delay) of what each thread measured.  With --idle every
 * sample counts, and the time a thread slept (on the GIL: it calls
 * nothing else) is GIL wait. */
static void gil_contention(const char *slot)
{
	static const char *const plain[] = {"-r", "500", NULL};
	static const char *const idle[] = {"--idle", "-r", "500", NULL};
	static const char *const names[] = {"count_a", "count_b"};
	for (int with_idle = 0; with_idle <= 1; with_idle++) {
		run_workload(slot, "gil_contention.py", "2",
		             with_idle ? idle : plain, NULL);
		json_t *snap = last_snapshot();
		for (size_t i = 0; i < 2; i++) {
			json_t *f = func_row(snap, names[i]);
			json_t *t = json_object_get(json_object_get(g_run.truth,
			                                            "threads"),
			                            names[i]);
			cr_assert_not_null(t, "truth has no %s", names[i]);
			double wall = h_num(t, "wall"), cpu = h_num(t, "cpu");
			double delay = h_num(t, "run_delay");
			double queued = 100.0 * delay / (cpu + delay);
			double asleep = 100.0 - 100.0 * (cpu + delay) / wall;
			double nat = kind_pct(f, "native");
			double cpuw = kind_pct(f, "cpu_wait");
			double gilw = kind_pct(f, "gil_wait");
			h_note("waits gil_contention (%s%s) %s: native %.1f%%, "
			       "CPU wait %.1f%% (truth %.1f%% of runnable, %.1f%% "
			       "of life), GIL wait %.1f%% (asleep %.1f%%), python "
			       "%.1f%%", slot, with_idle ? ", --idle" : "",
			       names[i], nat, cpuw, queued, 100.0 * delay / wall,
			       gilw, asleep, kind_pct(f, "python"));
			cr_expect_leq(nat, NATIVE_MAX_PCT,
			              "%s: %s runs no native code, %%Nat %.1f",
			              slot, names[i], nat);
			if (!with_idle)
				cr_expect_leq(fabs(cpuw - queued), ACCURACY_PP,
				              "%s: %s CPU wait %.1f%%, its run-queue "
				              "share %.1f%%", slot, names[i], cpuw,
				              queued);
			else
				cr_expect_geq(gilw, asleep - ACCURACY_PP,
				              "%s: %s GIL wait %.1f%%, asleep %.1f%% "
				              "of its life", slot, names[i], gilw,
				              asleep);
		}
		run_teardown();
	}
}

/* ---- CPU starvation ---------------------------------------------------- */

/* A CPU-bound competitor pinned to the first CPU this test may use. */
static int start_competitor(struct h_proc *hog, const char *slot)
{
	cpu_set_t set;
	int cpu = 0;
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
		cpu++;
	char *python = h_need_python_slot(slot);
	char code[128];
	snprintf(code, sizeof code,
	         "import os\nos.sched_setaffinity(0, {%d})\nwhile True: pass\n", cpu);
	const char *const argv[] = {python, "-c", code, NULL};
	cr_assert(h_proc_start(hog, argv), "competitor did not start");
	free(python);
	return cpu;
}

/* The thread's CPU time at monotonic time t, from the workload's marks
 * (linear between two marks, held outside them). */
static double cpu_at(json_t *marks, double t)
{
	size_t n = json_array_size(marks), i;
	cr_assert_geq(n, 2, "the truth has too few marks");
	for (i = 1; i + 1 < n; i++)
		if (json_number_value(json_array_get(json_array_get(marks, i), 0)) >= t)
			break;
	json_t *a = json_array_get(marks, i - 1), *b = json_array_get(marks, i);
	double ta = json_number_value(json_array_get(a, 0));
	double tb = json_number_value(json_array_get(b, 0));
	double ca = json_number_value(json_array_get(a, 1));
	double cb = json_number_value(json_array_get(b, 1));
	if (t <= ta)
		return ca;
	if (t >= tb)
		return cb;
	return ca + (cb - ca) * (t - ta) / (tb - ta);
}

/* The truth of snapshot i's active share: spin's time on a CPU over the
 * wall time of the windows that figure covers, as both clocks say (the
 * snapshots' "time_us" and the marks are Unix time). */
static double truth_active_at(size_t i, json_t *marks)
{
	double t1 = h_num(json_array_get(g_run.lines, i), "time_us") / 1e6;
	double t0 = h_num(json_array_get(g_run.lines, i - ACTIVE_SPAN_WINDOWS), "time_us") / 1e6;
	return 100.0 * (cpu_at(marks, t1) - cpu_at(marks, t0)) / (t1 - t0);
}

static void starvation(const char *slot)
{
	struct h_proc hog;
	int cpu = start_competitor(&hog, slot);
	char cpu_arg[16];
	snprintf(cpu_arg, sizeof cpu_arg, "%d", cpu);
	const char *const wargs[] = {"--cpu", cpu_arg, NULL};
	/* Short windows: five of them, what one active figure covers, fit
	 * in spin's seconds several times over. */
	static const char *const extra[] = {"-d", "0.25", NULL};
	h_sleep(0.2); /* the competitor is on its CPU first */
	run_workload(slot, "starved.py", "3", extra, wargs);
	h_proc_free(&hog);

	json_t *t = json_object_get(g_run.truth, "spin");
	double wall = h_num(t, "wall"), cpu_s = h_num(t, "cpu");
	double delay = h_num(t, "run_delay");
	double truth_wait = 100.0 * delay / (cpu_s + delay);
	json_t *f = func_row(last_snapshot(), "spin");
	double cpuw = kind_pct(f, "cpu_wait"), nat = kind_pct(f, "native");

	/* The header's figures, over the windows whose figures cover spin
	 * only: the interpreter's start-up, before the workload pinned
	 * itself, ran on a CPU of its own (3.14 from Debian sid starts
	 * slowly: a second of it reached into the windows once). */
	size_t n = json_array_size(g_run.lines), windows = 0, starved = 0;
	double active = 0, truth_active = 0, runnable = 0;
	json_t *marks = json_object_get(t, "marks");
	double spin_from = json_number_value(json_array_get(json_array_get(marks, 0), 0));
	double spin_to = json_number_value(json_array_get(
	        json_array_get(marks, json_array_size(marks) - 1), 0));
	for (size_t i = ACTIVE_SPAN_WINDOWS; i < n; i++) {
		json_t *s = json_array_get(g_run.lines, i);
		json_t *first = json_array_get(g_run.lines, i - ACTIVE_SPAN_WINDOWS);
		if (h_num(first, "time_us") / 1e6 < spin_from ||
		    h_num(s, "time_us") / 1e6 > spin_to)
			continue;
		const char *v = json_string_value(json_object_get(
		        json_object_get(s, "gauges"), "verdict"));
		windows++;
		active += h_num(s, "active_pct");
		runnable += h_num(s, "runnable_pct");
		truth_active += truth_active_at(i, marks);
		starved += v != NULL && strcmp(v, "starved") == 0;
	}
	cr_assert_geq(windows, 3, "%s: too few snapshots", slot);
	active /= (double)windows;
	truth_active /= (double)windows;
	runnable /= (double)windows;
	h_note("waits starvation (%s): spin CPU wait %.1f%% of its samples "
	       "(truth %.1f%% of its runnable time), native %.1f%%; active "
	       "%.1f%% of ticks runnable %.1f%% (truth %.1f%% on a CPU over the same "
	       "windows, %.1f%% over all of spin); starved in %zu of %zu windows",
	       slot, cpuw, truth_wait, nat, active, runnable, truth_active,
	       100.0 * cpu_s / wall, starved, windows);
	cr_expect_leq(fabs(cpuw - truth_wait), ACCURACY_PP,
	              "%s: CPU wait %.1f%%, run-queue share %.1f%%", slot, cpuw,
	              truth_wait);
	cr_expect_leq(nat, NATIVE_MAX_PCT, "%s: %%Nat %.1f", slot, nat);
	cr_expect_leq(fabs(active - truth_active), ACTIVE_PP,
	              "%s: active %.1f%%, on a CPU %.1f%%", slot, active,
	              truth_active);
	/* The competitor takes about half the CPU or more: starved. */
	if (truth_wait >= 60)
		cr_expect_geq(2 * starved, windows,
		              "%s: starved in %zu of %zu windows", slot, starved,
		              windows);
}

/* ---- CPU quota -------------------------------------------------------- */

#define QUOTA_US "5000" /* of a 100 ms period: 5% of a CPU */

/* A cgroup with a CPU quota (v2 cpu.max, else v1's cpu controller), or
 * skips the test saying why it cannot make one. */
static void quota_cgroup(char *dir, size_t size)
{
	char path[PATH_MAX + 32];
	FILE *f;
	bool v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0;

	if (geteuid() != 0)
		cr_skip_test("creating a cgroup needs root");
	snprintf(dir, size, v2 ? "/sys/fs/cgroup/pytop-waits-%d"
	                       : "/sys/fs/cgroup/cpu/pytop-waits-%d", (int)getpid());
	if (v2 && (f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "w")) != NULL) {
		fputs("+cpu", f);
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/%s", dir, v2 ? "cpu.max" : "cpu.cfs_quota_us");
	if (mkdir(dir, 0755) != 0 || (f = fopen(path, "w")) == NULL)
		cr_skip_test("cannot make a cgroup with a CPU quota in %s", dir);
	fputs(v2 ? QUOTA_US " 100000" : QUOTA_US, f);
	if (fclose(f) != 0)
		cr_skip_test("cannot set a CPU quota in %s", dir);
}

static void quota(const char *slot)
{
	char dir[PATH_MAX];
	quota_cgroup(dir, sizeof dir);
	const char *const wargs[] = {"--cgroup", dir, NULL};
	run_workload(slot, "starved.py", "3", NULL, wargs);
	for (int i = 0; i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++)
		h_sleep(0.02);

	json_t *t = json_object_get(g_run.truth, "spin");
	double cpu_s = h_num(t, "cpu"), delay = h_num(t, "run_delay");
	double truth_wait = 100.0 * delay / (cpu_s + delay);
	double cpuw = kind_pct(func_row(last_snapshot(), "spin"), "cpu_wait");
	size_t n = json_array_size(g_run.lines), windows = 0, throttled = 0;
	for (size_t i = 1; i + 1 < n; i++) {
		const char *v = json_string_value(json_object_get(json_object_get(
		        json_array_get(g_run.lines, i), "gauges"), "verdict"));
		windows++;
		throttled += v != NULL && strcmp(v, "throttled") == 0;
	}
	h_note("waits quota (%s): spin CPU wait %.1f%% (truth %.1f%% of its "
	       "runnable time); throttled in %zu of %zu windows", slot, cpuw,
	       truth_wait, throttled, windows);
	cr_expect_leq(fabs(cpuw - truth_wait), ACCURACY_PP,
	              "%s: CPU wait %.1f%%, run-queue share %.1f%%", slot, cpuw,
	              truth_wait);
	cr_expect_geq(2 * throttled, windows, "%s: throttled in %zu of %zu windows",
	              slot, throttled, windows);
}

/* ---- the split adds up -------------------------------------------------- */

static void rows_add_up(json_t *snap, const char *table, size_t snap_i,
                        const char *slot)
{
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(snap, table), i, row) {
		double sum = 0;
		for (size_t k = 0; kinds[k]; k++) {
			cr_assert_not_null(json_object_get(row, kinds[k]),
			                   "%s: no \"%s\" in %s", slot, kinds[k], table);
			sum += h_num(row, kinds[k]);
		}
		cr_assert_leq(fabs(sum - h_num(row, "own")), ROUNDING,
		              "%s: snapshot %zu, %s %s:%d: kinds add up to %.1f, "
		              "own %.0f", slot, snap_i, table,
		              json_string_value(json_object_get(row, "name")),
		              (int)h_num(row, "line"), sum, h_num(row, "own"));
	}
}

static void split_adds_up(const char *slot, bool native)
{
	static const char *const plain[] = {"-r", "1000", "-d", "0.25", NULL};
	static const char *const nat[] = {"--native", "-r", "200", "-d", "0.25",
	                                  NULL};
	run_workload(slot, "thread_per_request.py", "2", native ? nat : plain,
	             NULL);
	size_t i;
	json_t *snap;
	json_array_foreach(g_run.lines, i, snap) {
		rows_add_up(snap, "functions", i, slot);
		rows_add_up(snap, "lines", i, slot);
	}
	h_note("waits thread_per_request (%s%s): %.0f requests, %zu snapshots "
	       "add up", slot, native ? ", --native" : "",
	       h_num(g_run.truth, "requests"), json_array_size(g_run.lines));
	cr_assert_gt(h_num(h_func(last_snapshot(), "handle"), "total"), 0,
	             "%s: the handlers were sampled", slot);
}

static void split_adds_up_python(const char *slot)
{
	split_adds_up(slot, false);
}

static void split_adds_up_native(const char *slot)
{
	split_adds_up(slot, true);
}

#define ON(check, slot)                                                     \
	Test(waits, check##_##slot, .fini = run_teardown, .timeout = 60)      \
	{                                                                     \
		check(#slot);                                                 \
	}

ON(gil_contention, py311_debian)
ON(gil_contention, py315_sid)
ON(starvation, py311_debian)
ON(starvation, py314_sid)
ON(quota, py311_debian)
ON(split_adds_up_python, py311_debian)
ON(split_adds_up_python, py315_sid)
ON(split_adds_up_native, py311_debian)

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
