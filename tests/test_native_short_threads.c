/* test_native_short_threads.c - --native (by perf events, its default) on
 * a thread per request: threads that start after pytop attached and run
 * well under a millisecond of CPU each have their native stacks (issue 14
 * item 4: events opened per thread once pytop had listed it, as before,
 * never sampled such a thread, so --native stayed on ptrace).
 *
 * - handlers_*: tests/workloads/request_threads.py (a new thread per
 *   request: a pure-Python parse, then zlib.compress; each part's CPU time
 *   measured by the handler itself), pytop --native attached at 1 kHz:
 *   - it used perf events (its JSON says which method);
 *   - the handlers' lines have samples: at least MIN_OF_CPU of what their
 *     CPU time in the attached part of the run gives at that rate;
 *   - the zlib line's share of them within SHARE_PP of the zlib call's
 *     share of the handlers' CPU time (the truth) as perf events can see
 *     it: a thread's events start a whole sample period (PERF_SAMPLE_NS)
 *     of CPU when it starts, and no tick has a native stack to pair
 *     before its first sample, so the first PERF_SAMPLE_NS of each
 *     handler's CPU time (its start-up, which the workload measures, and
 *     the beginning of its parse) is never sampled: 2-3 points of the
 *     zlib share here;
 *   - the zlib line's samples have native code under them (libz's, and
 *     the C library's that the call asks for: its deflate state's
 *     allocation and clearing), and the hottest of it in libz: a native
 *     stack lags its Python one by half a perf sample period
 *     (PERF_SAMPLE_NS) of CPU on average, so the share of that line's
 *     samples without native code under them is expected to be at most
 *     that half over a call's CPU time, and may be two standard errors
 *     above it (as test_native_perf_accuracy's zlib edge).
 * The requests differ in size, as a server's do: a thread's events start
 * a whole sample period when it starts, so threads that run the same code
 * to the microsecond would be sampled at the same points of it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "native_mix.h"

#define TIMEOUT_S NATIVE_MIX_TIMEOUT_S
#define SHARE_PP 5.0          /* as test_native: issue 4 */
#define RATE "1000"           /* the default rate */
#define RATE_HZ 1000.0
#define ATTACHED_S "2.5"
#define RUN_S "4"
#define MIN_OF_CPU 0.5
#define PERF_SAMPLE_NS 100e3  /* perf_rings.c: SAMPLE_NS_MIN */

/* The samples on the handlers' lines: the parse loop's and the zlib
 * call's (*zlib). */
static double handler_samples(json_t *snap, json_t *truth, json_t **zlib)
{
	json_t *line;
	double n = 0;
	size_t i;

	json_array_foreach(json_object_get(truth, "parse_lines"), i, line) {
		json_t *row = h_line_row(snap, "request_threads.py", (int)json_number_value(line));

		n += row ? h_num(row, "total") : 0;
	}
	*zlib = h_line_row(snap, "request_threads.py", (int)h_num(truth, "zlib_line"));
	return n + (*zlib ? h_num(*zlib, "total") : 0);
}

static void handlers(const char *slot)
{
	char *python = h_need_python_slot(slot), *dir = h_tmpdir();
	char *wl = h_workload("request_threads.py"), *truth_path = h_path(dir, "truth.json");
	const char *wargv[] = { python, wl, "--seconds", RUN_S, "--truth", truth_path, NULL };
	json_t *lines, *snap, *truth, *zlib;
	struct h_proc w;

	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 15), "%s: workload not ready", slot);
	snap = native_profile(w.pid, "--native", ATTACHED_S, RATE, &lines);
	cr_assert(h_proc_finish(&w, 15), "%s: workload did not finish", slot);
	truth = h_json_file(truth_path);
	cr_assert_not_null(truth, "%s: no truth", slot);

	const char *method = json_string_value(json_object_get(snap, "native_method"));
	double parse_s = h_num(truth, "parse_s"), zlib_s = h_num(truth, "zlib_s");
	double requests = h_num(truth, "requests");
	double attached = atof(ATTACHED_S) / atof(RUN_S);
	double expect_n = (parse_s + zlib_s) * attached * RATE_HZ;
	double n = handler_samples(snap, truth, &zlib);
	double on_zlib = zlib ? h_num(zlib, "total") : 0;
	double start_ns = 1e3 * h_num(truth, "start_cpu_us");
	double blind_s = requests * fmax(0, PERF_SAMPLE_NS - start_ns) / 1e9;
	double raw_pct = 100 * zlib_s / (parse_s + zlib_s);
	double truth_pct = 100 * zlib_s / (parse_s - blind_s + zlib_s);
	double pct = n > 0 ? 100 * on_zlib / n : 0;
	struct native_callees under = zlib ? native_callees_of(zlib, "libz")
	                                   : (struct native_callees){ 0 };
	double call_ns = requests > 0 ? 1e9 * zlib_s / requests : 0;
	double expect_bare = PERF_SAMPLE_NS / 2 / call_ns;
	double bare = on_zlib > 0 ? (on_zlib - under.all) / on_zlib : 1;
	double limit = expect_bare + 2 * sqrt(expect_bare * (1 - expect_bare) / fmax(on_zlib, 1));

	h_note("%s: %.0f requests, %.0f us of CPU each (median); %s: %.0f handler samples "
	       "(%.0f expected from their CPU time), %.0f missed", slot, requests,
	       h_num(truth, "handler_cpu_us"), method ? method : "?", n, expect_n,
	       h_num(snap, "native_missed"));
	h_note("%s: zlib truth %.1f%% of the handlers' CPU, %.1f%% of what perf can see "
	       "(start-up %.0f us), its line %.1f%%; %.1f%% of its "
	       "samples without native code under them (expected <= %.1f%%, at most %.1f%%), "
	       "%.0f in libz", slot, raw_pct, truth_pct, start_ns / 1e3, pct, 100 * bare, 100 * expect_bare, 100 * limit,
	       under.in_module);
	cr_expect_str_eq(method ? method : "", "perf", "%s: pytop --native did not use perf "
	                 "events", slot);
	cr_assert_geq(n, MIN_OF_CPU * expect_n, "%s: %.0f samples of the handler threads, "
	              "their CPU time gives %.0f", slot, n, expect_n);
	cr_expect_leq(fabs(pct - truth_pct), SHARE_PP, "%s: the zlib line has %.1f%% of the "
	              "handlers' samples, its share of the CPU perf can see is %.1f%%", slot, pct,
	              truth_pct);
	cr_expect_leq(bare, limit, "%s: %.1f%% of the zlib line's samples have no native code "
	              "under them (at most %.1f%%)", slot, 100 * bare, 100 * limit);
	cr_expect_str_eq(under.top_module && strstr(under.top_module, "libz") ? "libz"
	                 : under.top_module ? under.top_module : "(none)", "libz",
	                 "%s: the zlib line's hottest native callee is not in libz", slot);
	json_decref(lines);
	json_decref(truth);
	h_proc_free(&w);
	h_rmtree(dir);
	free(python), free(dir), free(wl), free(truth_path);
}

Test(native_short_threads, handlers_py311_debian, .timeout = TIMEOUT_S) { handlers("py311_debian"); }
Test(native_short_threads, handlers_py314_sid, .timeout = TIMEOUT_S) { handlers("py314_sid"); }

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
