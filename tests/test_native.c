/* test_native.c - pytop --native end to end: native frames merged under
 * the right Python line with the share the workload measured itself (by
 * the ptrace path, --native-ptrace: test_native_perf_accuracy runs the
 * same check by perf events, --native's default, so both methods are
 * held to it), a C program's functions with file:line, the target left
 * running when pytop is killed, and 32 busy threads within the stated
 * slowdown. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "native_target_path.h"
#include "native_mix.h"

#define TIMEOUT_S NATIVE_MIX_TIMEOUT_S
#define SHARE_PP 5.0      /* issue 4: within 5 percentage points */
#define MAX_SLOWDOWN 2.0  /* issue 4: 32 threads at 100 Hz */

static double pct(json_t *snap, json_t *row, const char *key)
{
	double samples = h_num(snap, "samples");

	return samples > 0 ? 100.0 * h_num(row, key) / samples : 0;
}

/* The native row with the largest total whose module contains `module` or
 * whose name contains `name` (either may be NULL). */
static json_t *top_native(json_t *snap, const char *module, const char *name)
{
	json_t *best = NULL, *f;
	size_t i;

	json_array_foreach(json_object_get(snap, "functions"), i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));
		const char *mod = json_string_value(json_object_get(f, "module"));
		const char *fn = json_string_value(json_object_get(f, "name"));

		if (kind == NULL || strcmp(kind, "native") != 0)
			continue;
		if (!((module && mod && strstr(mod, module)) || (name && fn && strcasestr(fn, name))))
			continue;
		if (best == NULL || h_num(f, "total") > h_num(best, "total"))
			best = f;
	}
	return best;
}

/* ---- zlib and SHA-256 under their Python lines ------------------------- */

static void mix(const char *slot)
{
	struct native_mix m;
	json_t *snap, *truth;

	/* 500 Hz: ~1200 samples, so that a 70 % share has a standard error
	 * of 1.3 points and SHARE_PP is ~4 of them (at 200 Hz, 2 points: a
	 * false failure in about 1 % of checks from chance alone). */
	native_mix_run(&m, slot, "--native-ptrace", "500");
	snap = m.snap;
	truth = m.truth;
	cr_assert_str_eq(json_string_value(json_object_get(snap, "native_method")), "ptrace",
	                 "%s: pytop --native-ptrace did not use ptrace", slot);

	/* Shares of the measured parts of the loop (the two calls and the
	 * pure-Python loop) on both sides: their CPU time in the truth, their
	 * lines' samples in pytop's figures.  CPU time: a busy machine's
	 * waits for a CPU are no call's time.  The workload's clock reads
	 * between the parts are left out on both sides: they are system
	 * calls, and on a busy machine pytop, which counts a thread waiting
	 * for a CPU as running, finds many more samples on them than their
	 * CPU time (see native_mix.py). */
	json_t *calls = json_object_get(truth, "calls");
	struct { const char *call, *module, *name; } want[] = {
		{ "zlib", "libz", "deflate" },
		{ "sha256", "crypto", "sha256" },
	};
	double measured, samples = native_mix_measured(snap, truth, &measured);
	h_note("%s: %.0f samples, %.0f on the measured lines; truth %.2f s of CPU in the loop, "
	       "%.2f s in its measured parts", slot, h_num(snap, "samples"), samples,
	       h_num(truth, "loop_cpu"), measured);
	cr_assert_gt(measured, 0, "%s: the truth measured nothing", slot);
	cr_assert_gt(samples, 200, "%s: too few samples", slot);
	for (size_t i = 0; i < 2; i++) {
		json_t *c = json_object_get(calls, want[i].call);
		double share = 100.0 * h_num(c, "seconds") / measured;
		json_t *nat = top_native(snap, want[i].module, want[i].name);
		json_t *line = h_line_row(snap, "native_mix.py", (int)h_num(c, "line"));

		cr_assert_not_null(nat, "%s: no native %s frames", slot, want[i].call);
		cr_assert_not_null(line, "%s: no row for the %s line", slot, want[i].call);
		struct native_callees under = native_callees_of(line, want[i].module);
		double line_pct = 100.0 * h_num(line, "total") / samples;
		double native_pct = 100.0 * under.all / samples;
		double lib_pct = 100.0 * under.in_module / samples;
		h_note("%s: %s truth %.1f%% (CPU); caller line %.1f%%, native code under it "
		       "%.1f%% (%s %.1f%%, elsewhere %.1f%%); hottest in %s: %s %.1f%% total",
		       slot, want[i].call, share, line_pct, native_pct,
		       want[i].module, lib_pct, native_pct - lib_pct, want[i].module,
		       json_string_value(json_object_get(nat, "name")),
		       100.0 * h_num(nat, "total") / samples);
		/* The workload's clock runs around the line: the line's total
		 * and the native code under it are what it measured.  Not the
		 * library's functions alone: the call's allocations, clears and
		 * their page faults are the C library's and the kernel's (a third
		 * of the zlib call where faults are slow), and pytop rightly
		 * shows them outside libz. */
		cr_expect(fabs(line_pct - share) <= SHARE_PP,
		          "%s: %s line %.1f%%, truth %.1f%%", slot, want[i].call,
		          line_pct, share);
		cr_expect(fabs(native_pct - share) <= SHARE_PP,
		          "%s: %s line's native callees %.1f%%, truth %.1f%%", slot,
		          want[i].call, native_pct, share);
		/* Under the right line: the library's functions on top of the
		 * line's native callees. */
		cr_expect(under.top_module != NULL &&
		                  strstr(under.top_module, want[i].module) != NULL,
		          "%s: %s line's hottest callee is in %s", slot, want[i].call,
		          under.top_module ? under.top_module : "nothing");
	}
	native_mix_free(&m);
}

Test(native, mix_py311_debian, .timeout = TIMEOUT_S) { mix("py311_debian"); }
Test(native, mix_py311_pyenv, .timeout = TIMEOUT_S) { mix("py311_pyenv"); }
Test(native, mix_py312_pyenv, .timeout = TIMEOUT_S) { mix("py312_pyenv"); }

/* ---- a C program ------------------------------------------------------- */

Test(native, c_program, .timeout = TIMEOUT_S)
{
	char *target = native_target_path(), *dir = h_tmpdir(), *truth_path = h_path(dir, "truth");
	const char *argv[] = { target, "4", truth_path, NULL };
	struct h_proc w;
	json_t *lines, *snap;
	char name[2][16];
	double secs[2], wall;
	int line[2];

	cr_assert(h_proc_start(&w, argv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 10));
	snap = native_profile(w.pid, "--native", "2.5", "500", &lines);
	cr_assert(h_proc_finish(&w, 10));
	char *truth = h_read_file(truth_path);
	cr_assert_not_null(truth);
	cr_assert_eq(sscanf(truth, "%15s %lf %d %15s %lf %d wall %lf", name[0], &secs[0], &line[0],
	                    name[1], &secs[1], &line[1], &wall), 7, "bad truth: %s", truth);
	for (int i = 0; i < 2; i++) {
		json_t *f = h_func(snap, name[i]);
		const char *file;

		cr_assert_not_null(f, "%s not among the functions", name[i]);
		file = json_string_value(json_object_get(f, "file"));
		cr_expect_str_eq(json_string_value(json_object_get(f, "kind")), "native");
		cr_expect(file && strstr(file, "native_target.c"), "%s: file %s", name[i], file);
		cr_expect_gt(h_num(f, "line"), 0, "%s has no line", name[i]);
		/* total: the clock reads inside each budget are its callees. */
		h_note("c_program: %s truth %.1f%%, total %.1f%%; loop line %d: %.1f%%", name[i],
		       100 * secs[i] / wall, pct(snap, f, "total"), line[i],
		       h_line_row(snap, "native_target.c", line[i])
		               ? pct(snap, h_line_row(snap, "native_target.c", line[i]), "own") : 0);
		cr_expect(fabs(pct(snap, f, "total") - 100 * secs[i] / wall) <= SHARE_PP,
		          "%s total %.1f%%, truth %.1f%%", name[i], pct(snap, f, "total"),
		          100 * secs[i] / wall);
		cr_expect_not_null(h_line_row(snap, "native_target.c", line[i]),
		                   "no line row for %s's loop (line %d)", name[i], line[i]);
	}
	json_decref(lines);
	free(truth);
	h_proc_free(&w);
	h_rmtree(dir);
	free(target), free(dir), free(truth_path);
}

/* ---- killing pytop leaves the target running --------------------------- */

static void kill_pytop(int sig)
{
	char *python = h_need_python_slot("py311_debian"), *dir = h_tmpdir();
	char *wl = h_workload("native_mix.py"), *truth_path = h_path(dir, "truth.json");
	char pidarg[16];
	struct h_proc w, p;
	const char *wargv[] = { python, wl, "--seconds", "3", "--truth", truth_path, NULL };

	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 15));
	snprintf(pidarg, sizeof pidarg, "%d", (int)w.pid);
	/* The highest rate: pytop is most likely caught mid-unwind. */
	const char *argv[] = { h_pytop(), "--native", "-b", "-r", "10000", "-d", "0.2",
	                       "-p", pidarg, NULL };
	cr_assert(h_proc_start(&p, argv));
	h_sleep(1.0);
	h_proc_signal(&p, sig);
	h_proc_finish(&p, 5);
	cr_assert(p.exited, "pytop did not die of signal %d", sig);
	/* The kernel detached the dead tracer's tracee; nothing must stay
	 * stopped or traced, now or a little later. */
	for (int i = 0; i < 20; i++) {
		char st = h_proc_state(w.pid);

		cr_assert(st != 't' && st != 'T', "target left stopped (state %c)", st);
		cr_assert_eq(h_tracer_pid(w.pid), 0, "target still traced");
		h_sleep(0.025);
	}
	cr_assert(h_proc_finish(&w, 10), "the target did not finish");
	cr_assert_eq(w.status, 0, "the target exited with %d", w.status);
	json_t *truth = h_json_file(truth_path);
	cr_assert_not_null(truth);
	cr_assert_str_eq(json_string_value(json_object_get(truth, "reason")), "deadline");
	json_decref(truth);
	h_proc_free(&p);
	h_proc_free(&w);
	h_rmtree(dir);
	free(python), free(dir), free(wl), free(truth_path);
}

Test(native, sigkill_leaves_target_running, .timeout = TIMEOUT_S) { kill_pytop(SIGKILL); }
Test(native, sigterm_leaves_target_running, .timeout = TIMEOUT_S) { kill_pytop(SIGTERM); }

/* ---- 32 busy threads --------------------------------------------------- */

static double threads_wall(const char *python, bool profiled, const char *dir)
{
	char *wl = h_workload("native_threads.py"), *truth_path = h_path(dir, "t.json");
	struct h_proc p;
	const char *argv[16] = { h_pytop(), "--native", "-b", "-r", "100", "-d", "5", "--" };
	size_t n = profiled ? 8 : 0;
	const char *cmd[] = { python, wl, "--threads", "32", "--truth", truth_path, NULL };

	memcpy(argv + n, cmd, sizeof cmd);
	cr_assert(h_run(&p, TIMEOUT_S, argv), "the 32-thread run did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d: %s", p.status, p.err.data);
	json_t *truth = h_json_file(truth_path);
	cr_assert_not_null(truth);
	double wall = h_num(truth, "work_wall");
	json_decref(truth);
	h_proc_free(&p);
	free(wl), free(truth_path);
	return wall;
}

/* Wall times on a shared machine swing with whatever else runs (a
 * package install beside the sanitizer run once made one profiled run
 * x2.24): each side is the best of two runs, taken alternately, so a
 * burst of other work slows at most one of each. */
Test(native, threads32_slowdown, .timeout = 2 * TIMEOUT_S)
{
	char *python = h_need_python_slot("py311_debian"), *dir = h_tmpdir();
	double base = threads_wall(python, false, dir);
	double prof = threads_wall(python, true, dir);

	base = fmin(base, threads_wall(python, false, dir));
	prof = fmin(prof, threads_wall(python, true, dir));

	h_note("threads32: best of two %.2f s alone, %.2f s under --native -r 100: x%.2f", base, prof,
	       prof / base);
	cr_expect_leq(prof / base, MAX_SLOWDOWN, "slowdown x%.2f (%.2f s -> %.2f s)",
	              prof / base, base, prof);
	h_rmtree(dir);
	free(python), free(dir);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
