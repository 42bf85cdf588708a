/* test_sandbox.c - the seccomp filter of src/sandbox.c bites: each test
 * forks, installs the filter in the child (never in Criterion's worker),
 * and checks there that what pytop must never do fails with EPERM while
 * what it needs still works.  The child reports the first check that
 * failed through a pipe.
 *
 * Sanitizer builds leave PTRACE_ATTACH/CONT, exec and new processes
 * allowed (LeakSanitizer and the symbolizer use them, see src/sandbox.c);
 * the checks of those run in the other builds only. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

static int g_report = -1; /* the child's end of the pipe */

/* In the child: say what failed and end. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n > 0 && write(g_report, line, strlen(line)) < 0)
		_exit(3);
	_exit(1);
}

/* The call returned -1 with EPERM, as the filter makes it. */
static void expect_eperm(long rc, const char *what)
{
	if (rc != -1 || errno != EPERM)
		fail("%s returned %ld (%s) under the filter; EPERM expected", what, rc,
		     rc == -1 ? strerror(errno) : "no error");
}

static void install_for(pid_t attached)
{
	struct pytop_error err = { 0 };

	if (sandbox_install(attached, &err) != 0)
		fail("sandbox_install failed: %s", err.text);
}

static void install(void)
{
	install_for(0);
}

/* Run body in a child; the test fails with the child's own words. */
static void in_child(void (*body)(void))
{
	int p[2];
	char why[512] = "";
	int status = 0;

	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		g_report = p[1];
		body();
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], why, sizeof why - 1);
	close(p[0]);
	why[n > 0 ? n : 0] = '\0';
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	          "child: %s (status 0x%x)", why[0] ? why : "died", status);
}

static long seccomp_mode_of(const char *status_path)
{
	FILE *f = fopen(status_path, "r");
	char line[256];
	long mode = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Seccomp: %ld", &mode) == 1)
			break;
	fclose(f);
	return mode;
}

/* ---- process_vm_writev refused, process_vm_readv kept ------------------ */

static void writes_refused_reads_kept(void)
{
	static volatile long word = 1;
	long value = 2, got = 0;
	struct iovec local = { &value, sizeof value }, remote = { (void *)&word, sizeof word };
	struct iovec into = { &got, sizeof got };

	/* Without the filter the same write works: the EPERM below is the
	 * filter's, not the kernel's permission check. */
	if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) != sizeof value || word != 2)
		fail("process_vm_writev does not work even without the filter: %s", strerror(errno));
	install();
	value = 3;
	expect_eperm(process_vm_writev(getpid(), &local, 1, &remote, 1, 0), "process_vm_writev");
	if (word != 2)
		fail("process_vm_writev changed memory under the filter (%ld)", word);
	if (process_vm_readv(getpid(), &into, 1, &remote, 1, 0) != sizeof got || got != 2)
		fail("process_vm_readv no longer reads under the filter: %s", strerror(errno));
	if (seccomp_mode_of("/proc/self/status") != 2)
		fail("/proc/self/status does not say Seccomp: 2");
}

Test(sandbox, process_vm_writev_refused_readv_kept)
{
	in_child(writes_refused_reads_kept);
}

/* ---- ptrace: the --native cycle works, every change is refused ---------- */

static volatile long g_marker = 0x5eed;

static char state_of(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *rp = strrchr(buf, ')');
	return rp != NULL && rp[1] == ' ' ? rp[2] : 0;
}

/* Seize and stop `tracee` the way src/sampler/native_unwind.c does. */
static void seize_stopped(pid_t tracee)
{
	int st;

	if (ptrace(PTRACE_SEIZE, tracee, NULL, NULL) != 0)
		fail("PTRACE_SEIZE refused: %s", strerror(errno));
	if (ptrace(PTRACE_INTERRUPT, tracee, NULL, NULL) != 0)
		fail("PTRACE_INTERRUPT refused: %s", strerror(errno));
	if (waitpid(tracee, &st, __WALL) != tracee || !WIFSTOPPED(st))
		fail("the tracee did not stop");
}

static void refused_requests(pid_t tracee, const struct user_regs_struct *regs)
{
	static const struct { long req; const char *name; } writes[] = {
		{ PTRACE_POKETEXT, "PTRACE_POKETEXT" }, { PTRACE_POKEUSER, "PTRACE_POKEUSER" },
		{ PTRACE_SETFPREGS, "PTRACE_SETFPREGS" }, { PTRACE_SETREGSET, "PTRACE_SETREGSET" },
		{ PTRACE_SETSIGINFO, "PTRACE_SETSIGINFO" }, { PTRACE_SETOPTIONS, "PTRACE_SETOPTIONS" },
		{ PTRACE_SETSIGMASK, "PTRACE_SETSIGMASK" }, { PTRACE_SYSCALL, "PTRACE_SYSCALL" },
		{ PTRACE_SINGLESTEP, "PTRACE_SINGLESTEP" }, { PTRACE_KILL, "PTRACE_KILL" },
		{ PTRACE_TRACEME, "PTRACE_TRACEME" },
		{ 0x4300, "an unknown request 0x4300" }, { -1, "request -1" },
#ifndef PYTOP_SANITIZED
		{ PTRACE_CONT, "PTRACE_CONT" },
#endif
	};

	/* Their arguments are harmless (0, or the registers just read), so
	 * nothing but the filter would make these fail with EPERM. */
	expect_eperm(ptrace(PTRACE_POKEDATA, tracee, (void *)&g_marker, (void *)0xbad),
	             "PTRACE_POKEDATA");
	expect_eperm(ptrace(PTRACE_SETREGS, tracee, NULL, regs), "PTRACE_SETREGS");
	for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
		expect_eperm(ptrace((enum __ptrace_request)writes[i].req, tracee, NULL, NULL),
		             writes[i].name);
}

static pid_t idle_child(void)
{
	pid_t pid = fork();

	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		/* Dies with the checking child, and does not hold the report
		 * pipe open after it: a failed check ends the test at once. */
		close(g_report);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

/* PTRACE_ATTACH stops its tracee with SIGSTOP: refused (on a process
 * nobody traces, where it would succeed without the filter). */
static void attach_refused(pid_t bystander)
{
#ifndef PYTOP_SANITIZED
	long rc = ptrace(PTRACE_ATTACH, bystander, NULL, NULL);
	int e = errno;

	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
	errno = e;
	expect_eperm(rc, "PTRACE_ATTACH");
#else
	kill(bystander, SIGKILL);
	waitpid(bystander, NULL, 0);
#endif
}

static void ptrace_cycle(void)
{
	struct user_regs_struct regs;
	pid_t tracee = idle_child(), bystander = idle_child();

	install();
	attach_refused(bystander);
	seize_stopped(tracee);
	errno = 0;
	long word = ptrace(PTRACE_PEEKDATA, tracee, (void *)&g_marker, NULL);
	if (errno != 0 || word != 0x5eed)
		fail("PTRACE_PEEKDATA under the filter: %ld (%s)", word, strerror(errno));
	if (ptrace(PTRACE_GETREGS, tracee, NULL, &regs) != 0)
		fail("PTRACE_GETREGS refused: %s", strerror(errno));
	refused_requests(tracee, &regs);
	errno = 0;
	if (ptrace(PTRACE_PEEKDATA, tracee, (void *)&g_marker, NULL) != 0x5eed)
		fail("the tracee's memory changed under the filter");
	if (ptrace(PTRACE_DETACH, tracee, NULL, NULL) != 0)
		fail("PTRACE_DETACH refused: %s", strerror(errno));
	for (int i = 0; i < 100 && (state_of(tracee) == 't' || state_of(tracee) == 'T'); i++)
		usleep(10000);
	char st = state_of(tracee);
	kill(tracee, SIGKILL);
	waitpid(tracee, NULL, 0);
	if (st == 't' || st == 'T')
		fail("the tracee was left stopped (state %c)", st);
}

Test(sandbox, ptrace_reads_and_releases_but_never_writes)
{
	in_child(ptrace_cycle);
}

/* ---- every thread, threads kept, processes and programs refused -------- */

static void *write_from_thread(void *arg)
{
	long value = 1, word = 0;
	struct iovec local = { &value, sizeof value }, remote = { &word, sizeof word };

	*(long *)arg = seccomp_mode_of("/proc/thread-self/status") == 2 &&
	               process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == -1 &&
	               errno == EPERM;
	return NULL;
}

static void *wait_then_write(void *arg)
{
	pthread_barrier_t *b = ((void **)arg)[0];

	pthread_barrier_wait(b); /* the filter is installed meanwhile */
	return write_from_thread(((void **)arg)[1]);
}

static void threads_and_processes(void)
{
	pthread_barrier_t b;
	pthread_t before, after;
	long ok_before = 0, ok_after = 0;
	void *args[] = { &b, &ok_before };

	pthread_barrier_init(&b, NULL, 2);
	if (pthread_create(&before, NULL, wait_then_write, args) != 0)
		fail("pthread_create before the filter failed");
	install();
	pthread_barrier_wait(&b);
	pthread_join(before, NULL);
	if (!ok_before)
		fail("a thread started before the filter is not under it (TSYNC)");
	if (pthread_create(&after, NULL, write_from_thread, &ok_after) != 0)
		fail("pthread_create under the filter failed: pytop's threads could not start");
	pthread_join(after, NULL);
	if (!ok_after)
		fail("a thread started under the filter is not under it");
	/* unshare(0) changes nothing and succeeds without the filter. */
	expect_eperm(unshare(0), "unshare(0)");
#ifndef PYTOP_SANITIZED
	char *const argv[] = { (char *)"/bin/true", NULL };
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	expect_eperm(pid, "fork");
	expect_eperm(execv(argv[0], argv), "execv");
#endif
}

Test(sandbox, every_thread_filtered_threads_start_processes_do_not)
{
	in_child(threads_and_processes);
}

/* ---- signals: never to an attached target, never to everyone ------------ */

static void attached_never_signalled(void)
{
	pid_t target = idle_child(), other = idle_child();
	union sigval v = { 0 };

	install_for(target);
	expect_eperm(kill(target, SIGTERM), "kill(target, SIGTERM)");
	expect_eperm(kill(-target, SIGTERM), "kill(-target, SIGTERM)");
	expect_eperm(syscall(SYS_tkill, target, SIGTERM), "tkill(target, SIGTERM)");
	expect_eperm(syscall(SYS_tgkill, target, target, SIGKILL), "tgkill(target, SIGKILL)");
	expect_eperm(sigqueue(target, SIGTERM, v), "sigqueue(target, SIGTERM)");
	/* Whether it lives is still asked with signal 0. */
	if (kill(target, 0) != 0)
		fail("kill(target, 0) refused under the filter: %s", strerror(errno));
	usleep(20000); /* time for a signal that got through to end it */
	char st = state_of(target);
	if (st == 'Z' || st == 0)
		fail("the attached target was ended (state %c)", st ? st : '-');
	/* Another process (as the launched program is) can still be ended. */
	if (kill(other, SIGKILL) != 0 || waitpid(other, NULL, 0) != other)
		fail("kill(other process, SIGKILL) refused: %s", strerror(errno));
}

Test(sandbox, attached_target_never_signalled)
{
	in_child(attached_never_signalled);
}

/* As an unprivileged user nobody runs as, kill(-1) may signal no process
 * at all (the kernel then still returns 0), so the check harms nothing
 * even where the filter is missing. */
#define LONELY_ID 54321

static void everyone_never_signalled(void)
{
	if (setgid(LONELY_ID) != 0 || setuid(LONELY_ID) != 0)
		fail("cannot become user %d: %s", LONELY_ID, strerror(errno));
	install();
	expect_eperm(kill(-1, SIGTERM), "kill(-1, SIGTERM)");
}

Test(sandbox, signal_to_every_process_refused)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to become an unused user safely");
	in_child(everyone_never_signalled);
}
