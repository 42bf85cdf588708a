/* native_mix.h - what the native accuracy tests (test_native with
 * --native, test_native_perf_accuracy with --native-perf) share: pytop
 * attached to a workload with one native method, the native_mix.py run
 * they both check against the CPU time it measures itself, the samples on
 * its measured lines, and a line's native callees. */
#ifndef PYTOP_TESTS_NATIVE_MIX_H
#define PYTOP_TESTS_NATIVE_MIX_H

#include <jansson.h>
#include <sys/types.h>

#include "harness.h"

/* Longest a pytop run of these tests may take, s. */
#define NATIVE_MIX_TIMEOUT_S 40

/* pytop `method` ("--native", "--native-perf") attached to pid for
 * `seconds` at `rate` Hz in JSON batch mode; the last JSON snapshot
 * (owned by *lines). */
json_t *native_profile(pid_t pid, const char *method, const char *seconds,
                       const char *rate, json_t **lines);

/* One native_mix.py run on the interpreter in slot, profiled. */
struct native_mix {
	struct h_proc w;
	char *python, *dir, *wl, *truth_path; /* owned */
	json_t *lines;                        /* owned: pytop's JSON lines */
	json_t *snap;                         /* the last one, in lines */
	json_t *truth;                        /* owned: what it measured */
};

/* Start native_mix.py (4 s of rounds), profile it 2.5 s at rate with
 * method, let it finish and read its truth; fails the test otherwise. */
void native_mix_run(struct native_mix *m, const char *slot,
                    const char *method, const char *rate);
void native_mix_free(struct native_mix *m);

/* Samples on the measured lines (the pure-Python loop's and each call's),
 * and in *seconds the CPU seconds the truth gives them. */
double native_mix_measured(json_t *snap, json_t *truth, double *seconds);

/* A Python line's native callees (its samples' native leaf functions, the
 * lines view's rows under it): own samples in all, and in `module`. */
struct native_callees {
	double all, in_module;
	const char *top_module; /* borrowed: the hottest callee's, or NULL */
};

struct native_callees native_callees_of(json_t *line, const char *module);

#endif
