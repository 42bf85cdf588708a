/* test_two_paths.c - the call tree against a real program's own timing:
 * tests/workloads/two_paths.py reaches one hot function by two call
 * paths, route_a and route_b, 70 / 30 % of its CPU time by construction,
 * and measures each path's thread CPU time.  pytop -b --json --stacks
 * must show both paths into hot, and each path's share of the two
 * (their stacks' samples on a CPU: python + native + system, like with
 * like with CPU time; on a busy machine part of a runnable thread's
 * samples waited for a CPU instead) within 3 percentage points of the
 * workload's, on every interpreter the live tests use.  Figures go to
 * the test log as "# two paths: ..." lines. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PATH_TOLERANCE_PP 3.0

/* The on-CPU samples of the stacks through `route` that end in hot
 * under it, and of those through `route` at all. */
static void path_samples(json_t *snap, const char *route, double *into_hot,
                         double *all)
{
	json_t *frames = json_object_get(snap, "frames"), *st, *ix;
	size_t i, k;

	*into_hot = *all = 0;
	json_array_foreach(json_object_get(snap, "stacks"), i, st) {
		bool through = false, hot_under = false;
		double cpu = h_num(st, "python") + h_num(st, "native") +
		             h_num(st, "system");

		json_array_foreach(json_object_get(st, "frames"), k, ix) {
			json_t *f = json_array_get(frames,
			                           (size_t)json_integer_value(ix));
			const char *name = json_string_value(json_object_get(f, "name"));
			cr_assert_not_null(name, "frame %zu of a stack", k);
			through = through || strcmp(name, route) == 0;
			hot_under = hot_under || (through && strcmp(name, "hot") == 0);
		}
		if (through)
			*all += cpu;
		if (hot_under)
			*into_hot += cpu;
	}
}

static double truth_seconds(json_t *truth, const char *route)
{
	json_t *p = json_object_get(json_object_get(truth, "paths"), route);

	cr_assert_not_null(p, "the truth lacks %s", route);
	return h_num(p, "seconds");
}

static void two_paths(const char *slot)
{
	char *py = h_need_python_slot(slot);
	char *dir = h_tmpdir(), *truth_path = h_path(dir, "truth.json");
	char *wl = h_workload("two_paths.py");
	const char *argv[] = { h_pytop(), "-b", "--json", "--stacks", "--",
		py, wl, "--seconds", "3", "--truth", truth_path, NULL };
	struct h_proc p;
	json_t *lines, *last, *truth;
	double a_hot, a_all, b_hot, b_all, ta, tb;
	int bad = 0;

	cr_assert(h_run(&p, 60, argv), "pytop did not finish (stderr: %s)",
	          p.err.data ? p.err.data : "");
	cr_assert_eq(p.status, 0, "pytop exit status %d, stderr: %s", p.status,
	             p.err.data ? p.err.data : "");
	lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(lines, "stdout line %d is not JSON", bad);
	last = json_array_get(lines, json_array_size(lines) - 1);
	cr_assert_not_null(last, "no JSON output");
	truth = h_json_file(truth_path);
	cr_assert_not_null(truth, "the workload wrote no truth");
	path_samples(last, "route_a", &a_hot, &a_all);
	path_samples(last, "route_b", &b_hot, &b_all);
	ta = truth_seconds(truth, "route_a");
	tb = truth_seconds(truth, "route_b");
	cr_assert_gt(ta + tb, 0.2, "the workload ran %.3f s of CPU", ta + tb);
	double share_a = 100 * a_all / (a_all + b_all),
	       truth_a = 100 * ta / (ta + tb);
	h_note("two paths: %s %s: route_a %.1f%% of %.0f on-CPU samples "
	       "(truth %.1f%% of %.3f s CPU), into hot %.0f / %.0f and "
	       "%.0f / %.0f", slot,
	       json_string_value(json_object_get(truth, "python")), share_a,
	       a_all + b_all, truth_a, ta + tb, a_hot, a_all, b_hot, b_all);
	/* both paths lead into hot: nearly all their samples end there */
	cr_expect_gt(a_hot, 0.9 * a_all, "route_a -> hot: %.0f of %.0f", a_hot,
	             a_all);
	cr_expect_gt(b_hot, 0.9 * b_all, "route_b -> hot: %.0f of %.0f", b_hot,
	             b_all);
	cr_expect_leq(fabs(share_a - truth_a), PATH_TOLERANCE_PP,
	              "%s: route_a %.1f%% of the two paths, truth %.1f%%", slot,
	              share_a, truth_a);
	cr_expect_leq(fabs((100 - share_a) - (100 - truth_a)), PATH_TOLERANCE_PP);
	json_decref(lines);
	json_decref(truth);
	h_proc_free(&p);
	h_rmtree(dir);
	free(dir), free(truth_path), free(wl), free(py);
}

#define ON(slot)                                                     \
	Test(two_paths, shares_##slot, .timeout = 60)                \
	{                                                            \
		two_paths(#slot);                                    \
	}

ON(py311_debian)
ON(py312_pyenv)
ON(py313_pyenv)
ON(py314_sid)
ON(py315_sid)

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
