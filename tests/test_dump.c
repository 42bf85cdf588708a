/* test_dump.c - pytop dump against Python's own view of its stacks, on
 * every interpreter the harness finds.
 *
 * tests/workloads/dump_points.py parks four threads at known lines (one
 * spinning with the GIL, one blocked on a lock, one asleep with locals of
 * every shown kind, the main thread on a lock) and writes what
 * sys._current_frames() shows of each: frames outermost first (qualified
 * name, file, line, stripped source line), the program's thread name, and
 * every local's repr as pytop must show it.  pytop dump --json --locals
 * must match it frame for frame and value for value; the text output must
 * list the same frames, innermost last.  Plus the bad cases: a process
 * without Python (the live view's message), a PID that is gone.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TIMEOUT_S 30.0
#define READY_S 15.0
#define MAX_FRAMES 2048 /* the reader's limit (PY_READER_MAX_FRAMES) */

struct parked {
	struct h_proc wl;
	char *dir;
	json_t *truth;
	const char *slot;
};

static int task_count(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Start the workload and wait until its threads are parked, its truth is
 * written and its reporter thread is gone. */
static void park(struct parked *p, const char *slot)
{
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("dump_points.py");
	char *truth, *ready;
	int want;

	p->slot = slot;
	p->dir = h_tmpdir();
	truth = h_path(p->dir, "truth.json");
	ready = h_path(p->dir, "ready");
	const char *argv[] = { python, wl, "--truth", truth, "--ready-file", ready, NULL };
	cr_assert(h_proc_start(&p->wl, argv), "%s: workload did not start", slot);
	cr_assert(h_proc_wait_file(&p->wl, ready, READY_S), "%s: the workload never parked (stderr: %s)",
	          slot, p->wl.err.data ? p->wl.err.data : "");
	p->truth = h_json_file(truth);
	cr_assert_not_null(p->truth, "%s: no truth file", slot);
	want = (int)json_integer_value(json_object_get(p->truth, "nthreads"));
	for (double t0 = h_now(); task_count(p->wl.pid) != want && h_now() - t0 < READY_S;)
		h_sleep(0.01);
	cr_assert_eq(task_count(p->wl.pid), want, "%s: the reporter thread did not end", slot);
	free(python), free(wl), free(truth), free(ready);
}

static void unpark(struct parked *p)
{
	h_proc_free(&p->wl);
	json_decref(p->truth);
	if (p->dir != NULL)
		h_rmtree(p->dir);
	free(p->dir);
}

static json_t *run_dump_json(const struct parked *p, bool locals)
{
	char pid[16];
	struct h_proc r;
	json_t *out;
	json_error_t e;

	snprintf(pid, sizeof pid, "%d", (int)p->wl.pid);
	const char *argv[] = { h_pytop(), "dump", "--json", locals ? "--locals" : "-p",
	                       locals ? "-p" : pid, locals ? pid : NULL, NULL };
	cr_assert(h_run(&r, TIMEOUT_S, argv), "%s: pytop dump did not finish", p->slot);
	cr_assert_eq(r.status, 0, "%s: pytop dump exited %d: %s", p->slot, r.status, r.err.data);
	cr_assert_eq(h_count_lines(r.out.data), 1, "%s: not one JSON object:\n%s", p->slot,
	             r.out.data);
	out = json_loads(r.out.data, 0, &e);
	cr_assert_not_null(out, "%s: not JSON (%s):\n%s", p->slot, e.text, r.out.data);
	cr_assert(h_proc_state(p->wl.pid) != 'T' && h_tracer_pid(p->wl.pid) == 0,
	          "%s: the target was left stopped or traced", p->slot);
	h_proc_free(&r);
	return out;
}

static json_t *thread_by_tid(json_t *dump, json_int_t tid)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(dump, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "(null)";
}

static void check_locals(const char *where, json_t *want, json_t *got)
{
	size_t i, j;
	json_t *w, *g;

	cr_assert(json_is_array(json_object_get(got, "locals")), "%s: no locals (%s)", where,
	          str(got, "locals_error"));
	cr_expect_eq(json_array_size(json_object_get(got, "locals")),
	             json_array_size(json_object_get(want, "locals")),
	             "%s: %zu locals, Python has %zu", where,
	             json_array_size(json_object_get(got, "locals")),
	             json_array_size(json_object_get(want, "locals")));
	json_array_foreach(json_object_get(want, "locals"), i, w) {
		json_t *found = NULL;

		json_array_foreach(json_object_get(got, "locals"), j, g)
			if (strcmp(str(g, "name"), str(w, "name")) == 0)
				found = g;
		cr_expect_not_null(found, "%s: local %s missing", where, str(w, "name"));
		if (found == NULL)
			continue;
		cr_expect_str_eq(str(found, "kind"), str(w, "kind"), "%s: %s is an %s, not %s",
		                 where, str(w, "name"), str(w, "kind"), str(found, "kind"));
		cr_expect_str_eq(str(found, "repr"), str(w, "repr"),
		                 "%s: %s = %s, Python: %s", where, str(w, "name"),
		                 str(found, "repr"), str(w, "repr"));
	}
}

/* The index in got's frames of its "[N more frames]" marker (N in *n),
 * or the number of frames when there is none. */
static size_t marker_at(json_t *gf, long *n)
{
	size_t i;
	json_t *g;

	json_array_foreach(gf, i, g)
		if (sscanf(str(g, "function"), "[%ld more frames]", n) == 1)
			return i;
	return json_array_size(gf);
}

static void check_frames(const struct parked *p, json_t *want, json_t *got, bool locals)
{
	json_t *wf = json_object_get(want, "frames"), *gf = json_object_get(got, "frames");
	size_t i, outer, nw = json_array_size(wf), ng = json_array_size(gf);
	long n = 0;
	json_t *g;
	char where[256];
	bool deep = nw > MAX_FRAMES;

	/* A deeper stack keeps its outermost and innermost frames, with one
	 * "[N more frames]" between them for the rest, and says so. */
	cr_expect_eq(json_is_true(json_object_get(got, "truncated")), deep,
	             "%s: thread %s (%zu frames) truncated: %d", p->slot, str(want, "name"),
	             nw, json_is_true(json_object_get(got, "truncated")));
	outer = marker_at(gf, &n);
	if (deep) {
		cr_assert_lt(outer, ng, "%s: thread %s: no marker frame", p->slot, str(want, "name"));
		cr_assert_leq(ng, MAX_FRAMES, "%s: %zu frames", p->slot, ng);
		g = json_array_get(gf, outer);
		cr_expect_str_eq(str(g, "file"), "", "%s: the marker's file", p->slot);
		cr_expect_eq(json_integer_value(json_object_get(g, "line")), 0);
	}
	cr_assert_eq(ng - (deep ? 1 : 0) + (size_t)n, nw,
	             "%s: thread %s has %zu frames (%ld left out), Python shows %zu", p->slot,
	             str(want, "name"), ng, n, nw);
	json_array_foreach(gf, i, g) {
		/* The outermost ones come first (dump order): past the marker,
		 * the innermost ones, N further into Python's list. */
		json_t *w = json_array_get(wf, i < outer ? i : i - 1 + (size_t)n);

		if (i == outer)
			continue;
		snprintf(where, sizeof where, "%s: thread %s frame %zu (%s)", p->slot,
		         str(want, "name"), i, str(w, "function"));
		cr_expect_str_eq(str(g, "function"), str(w, "function"), "%s: function", where);
		cr_expect_str_eq(str(g, "file"), str(w, "file"), "%s: file", where);
		cr_expect_eq(json_integer_value(json_object_get(g, "line")),
		             json_integer_value(json_object_get(w, "line")), "%s: line %lld, "
		             "Python: %lld", where,
		             (long long)json_integer_value(json_object_get(g, "line")),
		             (long long)json_integer_value(json_object_get(w, "line")));
		cr_expect_str_eq(str(g, "source"), str(w, "source"), "%s: source", where);
		/* Locals are read for the frames inside the marker only. */
		if (locals && (!deep || i > outer))
			check_locals(where, w, g);
		else if (locals)
			cr_expect_str_eq(str(g, "locals_error"), "not read (beyond the frame limit)",
			                 "%s", where);
	}
}

static void check_dump(const struct parked *p, json_t *dump, bool locals)
{
	json_t *threads = json_object_get(p->truth, "threads");
	json_int_t spinner = json_integer_value(json_object_get(p->truth, "spinner"));
	size_t i;
	json_t *want;

	cr_assert_eq(json_integer_value(json_object_get(dump, "pid")), p->wl.pid);
	cr_assert_eq(json_array_size(json_object_get(dump, "threads")), json_array_size(threads),
	             "%s: %zu threads, Python has %zu", p->slot,
	             json_array_size(json_object_get(dump, "threads")), json_array_size(threads));
	json_array_foreach(threads, i, want) {
		json_int_t tid = json_integer_value(json_object_get(want, "tid"));
		json_t *got = thread_by_tid(dump, tid);

		cr_assert_not_null(got, "%s: thread %s (%lld) missing", p->slot, str(want, "name"),
		                   (long long)tid);
		cr_expect_str_eq(str(got, "name"), str(want, "name"), "%s: thread %lld is named %s, "
		                 "not %s", p->slot, (long long)tid, str(got, "name"), str(want, "name"));
		cr_expect_str_eq(str(got, "state"), tid == spinner ? "running_gil" : "idle",
		                 "%s: thread %s is %s", p->slot, str(want, "name"), str(got, "state"));
		check_frames(p, want, got, locals);
	}
}

/* The spinner takes the GIL back a moment after the reporter thread ends
 * (on a busy machine, as late as the scheduler runs it): until then it is
 * truly running without it.  So the dump is taken again, for up to
 * READY_S, until the spinner is seen holding it; every other check is on
 * that dump. */
static json_t *dump_with_spinner_holding(const struct parked *p, bool locals)
{
	json_int_t spinner = json_integer_value(json_object_get(p->truth, "spinner"));
	double t0 = h_now();
	json_t *dump;

	for (;;) {
		dump = run_dump_json(p, locals);
		json_t *t = thread_by_tid(dump, spinner);
		if ((t != NULL && strcmp(str(t, "state"), "running_gil") == 0) ||
		    h_now() - t0 > READY_S)
			return dump;
		h_note("%s: spinner seen %s, dumping again", p->slot, t ? str(t, "state") : "missing");
		json_decref(dump);
		h_sleep(0.05);
	}
}

static void dump_matches(const char *slot)
{
	struct parked p = { 0 };
	json_t *dump;

	park(&p, slot);
	dump = dump_with_spinner_holding(&p, false);
	check_dump(&p, dump, false);
	cr_expect_null(json_object_get(json_array_get(json_object_get(json_array_get(
	               json_object_get(dump, "threads"), 0), "frames"), 0), "locals"),
	               "%s: locals without --locals", slot);
	json_decref(dump);
	dump = dump_with_spinner_holding(&p, true);
	check_dump(&p, dump, true);
	json_decref(dump);
	unpark(&p);
}

TestSuite(dump);

#define ON(slot)                                                   \
	Test(dump, stacks_##slot, .timeout = TIMEOUT_S + 20)        \
	{                                                          \
		dump_matches(#slot);                               \
	}

ON(py311_debian)
ON(py311_pyenv)
ON(py312_pyenv)
ON(py313_pyenv)
ON(py313_sid)
ON(py313_sid_shared)
ON(py314_sid)
ON(py314_sid_shared)
ON(py315_sid)
ON(py315_sid_shared)

/* The live view's own message for a process without Python, word for
 * word, and exit 1. */
Test(dump, not_python, .timeout = TIMEOUT_S)
{
	const char *sleeper[] = { "sleep", "30", NULL };
	struct h_proc s, live, dump;
	char pid[16];

	cr_assert(h_proc_start(&s, sleeper));
	h_sleep(0.2);
	snprintf(pid, sizeof pid, "%d", (int)s.pid);
	const char *live_argv[] = { h_pytop(), "-b", "-n", "1", "-p", pid, NULL };
	const char *dump_argv[] = { h_pytop(), "dump", "-p", pid, NULL };
	cr_assert(h_run(&live, TIMEOUT_S, live_argv));
	cr_assert(h_run(&dump, TIMEOUT_S, dump_argv));
	cr_expect_eq(dump.status, 1, "pytop dump exited %d", dump.status);
	cr_expect_eq(h_count_lines(dump.err.data), 1, "not one line: %s", dump.err.data);
	cr_expect_str_eq(dump.err.data, live.err.data);
	cr_expect_eq(dump.out.len, 0, "stdout: %s", dump.out.data);
	cr_expect_eq(h_proc_state(s.pid), 'S', "the sleeper was left in state %c",
	             h_proc_state(s.pid));
	h_proc_free(&live), h_proc_free(&dump), h_proc_free(&s);
}

static json_t *child_by_pid(json_t *dump, json_int_t pid)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(dump, "children"), i, c)
		if (json_integer_value(json_object_get(c, "pid")) == pid)
			return c;
	return NULL;
}

/* The innermost frame of a process's main thread (its TID is the PID). */
static json_t *innermost(json_t *proc)
{
	json_t *main = thread_by_tid(proc, json_integer_value(json_object_get(proc, "pid")));
	json_t *frames = json_object_get(main, "frames");

	if (json_array_size(frames) == 0)
		return NULL;
	return json_array_get(frames, json_array_size(frames) - 1);
}

/* -s: the parent and each child as themselves, the non-Python child
 * listed with why it has no stacks.  The children park a moment after
 * they say where: the dump is taken again until they are there. */
static void family_matches(const char *slot)
{
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("dump_family.py");
	char *dir = h_tmpdir(), *truth_path = h_path(dir, "truth.json"), *ready = h_path(dir, "ready");
	const char *argv[] = { python, wl, "--truth", truth_path, "--ready-file", ready, NULL };
	struct h_proc wl_proc;
	json_t *truth, *dump = NULL, *kids, *k;
	char pid[16];
	size_t i;
	double t0;

	cr_assert(h_proc_start(&wl_proc, argv));
	cr_assert(h_proc_wait_file(&wl_proc, ready, READY_S), "%s: the family never parked", slot);
	truth = h_json_file(truth_path);
	cr_assert_not_null(truth);
	kids = json_object_get(truth, "children");
	snprintf(pid, sizeof pid, "%d", (int)wl_proc.pid);
	for (t0 = h_now(); h_now() - t0 < READY_S; h_sleep(0.05)) {
		const char *dump_argv[] = { h_pytop(), "dump", "-s", "--json", "-p", pid, NULL };
		struct h_proc r;
		bool parked = true;

		json_decref(dump);
		cr_assert(h_run(&r, TIMEOUT_S, dump_argv));
		cr_assert_eq(r.status, 0, "%s: pytop dump -s exited %d: %s", slot, r.status, r.err.data);
		dump = json_loads(r.out.data, 0, NULL);
		h_proc_free(&r);
		cr_assert_not_null(dump);
		json_array_foreach(kids, i, k) {
			json_t *f = innermost(child_by_pid(dump, json_integer_value(json_object_get(k, "pid"))));

			parked = parked && f != NULL && json_integer_value(json_object_get(f, "line")) ==
			         json_integer_value(json_object_get(k, "line"));
		}
		if (parked)
			break;
	}
	cr_assert_eq(json_integer_value(json_object_get(dump, "pid")), wl_proc.pid);
	cr_assert_eq(json_array_size(json_object_get(dump, "children")), 3,
	             "%s: %zu children", slot, json_array_size(json_object_get(dump, "children")));
	json_array_foreach(kids, i, k) {
		json_t *c = child_by_pid(dump, json_integer_value(json_object_get(k, "pid")));
		json_t *f = innermost(c);

		cr_assert_not_null(c, "%s: child %lld missing", slot,
		                   (long long)json_integer_value(json_object_get(k, "pid")));
		cr_expect_eq(json_integer_value(json_object_get(c, "ppid")), wl_proc.pid);
		cr_expect(json_is_null(json_object_get(c, "error")), "%s: %s", slot, str(c, "error"));
		cr_assert_not_null(f, "%s: child without a main thread stack", slot);
		cr_expect_str_eq(str(f, "function"), str(k, "function"));
		cr_expect_str_eq(str(f, "file"), str(k, "file"));
		cr_expect_eq(json_integer_value(json_object_get(f, "line")),
		             json_integer_value(json_object_get(k, "line")));
	}
	k = child_by_pid(dump, json_integer_value(json_object_get(truth, "sleeper")));
	cr_assert_not_null(k, "%s: the sleep child is not listed", slot);
	cr_expect(strstr(str(k, "error"), "Python") != NULL, "%s: sleep child: %s", slot,
	          str(k, "error"));
	cr_expect_eq(json_array_size(json_object_get(k, "threads")), 0);
	json_decref(dump);
	json_decref(truth);
	h_proc_free(&wl_proc);
	h_rmtree(dir);
	free(python), free(wl), free(dir), free(truth_path), free(ready);
}

Test(dump, family_py312_pyenv, .timeout = TIMEOUT_S * 2)
{
	family_matches("py312_pyenv");
}

Test(dump, family_py314_sid, .timeout = TIMEOUT_S * 2)
{
	family_matches("py314_sid");
}

/* A target that exits while it is dumped again and again: every dump
 * either prints one whole JSON object and exits 0, or says in one line
 * that the process is gone and exits 1; never a crash, a hang, or half an
 * object.  The last dump, after the exit, must be the second kind. */
Test(dump, target_exits_during_dumps, .timeout = TIMEOUT_S * 2)
{
	char *python = h_need_python_slot("py311_debian");
	const char *argv[] = { python, "-c",
		"import threading, time\n"
		"for _ in range(4): threading.Thread(target=time.sleep, args=(0.6,)).start()\n"
		"time.sleep(0.6)\n", NULL };
	struct h_proc target;
	char pid[16];
	int ok = 0, gone = 0, last = -1;
	double t0 = h_now();

	cr_assert(h_proc_start(&target, argv));
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	while (h_now() - t0 < TIMEOUT_S) {
		const char *dump_argv[] = { h_pytop(), "dump", "--json", "-p", pid, NULL };
		bool ended = h_proc_state(target.pid) == 'Z' || h_proc_state(target.pid) == 0;
		struct h_proc r;

		cr_assert(h_run(&r, TIMEOUT_S, dump_argv), "pytop dump hung");
		last = r.status;
		if (r.status == 0) {
			json_t *j = json_loads(r.out.data, 0, NULL);

			cr_expect_not_null(j, "half an object: %s", r.out.data);
			json_decref(j);
			ok++;
		} else {
			cr_expect_eq(r.status, 1, "pytop dump ended with status %d: %s", r.status,
			             r.err.data);
			cr_expect_eq(h_count_lines(r.err.data), 1, "%s", r.err.data);
			cr_expect(strncmp(r.err.data, "pytop: ", 7) == 0, "%s", r.err.data);
			cr_expect_eq(r.out.len, 0, "stdout: %s", r.out.data);
			gone++;
		}
		h_proc_free(&r);
		if (ended)
			break;
	}
	h_note("target_exits_during_dumps: %d dumps, %d of the process gone", ok, gone);
	cr_expect_eq(last, 1, "the dump after the exit did not say it was gone");
	h_proc_free(&target);
	free(python);
}

/* Usage errors: one line naming the problem and the fix, exit 2, before
 * anything is attached. */
Test(dump, usage_errors, .timeout = TIMEOUT_S)
{
	static const char *const cases[][6] = {
		{ "dump", NULL },
		{ "dump", "--", "python3", "-c", "pass", NULL },
		{ "dump", "-p", "1", "--duration", "3", NULL },
		{ "dump", "-p", "1", "-r", "100", NULL },
		{ "dump", "-p", "1", "-b", NULL },
		{ "--locals", "-p", "1", NULL },
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[8] = { h_pytop() };
		struct h_proc r;
		size_t n = 1;

		for (size_t j = 0; cases[i][j] != NULL; j++)
			argv[n++] = cases[i][j];
		argv[n] = NULL;
		cr_assert(h_run(&r, TIMEOUT_S, argv));
		cr_expect_eq(r.status, 2, "case %zu: exit %d: %s", i, r.status, r.err.data);
		cr_expect_eq(h_count_lines(r.err.data), 1, "case %zu: %s", i, r.err.data);
		cr_expect(strncmp(r.err.data, "pytop: ", 7) == 0, "case %zu: %s", i, r.err.data);
		cr_expect_eq(r.out.len, 0);
		h_proc_free(&r);
	}
}

Test(dump, gone_pid, .timeout = TIMEOUT_S)
{
	char pid[16];
	struct h_proc r;

	snprintf(pid, sizeof pid, "%d", (int)h_dead_pid());
	const char *argv[] = { h_pytop(), "dump", "--json", "-p", pid, NULL };
	cr_assert(h_run(&r, TIMEOUT_S, argv));
	cr_expect_eq(r.status, 1);
	cr_expect_eq(h_count_lines(r.err.data), 1, "%s", r.err.data);
	cr_expect(strstr(r.err.data, pid) != NULL, "the message names no PID: %s", r.err.data);
	cr_expect_eq(r.out.len, 0);
	h_proc_free(&r);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
