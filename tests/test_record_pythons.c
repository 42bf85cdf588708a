/* test_record_pythons.c - record, replay and export on every interpreter
 * the live tests use: a live `-b --json -w FILE` run of a two-thread
 * program (tests/workloads/replay_pair.py), then `pytop replay -b --json
 * FILE` and `pytop export FILE --format collapsed`.  Truth is the live
 * run's own output: the replay prints as many snapshots, the last with
 * the same samples and the same own and total counts for the program's
 * four functions, and the collapsed export sums to the live samples with
 * the same own count for each.  The other tests of recordings, replay
 * and exports run on Debian's 3.11 only; this one shows that nothing of
 * them depends on the interpreter the stacks came from. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapsed_text.h"
#include "harness.h"

static const char *const FUNCS[] = { "leaf", "mid", "other", "worker" };

/* Run argv; its JSON lines (status 0 required). */
static json_t *json_of(const char *const argv[], const char *what)
{
	struct h_proc p;
	json_t *lines;
	int bad = 0;

	cr_assert(h_run(&p, 60, argv), "%s did not finish; stderr: %s", what, p.err.data);
	cr_assert_eq(p.status, 0, "%s: status %d, stderr: %s", what, p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) > 0, "%s: bad JSON line %d", what,
	          bad);
	h_proc_free(&p);
	return lines;
}

static long long count(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "%s is not an integer", key);
	return json_integer_value(v);
}

static json_t *last_of(json_t *lines)
{
	return json_array_get(lines, json_array_size(lines) - 1);
}

static void same_functions(json_t *live, json_t *rep, const char *slot)
{
	for (size_t i = 0; i < sizeof FUNCS / sizeof FUNCS[0]; i++) {
		json_t *a = h_func(live, FUNCS[i]), *b = h_func(rep, FUNCS[i]);

		cr_assert(a != NULL && b != NULL, "%s: %s live %p, replayed %p", slot, FUNCS[i],
		          (void *)a, (void *)b);
		cr_assert_eq(count(a, "own"), count(b, "own"), "%s: %s own %lld live, %lld "
		             "replayed", slot, FUNCS[i], count(a, "own"), count(b, "own"));
		cr_assert_eq(count(a, "total"), count(b, "total"), "%s: %s total %lld live, "
		             "%lld replayed", slot, FUNCS[i], count(a, "total"),
		             count(b, "total"));
	}
}

static void exported_like_live(const char *file, json_t *live, const char *work,
                               const char *slot)
{
	const char *argv[] = { h_pytop(), "export", file, "--format", "collapsed", NULL };
	struct h_proc p;
	long long sum;

	cr_assert(h_run(&p, 60, argv), "pytop export did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop export: status %d, stderr: %s", p.status, p.err.data);
	sum = collapsed_sum(p.out.data);
	cr_assert_eq(sum, count(live, "samples"), "%s: the export sums to %lld, the live "
	             "run's last snapshot says %lld", slot, sum, count(live, "samples"));
	for (size_t i = 0; i < sizeof FUNCS / sizeof FUNCS[0]; i++) {
		long long own = collapsed_own(p.out.data, FUNCS[i], work);

		cr_assert_eq(own, count(h_func(live, FUNCS[i]), "own"), "%s: %s own %lld "
		             "exported, %lld live", slot, FUNCS[i], own,
		             count(h_func(live, FUNCS[i]), "own"));
	}
	h_proc_free(&p);
}

static void record_replay_export(const char *slot)
{
	char *py = h_need_python_slot(slot);
	char *dir = h_tmpdir(), *file = h_path(dir, "run.pytop");
	char *work = h_workload("replay_pair.py");
	const char *live_argv[] = { h_pytop(), "-b", "--json", "-d", "0.5", "-w", file, "--",
	                            py, work, "1.5", NULL };
	const char *rep_argv[] = { h_pytop(), "replay", "-b", "--json", file, NULL };
	json_t *live = json_of(live_argv, "pytop -b --json -w");
	json_t *rep = json_of(rep_argv, "pytop replay -b --json");
	json_t *l = last_of(live), *r = last_of(rep);

	h_note("record/replay/export %s: %zu live snapshots, %zu replayed; %lld samples "
	       "live, %lld replayed", slot, json_array_size(live), json_array_size(rep),
	       count(l, "samples"), count(r, "samples"));
	cr_assert_gt(count(l, "samples"), 300, "%s: too few samples to compare: %lld", slot,
	             count(l, "samples"));
	cr_assert_eq(json_array_size(live), json_array_size(rep), "%s: %zu snapshots live, "
	             "%zu replayed", slot, json_array_size(live), json_array_size(rep));
	cr_assert_eq(count(l, "samples"), count(r, "samples"), "%s: %lld samples live, %lld "
	             "replayed", slot, count(l, "samples"), count(r, "samples"));
	same_functions(l, r, slot);
	exported_like_live(file, l, work, slot);
	json_decref(live);
	json_decref(rep);
	h_rmtree(dir);
	free(dir), free(file), free(work), free(py);
}

#define ON(slot)                                                     \
	Test(record_pythons, replay_and_export_##slot, .timeout = 90) \
	{                                                            \
		record_replay_export(#slot);                         \
	}

ON(py311_debian)
ON(py312_pyenv)
ON(py313_pyenv)
ON(py313_sid)
ON(py314_sid)
ON(py315_sid)

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
