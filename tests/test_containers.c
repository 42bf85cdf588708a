/* test_containers.c - a container's process profiled from the host.
 *
 * The target runs in its own PID and mount namespaces (`unshare -p -f -m
 * --mount-proc`, the shape of every Docker or Kubernetes process seen from
 * the host): inside, it is PID 1 and its threads have small IDs of their
 * own, which CPython stores as each thread's native_thread_id.  pytop -p
 * HOSTPID must sample it as well as a plain target: the same accuracy bound
 * as test_live's attach test (each hot function's share within 3 points of
 * the workload's own measure), samples and a verdict that is not
 * "waiting", and its threads listed under their host TIDs.
 *
 * Needs root (unshare); skipped with the reason otherwise.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define SHARE_TOLERANCE_PP 3.0 /* test_live's bound */

static const char *const SPLIT_FUNCS[] = {"hot_a", "hot_b", "Klass.hot_c", NULL};

/* The workload in new PID and mount namespaces.  Returns its host PID
 * (the child unshare forked), after it said "ready 1": PID 1 inside. */
static pid_t start_contained(struct h_proc *unshare, const char *python,
                             const char *workload, const char *truth)
{
	const char *argv[] = {"unshare", "-p", "-f", "-m", "--mount-proc", python,
	                      workload, "--seconds", "60", "--truth", truth, NULL};
	char comm[16], *copy = strdup(python);

	h_need_program("unshare");
	if (geteuid() != 0)
		cr_skip_test("unshare needs root to create PID and mount namespaces");
	snprintf(comm, sizeof comm, "%s", basename(copy));
	free(copy);
	cr_assert(h_proc_start(unshare, argv), "cannot start unshare");
	cr_assert(h_proc_wait_stdout(unshare, "ready ", 10), "workload not ready: %s",
	          unshare->err.data);
	cr_assert_eq(atoi(strstr(unshare->out.data, "ready ") + 6), 1,
	             "the workload is not PID 1 of its namespace: %s", unshare->out.data);
	pid_t host = h_find_child(unshare->pid, comm);
	cr_assert_gt(host, 1, "no %s child of unshare (PID %d)", comm, (int)unshare->pid);
	return host;
}

static bool is_task_of(pid_t pid, double tid)
{
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/task/%.0f", (int)pid, tid);
	return access(path, F_OK) == 0;
}

/* The own share of every hot function against the truth of the rounds
 * pytop saw a window of (loop_wall), as test_live's attach check. */
static void check_accuracy(json_t *snap, json_t *truth, const char *slot)
{
	json_t *funcs = json_object_get(truth, "functions");
	double wall = h_num(truth, "loop_wall");

	cr_assert_gt(wall, 0, "truth has no loop_wall");
	for (size_t i = 0; SPLIT_FUNCS[i]; i++) {
		json_t *tf = json_object_get(funcs, SPLIT_FUNCS[i]);
		cr_assert_not_null(tf, "truth lacks %s", SPLIT_FUNCS[i]);
		double truth_pct = 100.0 * h_num(tf, "seconds") / wall;
		double got = h_own_pct(snap, SPLIT_FUNCS[i]);
		h_note("accuracy: container attach (%s %s): %-12s truth %5.1f%%  "
		       "pytop %5.1f%%  diff %+.1f pp\n", slot,
		       json_string_value(json_object_get(truth, "python")),
		       SPLIT_FUNCS[i], truth_pct, got, got - truth_pct);
		json_t *f = h_func(snap, SPLIT_FUNCS[i]);
		cr_assert_not_null(f, "%s missing from pytop's output", SPLIT_FUNCS[i]);
		cr_assert(fabs(got - truth_pct) <= SHARE_TOLERANCE_PP,
		          "%s own share %.1f%%, truth %.1f%%", SPLIT_FUNCS[i], got,
		          truth_pct);
		cr_assert_str_eq(json_string_value(json_object_get(f, "file")),
		                 json_string_value(json_object_get(tf, "file")));
	}
}

/* Every thread under its host TID: a task of the host PID, the main one
 * the host PID itself (inside, it is 1). */
static void check_threads(json_t *snap, pid_t host)
{
	json_t *threads = json_object_get(snap, "threads"), *t;
	size_t i;
	bool main_seen = false;

	cr_assert_gt(json_array_size(threads), 0, "no threads listed");
	json_array_foreach(threads, i, t) {
		double tid = h_num(t, "tid");

		cr_assert(is_task_of(host, tid), "thread %.0f listed, but the host "
		          "PID %d has no such task", tid, (int)host);
		main_seen |= tid == host;
	}
	cr_assert(main_seen, "the main thread is not listed as host TID %d", (int)host);
}

static void attach_contained(const char *slot)
{
	char *python = h_need_python_slot(slot);
	char *dir = h_tmpdir(), *truth_path = h_path(dir, "truth.json");
	char *wl = h_workload("cpu_split.py");
	struct h_proc unshare, pytop;
	pid_t host = start_contained(&unshare, python, wl, truth_path);
	char pid[16];

	snprintf(pid, sizeof pid, "%d", (int)host);
	const char *argv[] = {h_pytop(), "-b", "--json", "-p", pid, "--duration", "2.5",
	                      "-d", "0.5", "-r", "1000", NULL};
	cr_assert(h_run(&pytop, 20, argv), "pytop did not finish: %s", pytop.err.data);
	cr_assert_eq(pytop.status, 0, "pytop exit status %d: %s", pytop.status,
	             pytop.err.data);
	int bad = 0;
	json_t *lines = h_json_lines(pytop.out.data, &bad);
	cr_assert_not_null(lines, "line %d of pytop's output is not JSON", bad);
	json_t *last = json_array_get(lines, json_array_size(lines) - 1);
	cr_assert_not_null(last, "no snapshot");
	check_threads(last, host); /* while the target and its threads live */

	/* The target stops on SIGTERM from the host and writes its truth. */
	h_proc_signal(&unshare, SIGTERM);
	kill(host, SIGTERM);
	cr_assert(h_proc_finish(&unshare, 10), "workload did not stop");
	json_t *truth = h_json_file(truth_path);
	cr_assert_not_null(truth, "the workload wrote no truth");

	double samples = h_num(last, "samples");
	const char *verdict = json_string_value(
		json_object_get(json_object_get(last, "gauges"), "verdict"));
	h_note("container attach (%s): %.0f samples, %.0f errors, verdict %s\n", slot,
	       samples, h_num(last, "errors"), verdict ? verdict : "(none)");
	cr_assert_gt(samples, 0.5 * h_num(last, "ticks"),
	             "%.0f samples in %.0f ticks of a busy target", samples,
	             h_num(last, "ticks"));
	cr_assert(verdict != NULL && strcmp(verdict, "waiting") != 0,
	          "verdict %s on a CPU-bound target", verdict ? verdict : "(none)");
	cr_assert_eq(h_num(last, "pid"), host);
	check_accuracy(last, truth, slot);

	json_decref(truth);
	json_decref(lines);
	h_proc_free(&pytop);
	h_proc_free(&unshare);
	h_rmtree(dir);
	free(python), free(dir), free(truth_path), free(wl);
}

Test(containers, attach_py311_debian, .timeout = 40) { attach_contained("py311_debian"); }
Test(containers, attach_py315_sid, .timeout = 40) { attach_contained("py315_sid"); }

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
