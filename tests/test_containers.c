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
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define SHARE_TOLERANCE_PP 3.0 /* test_live's bound */

static const char *const SPLIT_FUNCS[] = {"hot_a", "hot_b", "Klass.hot_c", NULL};

/* A cgroup with a CPU quota and a memory limit: v2 (cpu.max, memory.max)
 * on a unified system, else v1's cpu and memory controllers. */
struct cgroup {
	char cpu[PATH_MAX], mem[PATH_MAX]; /* its directories (the same in v2) */
};

#define CG_QUOTA_US 50000   /* of 100000: half a CPU */
#define CG_MEM (256ull << 20)

static bool write_file(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, file);
	f = fopen(path, "w");
	if (f == NULL)
		return false;
	bool ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

/* Creates it, or skips the test saying why it cannot. */
static void cgroup_make(struct cgroup *cg)
{
	char mem[32];

	if (geteuid() != 0)
		cr_skip_test("creating a cgroup needs root");
	snprintf(mem, sizeof mem, "%llu", CG_MEM);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		snprintf(cg->cpu, sizeof cg->cpu, "/sys/fs/cgroup/pytop-test-%d", (int)getpid());
		snprintf(cg->mem, sizeof cg->mem, "%s", cg->cpu);
		write_file("/sys/fs/cgroup", "cgroup.subtree_control", "+cpu +memory");
		if (mkdir(cg->cpu, 0755) != 0 || !write_file(cg->cpu, "cpu.max", "50000 100000") ||
		    !write_file(cg->mem, "memory.max", mem))
			cr_skip_test("cannot make a cgroup v2 with cpu.max and memory.max in %s",
			             cg->cpu);
		return;
	}
	snprintf(cg->cpu, sizeof cg->cpu, "/sys/fs/cgroup/cpu/pytop-test-%d", (int)getpid());
	snprintf(cg->mem, sizeof cg->mem, "/sys/fs/cgroup/memory/pytop-test-%d", (int)getpid());
	if (mkdir(cg->cpu, 0755) != 0 || mkdir(cg->mem, 0755) != 0 ||
	    !write_file(cg->cpu, "cpu.cfs_period_us", "100000") ||
	    !write_file(cg->cpu, "cpu.cfs_quota_us", "50000") ||
	    !write_file(cg->mem, "memory.limit_in_bytes", mem))
		cr_skip_test("cannot make cgroups v1 %s and %s with a CPU quota and a "
		             "memory limit", cg->cpu, cg->mem);
}

/* Once its processes are gone (their zombies reaped a moment later). */
static void cgroup_remove(const struct cgroup *cg)
{
	for (int i = 0; i < 100 && (rmdir(cg->cpu) != 0 && errno == EBUSY); i++)
		h_sleep(0.02);
	if (strcmp(cg->mem, cg->cpu) != 0)
		for (int i = 0; i < 100 && (rmdir(cg->mem) != 0 && errno == EBUSY); i++)
			h_sleep(0.02);
}

/* The workload in new PID and mount namespaces, in the cgroup `cg` if not
 * NULL (a shell joins it, then execs unshare).  Returns its host PID (the
 * child unshare forked), after it said "ready 1": PID 1 inside. */
static pid_t start_contained(struct h_proc *unshare, const char *python,
                             const char *workload, const char *truth,
                             const struct cgroup *cg)
{
	char join[2 * PATH_MAX + 64];
	const char *argv[] = {"/bin/sh", "-c", join, "sh", "unshare", "-p", "-f", "-m",
	                      "--mount-proc", python, workload, "--seconds", "60",
	                      "--truth", truth, "--timeline", NULL};
	char comm[16], *copy = strdup(python);

	h_need_program("unshare");
	if (geteuid() != 0)
		cr_skip_test("unshare needs root to create PID and mount namespaces");
	snprintf(comm, sizeof comm, "%s", basename(copy));
	free(copy);
	if (cg != NULL)
		snprintf(join, sizeof join, "echo $$ > %s/cgroup.procs && echo $$ > "
		         "%s/cgroup.procs && exec \"$@\"", cg->cpu, cg->mem);
	else
		snprintf(join, sizeof join, "exec \"$@\"");
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

/* The own share of every hot function against the truth of the window
 * pytop sampled, as test_live's attach check: the truth cut to that
 * window (h_truth_to_window), within the tolerance plus the ticks pytop
 * says it missed (h_unsampled_pct). */
static void check_accuracy(json_t *snap, json_t *truth, const char *slot)
{
	json_t *funcs;
	double wall, tolerance = SHARE_TOLERANCE_PP + h_unsampled_pct(snap);
	char what[64];

	snprintf(what, sizeof what, "container attach (%s)", slot);
	h_truth_to_window(truth, snap, what);
	funcs = json_object_get(truth, "functions");
	wall = h_num(truth, "loop_wall");

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
		cr_assert(fabs(got - truth_pct) <= tolerance,
		          "%s own share %.1f%%, truth %.1f%% (within %.1f pp)", SPLIT_FUNCS[i],
		          got, truth_pct, tolerance);
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
	pid_t host = start_contained(&unshare, python, wl, truth_path, NULL);
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
	h_note("container attach (%s): %.0f samples in %.0f ticks, %.0f errors, "
	       "verdict %s (%s)\n", slot, samples, h_num(last, "ticks"),
	       h_num(last, "errors"), verdict ? verdict : "(none)",
	       json_string_value(json_object_get(json_object_get(last, "gauges"),
	                                         "verdict_reason")));
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

/* The container's limits are the target's cgroup's, seen from the host:
 * the CPU quota in the header and the JSON gauges, the memory limit as
 * the share RSS is of. */
Test(containers, cgroup_limits, .timeout = 40)
{
	char *python = h_need_python_slot("py315_sid");
	char *dir = h_tmpdir(), *truth_path = h_path(dir, "truth.json");
	char *wl = h_workload("cpu_split.py");
	struct cgroup cg;
	struct h_proc unshare, json, text;

	cgroup_make(&cg);
	pid_t host = start_contained(&unshare, python, wl, truth_path, &cg);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)host);
	const char *jargv[] = {h_pytop(), "-b", "--json", "-p", pid, "-n", "1", "-d", "0.5", NULL};
	const char *targv[] = {h_pytop(), "-b", "-p", pid, "-n", "1", "-d", "0.5", NULL};
	bool ran = h_run(&json, 20, jargv) && h_run(&text, 20, targv);
	h_proc_free(&unshare);
	cgroup_remove(&cg);
	cr_assert(ran, "pytop did not finish: %s%s", json.err.data, text.err.data);
	cr_assert_eq(json.status, 0, "pytop --json: %s", json.err.data);
	cr_assert_eq(text.status, 0, "pytop: %s", text.err.data);

	int bad = 0;
	json_t *lines = h_json_lines(json.out.data, &bad);
	cr_assert_not_null(lines, "line %d of pytop's output is not JSON", bad);
	json_t *g = json_object_get(json_array_get(lines, 0), "gauges");
	cr_assert_not_null(g, "no gauges");
	h_note("cgroup limits: cpu_limit %.2f CPUs, mem_limit %.0f bytes\n",
	       h_num(g, "cpu_limit"), h_num(g, "mem_limit"));
	cr_assert_eq(h_num(g, "cpu_limit"), CG_QUOTA_US / 100000.0,
	             "cpu_limit %.2f, the cgroup's quota is 0.5 CPU", h_num(g, "cpu_limit"));
	cr_assert_eq(h_num(g, "mem_limit"), (double)CG_MEM, "mem_limit %.0f, the cgroup's "
	             "is %llu", h_num(g, "mem_limit"), CG_MEM);
	cr_assert_not_null(strstr(text.out.data, "(limit 50%)"),
	                   "the header does not show the CPU quota: %.400s", text.out.data);
	cr_assert_not_null(strstr(text.out.data, "of 256M)"),
	                   "the header does not show the memory limit: %.400s", text.out.data);

	json_decref(lines);
	h_proc_free(&json);
	h_proc_free(&text);
	h_rmtree(dir);
	free(python), free(dir), free(truth_path), free(wl);
}

Test(containers, attach_py311_debian, .timeout = 40) { attach_contained("py311_debian"); }
Test(containers, attach_py315_sid, .timeout = 40) { attach_contained("py315_sid"); }

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
