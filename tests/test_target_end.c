/* test_target_end.c - a target's end is an end, even when nobody reaps it.
 *
 * An attached target whose parent never wait()s for it (a busy supervisor,
 * a container without a proper init) stays a zombie in /proc.  pytop must
 * still see that it ended: batch mode prints its final snapshot and exits
 * 0, JSON's last line says "exited": true.  Each target here is started by
 * a shell that forks it and then execs sleep, which never reaps it; pytop
 * attaches to the forked child.
 *
 * Attaching to a target that is already a zombie is refused in one line.
 *
 * The two running targets are the ones whose end the sampler does not notice by a
 * failed memory read: a Python program that exec'd a non-Python program
 * (pytop stops reading it and only watches for its end), and a C program
 * under --native (its threads come from /proc/PID/task, where a zombie
 * stays listed).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "native_target_path.h"

/* How long pytop may run on after its target ended: the sampler looks a
 * few times a second, the batch loop polls every 50 ms. */
#define END_SLACK_S 3.0

/* Busy in Python for 1.5 s (pytop attaches meanwhile, even on a loaded
 * machine), then replaced by sleep (not Python). */
static const char EXEC_SCRIPT[] =
	"import os, time\n"
	"end = time.monotonic() + 1.5\n"
	"print('ready %d' % os.getpid(), flush=True)\n"
	"while time.monotonic() < end:\n"
	"    pass\n"
	"os.execv('/bin/sleep', ['sleep', '0.3'])\n";

/* A shell that starts `cmd` (its words as "$@") in the background and
 * becomes a sleep that never reaps it.  The target prints "ready PID" once
 * it runs what pytop is to see. */
static pid_t start_unreaped(struct h_proc *parent, const char *const cmd[])
{
	const char *argv[16] = {"/bin/sh", "-c", "\"$@\" & exec sleep 60", "sh"};
	size_t n = 4;

	for (size_t i = 0; cmd[i] != NULL && n < 15; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	cr_assert(h_proc_start(parent, argv), "cannot start the parent shell");
	cr_assert(h_proc_wait_stdout(parent, "ready ", 10), "target not ready: %s",
	          parent->err.data);
	return (pid_t)atoi(strstr(parent->out.data, "ready ") + 6);
}

/* Wait until the target is a zombie (it ended and its parent does not reap
 * it), then give pytop END_SLACK_S to finish. */
static void expect_pytop_ends(struct h_proc *pytop, pid_t target, double limit_s)
{
	double deadline = h_now() + limit_s;

	while (h_proc_state(target) != 'Z' && h_now() < deadline)
		h_proc_pump(pytop, 0.02);
	cr_assert_eq(h_proc_state(target), 'Z', "the target (PID %d) did not end as an "
	             "unreaped zombie in %.0f s (state %c)", (int)target, limit_s,
	             h_proc_state(target) ? h_proc_state(target) : '-');
	cr_assert(h_proc_finish(pytop, END_SLACK_S),
	          "pytop still running %.0f s after its target became a zombie; "
	          "stdout ends: %.300s", END_SLACK_S,
	          pytop->out.len > 300 ? pytop->out.data + pytop->out.len - 300
	                               : pytop->out.data);
	cr_assert_eq(pytop->status, 0, "pytop exit status %d: %s", pytop->status,
	             pytop->err.data);
}

/* pytop -b [--json] [--native] -p the unreaped child of `cmd`. */
static void attach_until_end(const char *const cmd[], bool json, bool native)
{
	struct h_proc parent, pytop;
	char pid[16];
	const char *argv[12] = {h_pytop(), "-b", "-d", "0.25", "-r", "500"};
	size_t n = 6;

	pid_t target = start_unreaped(&parent, cmd);
	cr_assert_gt(target, 0, "no PID in: %s", parent.out.data);
	h_sleep(0.1); /* past the interpreter's start-up */
	snprintf(pid, sizeof pid, "%d", (int)target);
	if (json)
		argv[n++] = "--json";
	if (native)
		argv[n++] = "--native";
	argv[n++] = "-p";
	argv[n++] = pid;
	argv[n] = NULL;
	cr_assert(h_proc_start(&pytop, argv), "cannot start pytop");
	expect_pytop_ends(&pytop, target, 15);

	if (json) {
		int bad = 0;
		json_t *lines = h_json_lines(pytop.out.data, &bad);
		cr_assert_not_null(lines, "line %d of pytop's output is not JSON", bad);
		size_t k = json_array_size(lines);
		cr_assert_gt(k, 0, "no snapshot at all");
		json_t *last = json_array_get(lines, k - 1);
		cr_assert(json_is_true(json_object_get(last, "exited")),
		          "the final snapshot does not say the target exited");
		cr_assert_eq(h_num(last, "pid"), target);
		json_decref(lines);
	} else {
		cr_assert_not_null(strstr(pytop.out.data, "pytop "),
		                   "no text snapshot at all: %s", pytop.out.data);
	}
	h_proc_free(&pytop);
	h_proc_free(&parent);
}

static void python_exec(bool json, bool native)
{
	char *python = h_need_python_slot("py311_debian");
	const char *cmd[] = {python, "-c", EXEC_SCRIPT, NULL};

	attach_until_end(cmd, json, native);
	free(python);
}

static void native_c(bool json)
{
	char *target = native_target_path(), *dir = h_tmpdir();
	char *truth = h_path(dir, "truth");
	const char *cmd[] = {target, "1.5", truth, NULL};

	attach_until_end(cmd, json, true);
	h_rmtree(dir);
	free(target), free(dir), free(truth);
}

/* Attaching to a target that is already a zombie: one line saying so (it
 * is still listed by ps, as <defunct>, so "no such process" would mislead),
 * exit status 1, nothing on stdout. */
Test(target_end, attach_to_zombie, .timeout = 30)
{
	char *python = h_need_python_slot("py311_debian");
	const char *cmd[] = {python, "-c", "import os; print('ready %d' % os.getpid())", NULL};
	struct h_proc parent, pytop;
	pid_t target = start_unreaped(&parent, cmd);
	double deadline = h_now() + 10;

	while (h_proc_state(target) != 'Z' && h_now() < deadline)
		h_sleep(0.02);
	cr_assert_eq(h_proc_state(target), 'Z', "the target did not become a zombie");
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target);
	const char *argv[] = {h_pytop(), "-b", "-p", pid, NULL};
	cr_assert(h_run(&pytop, 10, argv), "pytop did not finish");
	cr_assert_eq(pytop.status, 1, "exit status %d", pytop.status);
	cr_assert_eq(pytop.out.len, 0, "stdout: %s", pytop.out.data);
	cr_assert_eq(h_count_lines(pytop.err.data), 1, "stderr: %s", pytop.err.data);
	cr_assert_not_null(strstr(pytop.err.data, "zombie"), "stderr does not say the "
	                   "process is a zombie: %s", pytop.err.data);
	h_proc_free(&pytop);
	h_proc_free(&parent);
	free(python);
}

Test(target_end, python_exec_text, .timeout = 30) { python_exec(false, false); }
Test(target_end, python_exec_json, .timeout = 30) { python_exec(true, false); }
Test(target_end, python_exec_native_text, .timeout = 30) { python_exec(false, true); }
Test(target_end, python_exec_native_json, .timeout = 30) { python_exec(true, true); }
Test(target_end, native_c_text, .timeout = 30) { native_c(false); }
Test(target_end, native_c_json, .timeout = 30) { native_c(true); }

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
