/* test_harm_seccomp.c - pytop runs under its seccomp filter (src/sandbox.c)
 * in every mode, and the processes it profiles never do.
 *
 * In each mode (batch and JSON, TUI under tmux, --native (perf), --native-ptrace, -s; launch and
 * attach) every thread of the running pytop must show "Seccomp: 2" (a
 * filter) in /proc/PID/task/TID/status, with at least its sampler thread
 * besides the main one (and the follower with -s), and the profiled
 * program "Seccomp: 0": the launched one, the attached one, and a child
 * the program starts after pytop's filter is on.  Each run also shows
 * that pytop still samples under the filter (--native-ptrace: native frames, and
 * the target left running).
 *
 * kernel_refuses_filter: where the kernel refuses the filter, pytop says
 * so in one warning line and profiles without it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define WAIT_S 10.0     /* for the filter, a ready file, a child */
#define RUN_TIMEOUT_S 30.0
#define TMUX_LIFETIME_S 60

/* The Seccomp: field of a status file: 0 none, 2 filter; -1 unreadable. */
static int seccomp_field(const char *status_path)
{
	FILE *f = fopen(status_path, "r");
	char line[256];
	int mode = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* How many of pid's threads are in each Seccomp mode (index 0..2); the
 * total, 0 if the process is gone. */
static int thread_modes(pid_t pid, int modes[3])
{
	char dir[64], path[512];
	struct dirent *e;
	int total = 0;

	modes[0] = modes[1] = modes[2] = 0;
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
		int m = seccomp_field(path);
		if (m < 0 || m > 2)
			continue; /* the thread just ended */
		modes[m]++;
		total++;
	}
	closedir(d);
	return total;
}

/* Wait until pytop runs at least min_threads threads, all filtered. */
static void expect_filtered(pid_t pytop, int min_threads, const char *mode)
{
	double deadline = h_now() + WAIT_S;
	int modes[3], total;

	do {
		total = thread_modes(pytop, modes);
		if (total >= min_threads && modes[2] == total)
			return;
		h_sleep(0.02);
	} while (h_now() < deadline);
	cr_assert_fail("%s: pytop %d runs %d threads, %d under a seccomp filter "
	               "(Seccomp: 2), %d without; all of at least %d expected",
	               mode, (int)pytop, total, modes[2], modes[0] + modes[1], min_threads);
}

static void expect_unfiltered(pid_t pid, const char *who)
{
	int modes[3], total = thread_modes(pid, modes);

	cr_assert_gt(total, 0, "%s (%d) is gone before it could be checked", who, (int)pid);
	cr_assert_eq(modes[0], total, "%s (%d) inherited pytop's seccomp filter: "
	             "%d of its %d threads are under one", who, (int)pid,
	             total - modes[0], total);
}

/* The PID a workload wrote into its ready file, once a patient wait for
 * it (h_proc_wait_file, h_tmux_wait_file: starved at nice 19, a plain
 * 10 s failed launch_tui in a CI run) said whether it appeared.  `seen`
 * is shown when it did not: the stderr or screen of what should have
 * written it, which tells why (a workload not found, a refused start). */
static pid_t pid_in_file(bool appeared, const char *path, const char *seen)
{
	cr_assert(appeared, "%s never appeared; what the process wrote or showed: %s", path,
	          seen != NULL && *seen != '\0' ? seen : "(nothing)");
	char *text = h_read_file(path);
	pid_t pid = text != NULL ? (pid_t)atoi(text) : 0;
	free(text);
	cr_assert_gt(pid, 0, "no PID in %s", path);
	return pid;
}

/* The same for a file p's programs write, with p's stderr. */
static pid_t pid_from(struct h_proc *p, const char *path)
{
	bool appeared = h_proc_wait_file(p, path, WAIT_S);

	return pid_in_file(appeared, path, p->err.data);
}

static void expect_finished(struct h_proc *p, const char *needle)
{
	cr_assert(h_proc_finish(p, RUN_TIMEOUT_S), "pytop did not finish; stderr: %s",
	          p->err.data ? p->err.data : "");
	cr_assert_eq(p->status, 0, "pytop exited %d; stderr: %s", p->status,
	             p->err.data ? p->err.data : "");
	cr_assert_null(p->err.data ? strstr(p->err.data, "seccomp") : NULL,
	               "pytop warned: %s", p->err.data);
	cr_assert_not_null(p->out.data ? strstr(p->out.data, needle) : NULL,
	                   "no %s in pytop's output under the filter:\n%s", needle,
	                   p->out.data ? p->out.data : "");
}

static char *g_dir;

static void cleanup(void)
{
	if (g_dir != NULL)
		h_rmtree(g_dir);
	free(g_dir);
	g_dir = NULL;
}

TestSuite(harm_seccomp, .fini = cleanup);

/* A target started by the test, for attach mode. */
static pid_t start_target(struct h_proc *t, const char *ready)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *wl = h_workload("threads.py");
	const char *argv[] = { py, wl, "--seconds", "6", "--ready-file", ready, NULL };

	cr_assert(h_proc_start(t, argv));
	free(wl);
	return pid_from(t, ready);
}

Test(harm_seccomp, launch_batch)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *wl = h_workload("threads.py");
	g_dir = h_tmpdir();
	char *ready = h_path(g_dir, "ready");
	const char *argv[] = { h_pytop(), "-b", "-r", "200", "-d", "0.5", "--", py, wl,
	                       "--seconds", "1.5", "--ready-file", ready, NULL };
	struct h_proc p;

	cr_assert(h_proc_start(&p, argv));
	pid_t program = pid_from(&p, ready);
	expect_filtered(p.pid, 2, "launch, batch");
	expect_unfiltered(program, "the launched program");
	expect_finished(&p, "burn_");
	h_proc_free(&p);
	free(wl), free(ready);
}

/* pytop -b MODE -p (a running threads.py): every pytop thread filtered, the
 * target not, and pytop's output holds `expect`.  The target is returned
 * still running, for further checks; the caller frees it. */
static pid_t attach_filtered(struct h_proc *t, const char *mode, const char *what,
                             const char *expect)
{
	g_dir = h_tmpdir();
	char *ready = h_path(g_dir, "ready");
	struct h_proc p;
	pid_t target = start_target(t, ready);
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)target);
	const char *argv[] = { h_pytop(), "-b", mode, "-r", "200", "-d", "0.5", "-n", "3",
	                       "-p", pid, NULL };

	cr_assert(h_proc_start(&p, argv));
	expect_filtered(p.pid, 2, what);
	expect_unfiltered(target, "the attached program");
	expect_finished(&p, expect);
	h_proc_free(&p);
	free(ready);
	return target;
}

Test(harm_seccomp, attach_json)
{
	struct h_proc t;

	attach_filtered(&t, "--json", "attach, JSON", "\"functions\"");
	h_proc_free(&t);
}

Test(harm_seccomp, attach_native)
{
	struct h_proc t;
	/* Seize, interrupt, read registers, detach: all still allowed. */
	pid_t target = attach_filtered(&t, "--native-ptrace", "attach, --native-ptrace", "[native]");
	char st = h_proc_state(target);

	cr_assert(st != 'T' && st != 't', "pytop --native-ptrace left its target stopped (%c)", st);
	h_proc_free(&t);
}

Test(harm_seccomp, attach_native_perf)
{
	struct h_proc t;
	/* A perf event per thread and CPU, inherited, the CPUs' rings mapped:
	 * the filter allows that much (refused, pytop would fall back to
	 * ptrace and say so in its header). */
	attach_filtered(&t, "--native", "attach, --native", "native: perf");
	h_proc_free(&t);
}

/* The launched program starts a child once told to (file "go"), so the
 * child certainly starts after pytop's filter is on. */
static const char family_py[] =
	"import os, subprocess, sys, time\n"
	"d = sys.argv[1]\n"
	"def put(name, text):\n"
	"    open(d + '/' + name + '.tmp', 'w').write(text)\n"
	"    os.rename(d + '/' + name + '.tmp', d + '/' + name)\n"
	"put('ready', str(os.getpid()))\n"
	"while not os.path.exists(d + '/go'):\n"
	"    time.sleep(0.01)\n"
	"c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
	"put('child', str(c.pid))\n"
	"while not os.path.exists(d + '/done'):\n"
	"    time.sleep(0.01)\n"
	"c.kill()\n"
	"c.wait()\n";

Test(harm_seccomp, launch_subprocesses)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	g_dir = h_tmpdir();
	char *ready = h_path(g_dir, "ready"), *go = h_path(g_dir, "go");
	char *child = h_path(g_dir, "child"), *done = h_path(g_dir, "done");
	const char *argv[] = { h_pytop(), "-b", "-s", "-r", "200", "-d", "0.3", "--", py, "-c",
	                       family_py, g_dir, NULL };
	struct h_proc p;

	cr_assert(h_proc_start(&p, argv));
	pid_t program = pid_from(&p, ready);
	expect_filtered(p.pid, 3, "launch, -s"); /* main, sampler, follower */
	expect_unfiltered(program, "the launched program");
	FILE *f = fopen(go, "w");
	cr_assert_not_null(f);
	fclose(f);
	expect_unfiltered(pid_from(&p, child),
	                  "a child started after pytop's filter");
	f = fopen(done, "w");
	cr_assert_not_null(f);
	fclose(f);
	expect_finished(&p, "procs ");
	h_proc_free(&p);
	free(ready), free(go), free(child), free(done);
}

Test(harm_seccomp, launch_tui)
{
	h_need_program("tmux");
	const char *py = h_need_python(H_PY_DEBIAN);
	char *wl = h_workload("threads.py");
	g_dir = h_tmpdir();
	char *ready = h_path(g_dir, "ready"), *script = h_path(g_dir, "run.sh");
	struct h_tmux tmux = { 0 };
	FILE *f = fopen(script, "w");

	cr_assert_not_null(f);
	fprintf(f, "exec '%s' -r 200 -d 0.5 -- '%s' '%s' --seconds 20 --ready-file '%s'\n",
	        h_pytop(), py, wl, ready);
	fclose(f);
	cr_assert(h_tmux_start(&tmux, 100, 30, script, TMUX_LIFETIME_S), "cannot start tmux");
	bool appeared = h_tmux_wait_file(&tmux, ready, WAIT_S);
	char *shown = appeared ? NULL : h_tmux_capture(&tmux);
	pid_t program = pid_in_file(appeared, ready, shown);
	free(shown);
	pid_t pytop = h_tmux_pane_pid(&tmux); /* the script exec'd pytop */
	char *screen = h_tmux_wait_for(&tmux, "burn_", WAIT_S, NULL);

	cr_assert_not_null(screen, "the TUI shows no samples under the filter");
	free(screen);
	expect_filtered(pytop, 2, "launch, TUI");
	expect_unfiltered(program, "the launched program");
	const char *quit[] = { "q", NULL };
	h_tmux_keys(&tmux, quit);
	h_tmux_kill(&tmux);
	free(wl), free(ready), free(script);
}

/* ---- a kernel that refuses the filter ----------------------------------- */

/* In the child, before exec: seccomp(2) answers ENOSYS and
 * prctl(PR_SET_SECCOMP) EINVAL, as on a kernel without seccomp filters. */
static void pretend_no_seccomp(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof code / sizeof code[0], code };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		_exit(125);
}

static int run_without_seccomp(const char *const argv[], const char *out, const char *err)
{
	int status;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(in, 0) < 0)
			_exit(126);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pretend_no_seccomp();
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(harm_seccomp, kernel_refuses_filter, .timeout = RUN_TIMEOUT_S)
{
#ifndef __x86_64__
	cr_skip_test("the pretend filter is written for x86_64, pytop's platform");
#endif
	const char *py = h_need_python(H_PY_DEBIAN);
	g_dir = h_tmpdir();
	char *out = h_path(g_dir, "out"), *err = h_path(g_dir, "err");
	const char *argv[] = { h_pytop(), "-b", "-r", "200", "-d", "0.5", "--", py, "-c",
	                       "import time\nt = time.time()\nwhile time.time() - t < 1: pass",
	                       NULL };
	int rc = run_without_seccomp(argv, out, err);
	char *o = h_read_file(out), *e = h_read_file(err);

	cr_assert_eq(rc, 0, "pytop exited %d without seccomp; stderr:\n%s", rc, e ? e : "");
	cr_assert_not_null(e);
	const char *w = strstr(e, "pytop: warning: cannot install the seccomp filter");
	cr_assert_not_null(w, "no warning that the filter is off; stderr:\n%s", e);
	cr_assert_null(strstr(w + 1, "pytop: warning:"), "warned more than once:\n%s", e);
	cr_assert_not_null(strstr(w, "CONFIG_SECCOMP_FILTER"), "the warning names no fix: %s", w);
	cr_assert(o != NULL && strstr(o, "<module>") != NULL,
	          "pytop did not profile without its filter:\n%s", o ? o : "");
	free(o), free(e), free(out), free(err);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
