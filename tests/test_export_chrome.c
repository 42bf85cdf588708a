/* test_export_chrome.c - the chrome export (Trace Event Format, JSON
 * object form) of a recording, checked against the format's own rules
 * (test_export_chrome_app has a real consumer, the speedscope app, load
 * it): the fields every
 * event of its phase must have, with their types; complete ("X") events
 * that nest per thread (each inside or after the one before, never
 * across); a thread_name for every thread with events; and its truth: the
 * "samples" counters add up to the collapsed export of the same recording,
 * and the workload's two threads each show their own function. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

static bool is_int(json_t *e, const char *k)
{
	return json_is_integer(json_object_get(e, k));
}

/* The fields an event of its phase must carry (Trace Event Format). */
static void check_fields(json_t *e, size_t i)
{
	const char *ph = json_string_value(json_object_get(e, "ph"));

	cr_assert(json_is_string(json_object_get(e, "name")), "event %zu: no name", i);
	cr_assert(ph != NULL, "event %zu: no ph", i);
	cr_assert(is_int(e, "pid") && is_int(e, "tid"), "event %zu: pid/tid not integers", i);
	if (strcmp(ph, "X") == 0) {
		cr_assert(is_int(e, "ts") && is_int(e, "dur"), "X event %zu: ts/dur", i);
		cr_assert_geq(json_integer_value(json_object_get(e, "ts")), 0);
		cr_assert_gt(json_integer_value(json_object_get(e, "dur")), 0, "X event %zu: "
		             "an empty duration", i);
		cr_assert(json_is_string(json_object_get(e, "cat")), "X event %zu: cat", i);
	} else if (strcmp(ph, "C") == 0) {
		json_t *args = json_object_get(e, "args");

		cr_assert(is_int(e, "ts") && json_is_object(args), "C event %zu", i);
		cr_assert(json_is_integer(json_object_get(args, "samples")), "C event %zu: "
		          "its value", i);
	} else {
		const char *name = json_string_value(json_object_get(e, "name"));

		cr_assert_str_eq(ph, "M", "event %zu: phase %s", i, ph);
		cr_assert(strcmp(name, "thread_name") == 0 || strcmp(name, "process_name") == 0,
		          "M event %zu: %s", i, name);
		cr_assert(json_is_string(json_object_get(json_object_get(e, "args"), "name")),
		          "M event %zu: args.name", i);
	}
}

struct span {
	long long pid, tid, ts, end;
	const char *name;
};

static int by_thread_time(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (y->end > x->end) - (y->end < x->end); /* outer first */
}

/* Per thread, each X event starts after the open ones end, or ends
 * inside the innermost open one. */
static void check_nesting(struct span *v, size_t n)
{
	struct span **open = calloc(n ? n : 1, sizeof *open);
	size_t depth = 0;

	qsort(v, n, sizeof *v, by_thread_time);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && (v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid))
			depth = 0;
		while (depth > 0 && open[depth - 1]->end <= v[i].ts)
			depth--;
		if (depth > 0)
			cr_assert_leq(v[i].end, open[depth - 1]->end, "thread %lld: %s [%lld, %lld) "
			              "crosses %s [%lld, %lld)", v[i].tid, v[i].name, v[i].ts,
			              v[i].end, open[depth - 1]->name, open[depth - 1]->ts,
			              open[depth - 1]->end);
		open[depth++] = &v[i];
	}
	free(open);
}

static long long collapsed_sum(const char *text)
{
	long long sum = 0;

	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n'), *sp = strrchr(l, ' ');

		cr_assert(nl != NULL);
		for (const char *q = l; q < nl; q++)
			if (*q == ' ')
				sp = q;
		sum += strtoll(sp + 1, NULL, 10);
		l = nl + 1;
	}
	return sum;
}

/* The tid whose X events include a frame named `name`; -1 none. */
static long long tid_of(struct span *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return v[i].tid;
	return -1;
}

Test(export_chrome, trace_events_nest_and_add_up, .timeout = 60)
{
	char *dir = h_tmpdir(), *work = h_workload("chrome_pair.py"), *file = h_path(dir, "run.pytop");
	char *trace = h_path(dir, "trace.json");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *rec[] = { h_pytop(), "record", "-o", file, "--", py, work, NULL };
	const char *exp[] = { h_pytop(), "export", file, "--format", "chrome", "-o", trace, NULL };
	const char *col[] = { h_pytop(), "export", file, "--format", "collapsed", NULL };
	struct h_proc p, e, c;
	json_error_t jerr;
	json_t *root, *events, *ev;
	size_t i, nx = 0, nthreads_named = 0;
	long long counted = 0;
	cr_assert(h_run(&p, 30, rec) && p.status == 0, "pytop record: %s", p.err.data);
	cr_assert(h_run(&e, 30, exp), "pytop export did not finish");
	cr_assert_eq(e.status, 0, "export: status %d, %s", e.status, e.err.data);
	root = json_load_file(trace, 0, &jerr);
	cr_assert(root != NULL, "the trace is not JSON: %s (line %d)", jerr.text, jerr.line);
	events = json_object_get(root, "traceEvents");
	cr_assert(json_is_array(events) && json_array_size(events) > 0, "no traceEvents");
	const char *unit = json_string_value(json_object_get(root, "displayTimeUnit"));
	cr_assert(unit != NULL && (strcmp(unit, "ms") == 0 || strcmp(unit, "ns") == 0));

	struct span *v = calloc(json_array_size(events), sizeof *v);
	json_array_foreach(events, i, ev) {
		const char *ph;

		check_fields(ev, i);
		ph = json_string_value(json_object_get(ev, "ph"));
		if (strcmp(ph, "C") == 0)
			counted += json_integer_value(json_object_get(json_object_get(ev, "args"),
			                                              "samples"));
		if (strcmp(ph, "M") == 0 &&
		    strcmp(json_string_value(json_object_get(ev, "name")), "thread_name") == 0)
			nthreads_named++;
		if (strcmp(ph, "X") != 0)
			continue;
		v[nx].pid = json_integer_value(json_object_get(ev, "pid"));
		v[nx].tid = json_integer_value(json_object_get(ev, "tid"));
		v[nx].ts = json_integer_value(json_object_get(ev, "ts"));
		v[nx].end = v[nx].ts + json_integer_value(json_object_get(ev, "dur"));
		v[nx].name = json_string_value(json_object_get(ev, "name"));
		nx++;
	}
	check_nesting(v, nx);
	/* Every thread with events is named. */
	for (size_t k = 0; k < nx; k++) {
		bool named = false;

		json_array_foreach(events, i, ev)
			if (strcmp(json_string_value(json_object_get(ev, "ph")), "M") == 0 &&
			    json_integer_value(json_object_get(ev, "tid")) == v[k].tid &&
			    json_integer_value(json_object_get(ev, "pid")) == v[k].pid)
				named = true;
		cr_assert(named, "thread %lld has events but no thread_name", v[k].tid);
	}
	long long main_tid = tid_of(v, nx, "main_loop"), spin_tid = tid_of(v, nx, "worker_spin");
	cr_assert(main_tid > 0 && spin_tid > 0, "main_loop on %lld, worker_spin on %lld",
	          main_tid, spin_tid);
	cr_assert_neq(main_tid, spin_tid, "both functions on one thread's timeline");

	cr_assert(h_run(&c, 30, col) && c.status == 0, "collapsed export: %s", c.err.data);
	long long whole = collapsed_sum(c.out.data);
	h_note("%zu complete events on %zu named threads; counters %lld samples, the "
	       "collapsed export %lld", nx, nthreads_named, counted, whole);
	cr_assert_gt(whole, 500);
	cr_assert_eq(counted, whole, "the samples counters add up to %lld, the recording "
	             "holds %lld", counted, whole);
	free(v);
	json_decref(root);
	h_proc_free(&c);
	h_proc_free(&e);
	h_proc_free(&p);
	h_rmtree(dir);
	free(trace);
	free(work);
	free(file);
	free(dir);
}

Test(export_chrome, refused_live, .timeout = 30)
{
	char *dir = h_tmpdir(), *out = h_path(dir, "live.json");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "-b", "--format", "chrome", "-o", out, "--", py,
	                       "-c", "pass", NULL };
	struct h_proc p;
	struct stat st;

	cr_assert(h_run(&p, 20, argv));
	h_note("status %d: %s", p.status, p.err.data);
	cr_assert_neq(p.status, 0);
	cr_assert_eq(h_count_lines(p.err.data), 1, "not one line: %s", p.err.data);
	cr_assert(strstr(p.err.data, "pytop export") != NULL, "the fix is not said: %s",
	          p.err.data);
	cr_assert_neq(stat(out, &st), 0, "a live chrome export made %s", out);
	h_proc_free(&p);
	h_rmtree(dir);
	free(out);
	free(dir);
}

/* One case at a time: each runs a CPU-bound workload under pytop, and
 * Criterion's parallel runner leaks under ASan (seen in test_cli too). */
int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
