/* test_cli.c - every bad input of the command line and of the target gets
 * one clear line on stderr ("pytop: ..."), a non-zero exit status, no
 * crash and no hang; plus --help, --version, the fallback to batch output
 * when stdout is not a terminal, and a target that dies while sampled.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define USAGE_ERROR 2
#define RUNTIME_ERROR 1

/* A Python program that announces itself and then sleeps. */
static const char SLEEPY[] =
	"import time\n"
	"print('ready', flush=True)\n"
	"time.sleep(30)\n";

/* ---- checks ---------------------------------------------------------------- */

/* Ran in time, was not killed by a signal, exit status `status`, and
 * stderr is exactly one line starting with "pytop: ". */
static void expect_one_error(struct h_proc *p, int status, const char *what)
{
	cr_assert(p->exited && !p->timed_out, "%s: pytop hung (killed after "
	          "the timeout)", what);
	cr_assert_lt(p->status, 128, "%s: pytop died of signal %d; stderr: %s",
	             what, p->status - 128, p->err.data);
	cr_assert_eq(p->status, status, "%s: exit status %d, expected %d; "
	             "stderr: %s", what, p->status, status, p->err.data);
	cr_assert_eq(h_count_lines(p->err.data), 1, "%s: expected one line on "
	             "stderr, got:\n%s", what, p->err.data);
	cr_assert_eq(strncmp(p->err.data, "pytop: ", 7), 0,
	             "%s: the line does not start with \"pytop: \": %s", what,
	             p->err.data);
}

static void expect_mentions(struct h_proc *p, const char *word,
                            const char *what)
{
	cr_assert_not_null(strstr(p->err.data, word),
	                   "%s: the message does not mention \"%s\": %s", what,
	                   word, p->err.data);
}

static void run(struct h_proc *p, const char *const argv[])
{
	cr_assert(h_proc_start(p, argv), "cannot start %s", argv[0]);
	h_proc_finish(p, 10);
}

/* Start a process that prints "ready" on stdout, wait for it. */
static void start_ready(struct h_proc *p, const char *const argv[])
{
	cr_assert(h_proc_start(p, argv), "cannot start %s", argv[0]);
	cr_assert(h_proc_wait_stdout(p, "ready", 10), "%s never got ready: %s",
	          argv[0], p->err.data);
}

/* Until the child has exec'd `comm` (a fork still runs the harness). */
static void wait_for_exec(pid_t pid, const char *comm)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	double deadline = h_now() + 5;
	for (;;) {
		char *now = h_read_file(path);
		bool done = now && strncmp(now, comm, strlen(comm)) == 0;
		free(now);
		if (done)
			return;
		cr_assert(h_now() < deadline, "%s never started", comm);
		h_sleep(0.01);
	}
}

/* ---- the target is wrong ----------------------------------------------------- */

Test(cli, no_such_pid, .timeout = 20)
{
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)h_dead_pid());
	const char *argv[] = {h_pytop(), "-b", "-p", pid, NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, RUNTIME_ERROR, "no such pid");
	expect_mentions(&p, pid, "no such pid");
	h_proc_free(&p);
}

Test(cli, pid_not_python, .timeout = 20)
{
	const char *sargv[] = {"sleep", "30", NULL};
	struct h_proc target;
	cr_assert(h_proc_start(&target, sargv));
	wait_for_exec(target.pid, "sleep");
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *argv[] = {h_pytop(), "-b", "-p", pid, NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, RUNTIME_ERROR, "not python");
	expect_mentions(&p, "sleep", "not python (what was found)");
	char st = h_proc_state(target.pid);
	cr_assert(st == 'S' || st == 'R', "target left in state %c", st);
	h_proc_free(&p);
	h_proc_free(&target);
}

Test(cli, python_version_unsupported_attach, .timeout = 30)
{
	const char *py = h_need_python(H_PY_PYENV_310);
	const char *targv[] = {py, "-c", SLEEPY, NULL};
	struct h_proc target;
	start_ready(&target, targv);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *argv[] = {h_pytop(), "-b", "-p", pid, NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, RUNTIME_ERROR, "python 3.10 attach");
	expect_mentions(&p, "3.10", "version found");
	expect_mentions(&p, "3.11", "versions supported");
	char st = h_proc_state(target.pid);
	cr_assert(st == 'S' || st == 'R', "target left in state %c", st);
	h_proc_free(&p);
	h_proc_free(&target);
}

Test(cli, python_version_unsupported_launch, .timeout = 30)
{
	const char *py = h_need_python(H_PY_PYENV_310);
	const char *argv[] = {h_pytop(), "-b", "--", py, "-c",
	                      "import time; time.sleep(1)", NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, RUNTIME_ERROR, "python 3.10 launch");
	expect_mentions(&p, "3.10", "version found");
	expect_mentions(&p, "3.11", "versions supported");
	h_proc_free(&p);
}

/* A copy of pytop that an unprivileged user can run, wherever the build
 * tree is.  Owned path; the directory is removed by the caller. */
static char *copy_pytop(const char *dir)
{
	char *bin = h_path(dir, "pytop");
	const char *argv[] = {"cp", h_pytop(), bin, NULL};
	struct h_proc p;
	cr_assert(h_run(&p, 10, argv) && p.status == 0, "cp: %s", p.err.data);
	h_proc_free(&p);
	chmod(dir, 0755);
	chmod(bin, 0755);
	return bin;
}

Test(cli, permission_denied, .timeout = 30)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to run pytop as another user");
	h_need_program("setpriv");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *targv[] = {py, "-c", SLEEPY, NULL};
	struct h_proc target;
	start_ready(&target, targv);
	char *dir = h_tmpdir(), *bin = copy_pytop(dir);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *argv[] = {"setpriv", "--reuid=65534", "--regid=65534",
	                      "--clear-groups", "--", bin, "-b", "-p", pid,
	                      NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, RUNTIME_ERROR, "permission denied");
	cr_assert(strstr(p.err.data, "CAP_SYS_PTRACE") ||
	          strstr(p.err.data, "root"),
	          "the message names neither CAP_SYS_PTRACE nor root: %s",
	          p.err.data);
	h_proc_free(&p);
	h_proc_free(&target);
	h_rmtree(dir);
	free(dir), free(bin);
}

Test(cli, command_not_found, .timeout = 20)
{
	const char *argv[] = {h_pytop(), "-b", "--", "/nonexistent/cmd", NULL};
	struct h_proc p;
	run(&p, argv);
	cr_assert_neq(p.status, 0);
	expect_one_error(&p, p.status, "command not found");
	expect_mentions(&p, "/nonexistent/cmd", "command not found");
	h_proc_free(&p);
}

Test(cli, command_not_in_path, .timeout = 20)
{
	const char *argv[] = {h_pytop(), "-b", "--", "pytop-no-such-command",
	                      NULL};
	struct h_proc p;
	run(&p, argv);
	cr_assert_neq(p.status, 0);
	expect_one_error(&p, p.status, "command not in PATH");
	expect_mentions(&p, "pytop-no-such-command", "command not in PATH");
	h_proc_free(&p);
}

/* ---- the options are wrong ---------------------------------------------------- */

struct bad_option {
	const char *opt, *value;
	const char *names[3]; /* the message must mention one of these */
};

static const struct bad_option BAD_OPTIONS[] = {
	{"-r", "0", {"rate", "-r"}},
	{"-r", "-5", {"rate", "-r"}},
	{"-r", "abc", {"rate", "-r"}},
	{"-r", "10001", {"rate", "-r"}},
	{"--rate", "1e9", {"rate", "-r"}},
	{"-d", "0", {"delay", "-d"}},
	{"-d", "-1", {"delay", "-d"}},
	{"-d", "abc", {"delay", "-d"}},
	{"-n", "abc", {"iteration", "-n"}},
	{"-n", "-1", {"iteration", "-n"}},
	{"--duration", "abc", {"duration"}},
	{"-p", "abc", {"pid", "-p"}},
	{"-p", "0", {"pid", "-p"}},
};

static void check_bad_option(const struct bad_option *b)
{
	char self[16], what[64];
	snprintf(self, sizeof self, "%d", (int)getpid());
	snprintf(what, sizeof what, "%s %s", b->opt, b->value);
	/* -p is the option under test or a valid PID (this process, not a
	 * Python): a pytop that accepted the bad value would fail with a
	 * runtime error (1), not a usage error (2). */
	const char *argv[] = {h_pytop(), "-b", b->opt, b->value, "-p", self,
	                      NULL};
	if (strcmp(b->opt, "-p") == 0)
		argv[4] = NULL;
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, USAGE_ERROR, what);
	bool named = false;
	for (size_t i = 0; i < 3 && b->names[i]; i++)
		named = named || strcasestr(p.err.data, b->names[i]) != NULL;
	cr_assert(named, "%s: the message does not name the option: %s", what,
	          p.err.data);
	h_proc_free(&p);
}

Test(cli, bad_option_values, .timeout = 60)
{
	for (size_t i = 0; i < sizeof BAD_OPTIONS / sizeof BAD_OPTIONS[0]; i++)
		check_bad_option(&BAD_OPTIONS[i]);
}

Test(cli, json_without_batch, .timeout = 20)
{
	char self[16];
	snprintf(self, sizeof self, "%d", (int)getpid());
	const char *argv[] = {h_pytop(), "--json", "-p", self, NULL};
	struct h_proc p;
	run(&p, argv);
	expect_one_error(&p, USAGE_ERROR, "--json without --batch");
	expect_mentions(&p, "batch", "--json without --batch");
	h_proc_free(&p);
}

Test(cli, usage_errors, .timeout = 30)
{
	static const char *const cases[][5] = {
		{"-b", NULL},                       /* no target */
		{"-b", "-p", "1", "--", "true"},    /* two targets */
		{"--frobnicate", NULL},             /* unknown option */
		{"-b", "-r", NULL},                 /* missing value */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[7] = {h_pytop()};
		char what[64] = "pytop";
		for (size_t j = 0; j < 5 && cases[i][j]; j++) {
			argv[j + 1] = cases[i][j];
			strncat(what, " ", sizeof what - strlen(what) - 1);
			strncat(what, cases[i][j], sizeof what - strlen(what) - 1);
		}
		struct h_proc p;
		run(&p, argv);
		expect_one_error(&p, USAGE_ERROR, what);
		h_proc_free(&p);
	}
}

/* ---- help and version -------------------------------------------------------- */

Test(cli, help_mentions_every_option, .timeout = 20)
{
	static const char *const options[] = {
		"-p", "-r", "--rate", "-d", "--delay", "-b", "--batch", "-n",
		"--iterations", "--duration", "--json", "--idle", "--no-color",
		"-h", "--help", "-V", "--version", "--demo", NULL};
	const char *argv[] = {h_pytop(), "--help", NULL};
	struct h_proc p;
	run(&p, argv);
	cr_assert_eq(p.status, 0, "--help exit status %d", p.status);
	cr_assert_str_empty(p.err.data, "--help wrote to stderr: %s",
	                    p.err.data);
	for (size_t i = 0; options[i]; i++)
		cr_assert_not_null(strstr(p.out.data, options[i]),
		                   "--help does not mention %s", options[i]);
	h_proc_free(&p);

	const char *short_argv[] = {h_pytop(), "-h", NULL};
	run(&p, short_argv);
	cr_assert_eq(p.status, 0);
	cr_assert_not_null(strstr(p.out.data, "--rate"), "-h prints no help");
	h_proc_free(&p);
}

Test(cli, version, .timeout = 20)
{
	static const char *const flags[] = {"-V", "--version", NULL};
	for (size_t i = 0; flags[i]; i++) {
		const char *argv[] = {h_pytop(), flags[i], NULL};
		struct h_proc p;
		run(&p, argv);
		cr_assert_eq(p.status, 0, "%s exit status %d", flags[i], p.status);
		cr_assert_not_null(strstr(p.out.data, "pytop"), "%s: %s",
		                   flags[i], p.out.data);
#ifdef PACKAGE_VERSION
		cr_assert_not_null(strstr(p.out.data, PACKAGE_VERSION),
		                   "%s does not print %s: %s", flags[i],
		                   PACKAGE_VERSION, p.out.data);
#endif
		h_proc_free(&p);
	}
}

/* ---- no terminal, dying targets ------------------------------------------------- */

/* A pure-Python busy loop in a function with a findable name. */
#define BUSY_PROGRAM(seconds, ending)                                        \
	"import os, time\n"                                                   \
	"def spin_here(budget):\n"                                            \
	"    end = time.perf_counter() + budget\n"                            \
	"    while time.perf_counter() < end:\n"                              \
	"        pass\n"                                                      \
	"spin_here(" seconds ")\n" ending

Test(cli, stdout_not_a_terminal_falls_back_to_batch, .timeout = 30)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = {h_pytop(), "-d", "0.2", "--", py, "-c",
	                      BUSY_PROGRAM("0.6", ""), NULL};
	struct h_proc p;
	run(&p, argv);
	cr_assert(p.exited && !p.timed_out, "pytop hung");
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status,
	             p.err.data);
	cr_assert_not_null(strstr(p.out.data, "spin_here"),
	                   "no batch output with the hot function on stdout:\n%s",
	                   p.out.data);
	cr_assert_null(strstr(p.out.data, "\033["),
	               "terminal escape sequences in the fallback output");
	cr_assert_eq(h_count_lines(p.err.data), 1, "expected one note on "
	             "stderr, got:\n%s", p.err.data);
	cr_assert_eq(strncmp(p.err.data, "pytop: ", 7), 0, "note: %s",
	             p.err.data);
	h_proc_free(&p);
}

/* Every snapshot's "time_us" is the Unix time of its window's end: within
 * the run, and "elapsed" after one start moment. */
static void expect_unix_times(json_t *lines, struct timespec t0, struct timespec t1)
{
	double from = (double)t0.tv_sec + t0.tv_nsec / 1e9;
	double to = (double)t1.tv_sec + t1.tv_nsec / 1e9;
	double start = 0;
	size_t i;
	json_t *snap;
	json_array_foreach(lines, i, snap) {
		double t = h_num(snap, "time_us") / 1e6, e = h_num(snap, "elapsed");
		cr_assert(t >= from && t <= to, "snapshot %zu: time %.3f outside "
		          "the run, %.3f to %.3f", i, t, from, to);
		if (i == 0)
			start = t - e;
		cr_assert_leq(fabs(t - e - start), 0.001, "snapshot %zu: time "
		              "%.3f, elapsed %.3f, started at %.3f", i, t, e, start);
	}
}

/* Launch a program that stops dead after 1 s (or runs exec: then pytop
 * must say so, keep what it had, and end with the new program); the
 * figures survive. */
static void launch_dies(const char *ending, int status, bool execs)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char prog[512];
	snprintf(prog, sizeof prog, "%s", BUSY_PROGRAM("1.0", "") );
	strncat(prog, ending, sizeof prog - strlen(prog) - 1);
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.3", "--", py,
	                      "-c", prog, NULL};
	struct h_proc p;
	struct timespec t0, t1;
	clock_gettime(CLOCK_REALTIME, &t0);
	run(&p, argv);
	clock_gettime(CLOCK_REALTIME, &t1);
	cr_assert(p.exited && !p.timed_out, "pytop hung");
	cr_assert_eq(p.status, status, "exit status %d, the target's %d; "
	             "stderr: %s", p.status, status, p.err.data);
	int bad = 0;
	json_t *lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(lines, "line %d is not JSON:\n%s", bad, p.out.data);
	cr_assert_gt(json_array_size(lines), 0, "no output; stderr: %s",
	             p.err.data);
	json_t *last = json_array_get(lines, json_array_size(lines) - 1);
	expect_unix_times(lines, t0, t1);
	cr_assert(json_is_true(json_object_get(last, "exited")));
	cr_assert_eq(h_num(last, "exit_status"), status);
	cr_assert_eq(json_is_true(json_object_get(last, "exec")), execs,
	             "\"exec\" is not %s", execs ? "true" : "false");
	cr_assert_gt(h_num(last, "samples"), 500,
	             "the figures collected before the end are lost: %.0f "
	             "samples", h_num(last, "samples"));
	cr_assert_gt(h_own_pct(last, "spin_here"), 80.0,
	             "spin_here own %.1f%%", h_own_pct(last, "spin_here"));
	json_decref(lines);
	h_proc_free(&p);
}

Test(cli, target_exits_abruptly, .timeout = 30)
{
	launch_dies("os._exit(0)\n", 0, false);
}

Test(cli, target_exits_abruptly_with_status, .timeout = 30)
{
	launch_dies("os._exit(7)\n", 7, false);
}

static bool ended(pid_t pid)
{
	return h_proc_state(pid) == 0 || h_proc_state(pid) == 'Z';
}

/* pid must end within 5 s of pytop; it is killed either way, so that a
 * failure leaves nothing running. */
static void expect_ends(pid_t pid, const char *what)
{
	double deadline = h_now() + 5;
	while (!ended(pid) && h_now() < deadline)
		h_sleep(0.05);
	cr_expect(ended(pid), "%s %d still runs (state %c) after pytop ended", what,
	          (int)pid, h_proc_state(pid));
	if (!ended(pid))
		kill(pid, SIGKILL);
}

/* Quitting in launch mode stops the program's children too: a pool's
 * workers must not be left orphaned, waiting for a parent that is gone. */
Test(cli, quit_stops_the_programs_children, .timeout = 30)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *dir = h_tmpdir(), *pids = h_path(dir, "pids");
	char prog[1024];
	snprintf(prog, sizeof prog,
	         "import multiprocessing as mp, os, time\n"
	         "def work(path):\n"
	         "    with open(path, 'a') as f: f.write('%%d\\n' %% os.getpid())\n"
	         "    time.sleep(60)\n"
	         "if __name__ == '__main__':\n"
	         "    with mp.Pool(2) as p: p.map(work, ['%s', '%s'], chunksize=1)\n",
	         pids, pids);
	const char *argv[] = {h_pytop(), "-b", "-n", "3", "-d", "0.5", "--", py, "-c", prog, NULL};
	struct h_proc p;
	run(&p, argv);
	cr_assert(p.exited && !p.timed_out, "pytop hung");
	char *text = h_read_file(pids);
	cr_assert_not_null(text, "the workers never started");
	int workers = 0;
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		expect_ends((pid_t)atoi(line), "worker");
		workers++;
	}
	cr_expect_eq(workers, 2, "%d workers started", workers);
	free(text);
	h_proc_free(&p);
	h_rmtree(dir);
	free(dir), free(pids);
}

/* pytop -b ... | head: when the reader goes away pytop ends as if its
 * time were up (not killed by SIGPIPE), and stops the program it
 * launched instead of leaving it running. */
Test(cli, closed_output_ends_pytop_and_its_program, .timeout = 30)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *dir = h_tmpdir(), *pidfile = h_path(dir, "pid");
	char prog[512];
	snprintf(prog, sizeof prog,
	         "import os, time\n"
	         "open('%s', 'w').write(str(os.getpid()))\n"
	         "while True: time.sleep(0.01)\n", pidfile);
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.2", "--", py, "-c", prog, NULL};
	struct h_proc p;
	cr_assert(h_proc_start(&p, argv));
	cr_assert(h_proc_wait_stdout(&p, "\"elapsed\"", 15), "no JSON line: %s", p.err.data);
	cr_assert(h_proc_wait_file(&p, pidfile, 10), "the program never started");
	char *text = h_read_file(pidfile);
	pid_t prog_pid = text != NULL ? (pid_t)atoi(text) : 0;
	cr_assert_gt(prog_pid, 0);
	close(p.out_fd);
	p.out_fd = -1;
	cr_assert(h_proc_finish(&p, 10) && !p.timed_out, "pytop kept running after "
	          "its output was closed");
	cr_expect_neq(p.status, 128 + SIGPIPE, "pytop was killed by SIGPIPE");
	expect_ends(prog_pid, "the launched program");
	free(text);
	h_proc_free(&p);
	h_rmtree(dir);
	free(dir), free(pidfile);
}

Test(cli, target_runs_exec, .timeout = 30)
{
	launch_dies("os.execv('/bin/sleep', ['sleep', '0.5'])\n", 0, true);
}

Test(cli, attached_target_dies, .timeout = 30)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *targv[] = {py, "-c",
	                       "print('ready', flush=True)\n"
	                       BUSY_PROGRAM("1.0", "os._exit(0)\n"), NULL};
	struct h_proc target;
	start_ready(&target, targv);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.3", "-p", pid,
	                      NULL};
	struct h_proc p;
	cr_assert(h_proc_start(&p, argv));
	/* Reap the target as soon as it dies, as a parent would. */
	h_proc_finish(&target, 10);
	h_proc_finish(&p, 10);
	cr_assert(p.exited && !p.timed_out, "pytop hung after its target died");
	cr_assert_lt(p.status, 128, "pytop died of signal %d", p.status - 128);
	json_t *lines = h_json_lines(p.out.data, NULL);
	cr_assert(lines && json_array_size(lines) > 0, "no output; stderr: %s",
	          p.err.data);
	json_t *last = json_array_get(lines, json_array_size(lines) - 1);
	cr_assert(json_is_true(json_object_get(last, "exited")),
	          "the last refresh does not say the target is gone");
	cr_assert_gt(h_num(last, "samples"), 300, "samples %.0f",
	             h_num(last, "samples"));
	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&target);
}

/* ---- stopping pytop leaves an attached target as it was ---------------------------- */

static void interrupt_attached(int sig)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *wl = h_workload("cpu_split.py");
	const char *targv[] = {py, wl, "--seconds", "30", NULL};
	struct h_proc target;
	start_ready(&target, targv);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.2", "-p", pid,
	                      NULL};
	struct h_proc p;
	cr_assert(h_proc_start(&p, argv));
	cr_assert(h_proc_wait_stdout(&p, "\n", 10), "no output: %s",
	          p.err.data);
	h_proc_signal(&p, sig);
	h_proc_pump(&p, 3);
	cr_assert(p.exited, "pytop ignores signal %d", sig);
	cr_assert_lt(p.status, 128 + 64);
	char st = h_proc_state(target.pid);
	cr_assert(st == 'R' || st == 'S', "target left in state %c", st);
	cr_assert_eq(h_tracer_pid(target.pid), 0, "target left traced");
	h_proc_free(&p);
	h_proc_free(&target);
	free(wl);
}

Test(cli, sigint_leaves_target_running, .timeout = 30)
{
	interrupt_attached(SIGINT);
}

Test(cli, sigterm_leaves_target_running, .timeout = 30)
{
	interrupt_attached(SIGTERM);
}

/* ---- -n and --duration ---------------------------------------------------------------- */

Test(cli, iterations_and_duration, .timeout = 30)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *targv[] = {py, "-c", SLEEPY, NULL};
	struct h_proc target;
	start_ready(&target, targv);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target.pid);

	const char *argv_n[] = {h_pytop(), "-b", "--json", "-d", "0.2", "-n",
	                        "3", "-p", pid, NULL};
	struct h_proc p;
	run(&p, argv_n);
	cr_assert_eq(p.status, 0, "-n 3: exit %d: %s", p.status, p.err.data);
	json_t *lines = h_json_lines(p.out.data, NULL);
	cr_assert_not_null(lines);
	cr_assert_eq(json_array_size(lines), 3, "-n 3 printed %zu refreshes",
	             json_array_size(lines));
	json_decref(lines);
	h_proc_free(&p);

	const char *argv_d[] = {h_pytop(), "-b", "--json", "-d", "0.25",
	                        "--duration", "1", "-p", pid, NULL};
	run(&p, argv_d);
	cr_assert_eq(p.status, 0, "--duration: exit %d: %s", p.status,
	             p.err.data);
	cr_assert(p.seconds >= 0.9 && p.seconds < 3.0,
	          "--duration 1 ran %.2f s", p.seconds);
	lines = h_json_lines(p.out.data, NULL);
	cr_assert(lines && json_array_size(lines) >= 3,
	          "--duration 1 -d 0.25 printed %zu refreshes",
	          lines ? json_array_size(lines) : 0);
	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&target);
}
