/* test_native_perf.c - --native (by perf events, its default) stops
 * nothing, and the ptrace path still serves when perf events are refused
 * or not wanted (issue 14, "native stacks without stopping the target").
 *
 * - never_stopped_at_10khz: while a 10 kHz pytop --native samples a
 *   target with busy, half-busy and sleeping threads, a watcher reads
 *   every target thread's /proc state as fast as it can; the ptrace path
 *   shows 't' (ptrace stop) there within milliseconds, the perf path never.
 * - ptrace_when_asked / ptrace_when_perf_refused: --native-ptrace, and a
 *   --native pytop whose perf_event_open fails with EACCES (a seccomp filter put
 *   around it by this test, as a container's would), say "ptrace" and
 *   still find the zlib and OpenSSL code under their Python lines.
 * - idle_threads_unwound_in_place: with --idle, threads off CPU (which
 *   perf samples only while they run) are unwound from where /proc says
 *   they are blocked: the sleeper's leaf is clock_nanosleep.
 * - blocked_line_parsed: that /proc line's stack pointer and program
 *   counter, and "running" or a malformed line refused.
 * - sandbox_allows_threads_only: pytop's own filter lets a perf event
 *   watch one thread, on any CPU (cpu -1) or on one (what --native opens,
 *   inherited by the threads it starts), and refuses one on every process
 *   of a CPU (pid -1) or of a cgroup. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "sandbox.h"
#include "target/proc_threads.h"

#define TIMEOUT_S 60
#define WAIT_S 15.0

/* ---- the target's thread states ---------------------------------------- */

/* Reads of every thread's state of pid, and how many found one stopped. */
struct watch {
	long looks, stopped;
	char seen[64]; /* the last stopped thread's "tid:state" */
};

static void look(pid_t pid, struct watch *w)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char stat_path[sizeof path + 300], *text, *close;

		if (e->d_name[0] == '.')
			continue;
		snprintf(stat_path, sizeof stat_path, "%s/%s/stat", path, e->d_name);
		text = h_read_file(stat_path);
		close = text ? strrchr(text, ')') : NULL;
		if (close != NULL && close[1] == ' ') {
			w->looks++;
			if (close[2] == 't' || close[2] == 'T') {
				w->stopped++;
				snprintf(w->seen, sizeof w->seen, "%.20s:%c", e->d_name, close[2]);
			}
		}
		free(text);
	}
	closedir(d);
}

/* The last JSON line pytop printed. */
static json_t *last_snapshot(struct h_proc *p, json_t **lines)
{
	int bad = 0;

	*lines = h_json_lines(p->out.data, &bad);
	cr_assert_not_null(*lines, "line %d is not JSON", bad);
	cr_assert_gt(json_array_size(*lines), 0, "no JSON from pytop: %s",
	             p->err.data ? p->err.data : "");
	return json_array_get(*lines, json_array_size(*lines) - 1);
}

static const char *method_of(json_t *snap)
{
	const char *m = json_string_value(json_object_get(snap, "native_method"));

	return m ? m : "(none)";
}

/* Samples whose leaf is a native function, from the function rows. */
static double native_own(json_t *snap)
{
	json_t *f;
	size_t i;
	double own = 0;

	json_array_foreach(json_object_get(snap, "functions"), i, f) {
		const char *kind = json_string_value(json_object_get(f, "kind"));

		if (kind != NULL && strcmp(kind, "native") == 0)
			own += h_num(f, "own");
	}
	return own;
}

Test(native_perf, never_stopped_at_10khz, .timeout = TIMEOUT_S)
{
	char *python = h_need_python_slot("py311_debian"), *wl = h_workload("threads.py");
	const char *wargv[] = { python, wl, "--seconds", "20", NULL };
	struct h_proc w, p;
	struct watch seen = { 0 };
	char pid[16];
	json_t *lines, *snap;

	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", WAIT_S), "the target never started");
	snprintf(pid, sizeof pid, "%d", (int)w.pid);
	const char *argv[] = { h_pytop(), "--native", "-b", "--json", "-r", "10000", "-d", "2",
	                       "-n", "1", "-p", pid, NULL };
	cr_assert(h_proc_start(&p, argv));
	/* Until pytop ends: its first second or so is start-up, the rest
	 * sampling at 10 kHz. */
	do
		look(w.pid, &seen);
	while (!h_proc_pump(&p, 0.0005) && h_now() - p.started < TIMEOUT_S / 2);
	cr_assert(h_proc_finish(&p, WAIT_S), "pytop --native did not end");
	cr_assert_eq(p.status, 0, "pytop exited with %d: %s", p.status, p.err.data);
	snap = last_snapshot(&p, &lines);
	h_note("10 kHz --native (%s): %ld looks at the target's threads, %ld stopped (%s); "
	       "%.0f samples, %.0f native leaves, %.0f missed", method_of(snap), seen.looks,
	       seen.stopped, seen.seen, h_num(snap, "samples"), native_own(snap),
	       h_num(snap, "native_missed"));
	cr_expect_str_eq(method_of(snap), "perf");
	cr_assert_gt(seen.looks, 1000, "too few looks at the target to tell");
	cr_expect_eq(seen.stopped, 0, "the target was stopped %ld times of %ld looks (%s)",
	             seen.stopped, seen.looks, seen.seen);
	/* Native stacks were taken all the same, for most samples. */
	cr_expect_gt(native_own(snap), 0, "no native function sampled");
	cr_expect_lt(h_num(snap, "native_missed"), h_num(snap, "samples"),
	             "more samples without a native stack than with one");
	h_proc_signal(&w, SIGTERM);
	h_proc_finish(&w, WAIT_S);
	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&w);
	free(python), free(wl);
}

/* ---- --idle: threads off CPU ------------------------------------------- */

Test(native_perf, idle_threads_unwound_in_place, .timeout = TIMEOUT_S)
{
	char *python = h_need_python_slot("py311_debian"), *wl = h_workload("threads.py");
	const char *wargv[] = { python, wl, "--seconds", "20", NULL };
	struct h_proc w, p;
	char pid[16];
	json_t *lines, *snap, *sleep_fn;

	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", WAIT_S), "the target never started");
	snprintf(pid, sizeof pid, "%d", (int)w.pid);
	const char *argv[] = { h_pytop(), "--native", "--idle", "-b", "--json", "-r", "200",
	                       "-d", "1.5", "-n", "1", "-p", pid, NULL };
	cr_assert(h_run(&p, TIMEOUT_S, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exited with %d: %s", p.status, p.err.data);
	snap = last_snapshot(&p, &lines);
	sleep_fn = h_func(snap, "clock_nanosleep@GLIBC_2.2.5");
	if (sleep_fn == NULL)
		sleep_fn = h_func(snap, "clock_nanosleep");
	h_note("--native --idle (%s): %.0f samples, %.0f native leaves, %.0f missed; "
	       "clock_nanosleep own %.0f", method_of(snap), h_num(snap, "samples"),
	       native_own(snap), h_num(snap, "native_missed"),
	       sleep_fn ? h_num(sleep_fn, "own") : 0.0);
	cr_expect_str_eq(method_of(snap), "perf");
	/* The sleeper and the waiting main thread are off CPU nearly all the
	 * time: with five threads, well over a tenth of the samples. */
	cr_assert_not_null(sleep_fn, "the sleeping thread's clock_nanosleep was never sampled");
	cr_expect_gt(h_num(sleep_fn, "own"), h_num(snap, "samples") / 10,
	             "clock_nanosleep: %.0f of %.0f samples", h_num(sleep_fn, "own"),
	             h_num(snap, "samples"));
	h_proc_signal(&w, SIGTERM);
	h_proc_finish(&w, WAIT_S);
	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&w);
	free(python), free(wl);
}

Test(native_perf, blocked_line_parsed)
{
	uint64_t sp = 0, pc = 0;

	cr_assert(proc_threads_parse_blocked("230 0x1 0x7ffd10 0x0 0x0 0x0 0x0 0x7ffe1238 "
	                                     "0x7f0011223344\n", &sp, &pc));
	cr_expect_eq(sp, 0x7ffe1238u);
	cr_expect_eq(pc, 0x7f0011223344u);
	cr_assert(proc_threads_parse_blocked("-1 0x7ffe10 0x401000\n", &sp, &pc));
	cr_expect_eq(sp, 0x7ffe10u);
	cr_expect_eq(pc, 0x401000u);
	cr_expect_not(proc_threads_parse_blocked("running\n", &sp, &pc));
	cr_expect_not(proc_threads_parse_blocked("230 0x1 zz\n", &sp, &pc));
	cr_expect_not(proc_threads_parse_blocked("230 0x1 0x2 0x3\n", &sp, &pc));
	cr_expect_not(proc_threads_parse_blocked("", &sp, &pc));
}

/* ---- the ptrace path --------------------------------------------------- */

/* pytop --native (argv after `pre`) on native_mix.py; checks the method
 * and that zlib's and OpenSSL's code is found under their lines. */
static void mix_with(const char *const *pre, size_t npre, const char *want_method)
{
	char *python = h_need_python_slot("py311_debian"), *dir = h_tmpdir();
	char *wl = h_workload("native_mix.py"), *truth_path = h_path(dir, "truth.json");
	const char *wargv[] = { python, wl, "--seconds", "4", "--truth", truth_path, NULL };
	const char *argv[24];
	struct h_proc w, p;
	char pid[16];
	size_t n = 0;
	json_t *lines, *snap;

	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", WAIT_S), "workload not ready");
	snprintf(pid, sizeof pid, "%d", (int)w.pid);
	for (size_t i = 0; i < npre; i++)
		argv[n++] = pre[i];
	const char *rest[] = { "-b", "--json", "-r", "200", "-d", "1.5", "-n", "1", "-p", pid,
	                       NULL };
	memcpy(argv + n, rest, sizeof rest);
	cr_assert(h_run(&p, TIMEOUT_S, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exited with %d: %s", p.status, p.err.data);
	snap = last_snapshot(&p, &lines);
	h_note("%s: %.0f samples, %.0f native leaves, %.0f missed", method_of(snap),
	       h_num(snap, "samples"), native_own(snap), h_num(snap, "native_missed"));
	cr_expect_str_eq(method_of(snap), want_method);
	cr_expect_not_null(h_func(snap, "deflate"), "no zlib frame (deflate)");
	cr_expect_gt(native_own(snap), h_num(snap, "samples") / 2,
	             "fewer than half the samples end in native code (the workload spends "
	             "most of its time in zlib and OpenSSL)");
	cr_assert(h_proc_finish(&w, WAIT_S), "workload did not finish");
	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&w);
	h_rmtree(dir);
	free(python), free(dir), free(wl), free(truth_path);
}

Test(native_perf, ptrace_when_asked, .timeout = TIMEOUT_S)
{
	const char *pre[] = { h_pytop(), "--native-ptrace" };

	mix_with(pre, 2, "ptrace");
}

/* perf_event_open fails with EACCES in this test's process and in every
 * process it starts, as under a container's seccomp profile (Criterion
 * runs each test in a process of its own). */
Test(native_perf, ptrace_when_perf_refused, .timeout = TIMEOUT_S)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	const char *pre[] = { h_pytop(), "--native" };

	cr_assert_not_null(ctx);
	cr_assert_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(perf_event_open), 0), 0);
	cr_assert_eq(seccomp_load(ctx), 0, "cannot refuse perf_event_open");
	seccomp_release(ctx);
	mix_with(pre, 2, "ptrace");
}

/* ---- the sandbox ------------------------------------------------------- */

static long open_clock_flags(pid_t pid, int cpu, unsigned long flags)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &a, (long)pid, (long)cpu, -1L, flags);
}

static long open_clock(pid_t pid, int cpu)
{
	return open_clock_flags(pid, cpu, 0);
}

/* In a child: 0 all as expected, else a code saying which check failed. */
static int sandbox_child(void)
{
	struct pytop_error err = { 0 };
	long fd;

	if (sandbox_install(0, &err) != 0)
		return 10;
	fd = open_clock(0, -1); /* this thread, any CPU: what --native opens */
	if (fd < 0)
		return 11;
	close((int)fd);
	fd = open_clock(-1, 0); /* every process on CPU 0 */
	if (fd >= 0 || errno != EPERM)
		return 12;
	fd = open_clock(0, 0);  /* this thread, only while on CPU 0 */
	if (fd < 0)
		return 13;
	close((int)fd);
	/* pid a cgroup's descriptor: every process in it (this test's own
	 * descriptor 0 is no cgroup, but the filter refuses before the
	 * kernel looks). */
	fd = open_clock_flags(0, 0, PERF_FLAG_PID_CGROUP);
	if (fd >= 0 || errno != EPERM)
		return 14;
	return 0;
}

Test(native_perf, sandbox_allows_threads_only)
{
	long fd = open_clock(0, 0);
	int status = 0;
	pid_t pid;

	/* Without the filter the per-CPU event opens: its EPERM below is the
	 * filter's, not the kernel's permission check. */
	cr_assert_geq(fd, 0, "a per-CPU perf event is refused even without the filter: %s",
	              strerror(errno));
	close((int)fd);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(sandbox_child());
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the child died (status 0x%x)", status);
	cr_expect_neq(WEXITSTATUS(status), 11, "the filter refuses a perf event on one thread");
	cr_expect_neq(WEXITSTATUS(status), 12, "the filter allows a system-wide perf event");
	cr_expect_neq(WEXITSTATUS(status), 13, "the filter refuses a perf event on one thread "
	              "on one CPU (what --native opens)");
	cr_expect_neq(WEXITSTATUS(status), 14, "the filter allows a cgroup's perf event");
	cr_expect_eq(WEXITSTATUS(status), 0, "child status %d", WEXITSTATUS(status));
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
