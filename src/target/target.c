/* target.c - attaching to or launching the target, noticing its exit,
 * reaping it and its exit status (target.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "target/crash_stop.h"
#include "target/proc_children.h"
#include "target/safe_create.h"
#include "target/proc_threads.h"

static void read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int fd;
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n - 1; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
}

/* Whether pid's /proc entry can be read at all (hidepid may hide it). */
static bool access_stat(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return access(path, R_OK) == 0;
}

int target_attach(pid_t pid, struct target *t, struct pytop_error *err)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		error_set(err, PYTOP_ERR_NO_PROCESS,
		          "no process with PID %d; check the PID (ps -e | grep python)", (int)pid);
		return -1;
	}
	/* Still in /proc (ps shows it <defunct>), but nothing left to read. */
	if (proc_threads_ended(pid) && access_stat(pid)) {
		error_set(err, PYTOP_ERR_NO_PROCESS,
		          "process %d has already exited (a zombie its parent has not reaped); "
		          "profile a running process", (int)pid);
		return -1;
	}
	read_cmdline(pid, t->command, sizeof(t->command));
	return 0;
}

static void join_argv(char *const argv[], char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv[i] != NULL && used + 1 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(char *const argv[], pid_t parent, int out_fd, int err_fd,
                       int report_fd)
{
	int null = open("/dev/null", O_RDONLY);
	int e;
	struct sigaction dfl;

	/* If pytop dies without stopping it (SIGKILL), the program must not
	 * run on unseen.  The signal comes when the thread that forked exits
	 * (the main thread: the process).  A parent already gone before the
	 * prctl would never send it: then stop here. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);

	/* pytop ignores SIGPIPE; an ignored signal stays ignored across
	 * exec, and the program should get the default. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &dfl, NULL);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	if (out_fd >= 0)
		dup2(out_fd, STDOUT_FILENO);
	if (err_fd >= 0)
		dup2(err_fd, STDERR_FILENO);
	execvp(argv[0], argv);
	e = errno;
	if (write(report_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* TUI mode: the program's output goes to a file nobody else can have
 * prepared (pytop may be root, $TMPDIR shared), or, failing that, nowhere:
 * never onto the screen. */
static int open_output(struct target *t)
{
	const char *dir = getenv("TMPDIR");
	char prefix[32];
	int fd;

	snprintf(prefix, sizeof(prefix), "pytop-%d.", (int)getpid());
	fd = safe_create_private(dir && *dir ? dir : "/tmp", prefix, "output", t->output,
	                         sizeof(t->output),
	                         "set TMPDIR to a short directory you can write to",
	                         &t->output_error);
	if (fd >= 0)
		return fd;
	return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

static int launch_error(char *const argv[], int e, struct pytop_error *err)
{
	if (e == ENOENT)
		error_set(err, PYTOP_ERR_LAUNCH,
		          "command not found: %s; check the name or give its full path", argv[0]);
	else if (e == EACCES)
		error_set(err, PYTOP_ERR_LAUNCH,
		          "cannot execute %s: permission denied; check that it is an executable file",
		          argv[0]);
	else
		error_set(err, PYTOP_ERR_LAUNCH, "cannot start %s: %s", argv[0], strerror(e));
	return -1;
}

static void reaped(struct target *t)
{
	t->exited = true;
	crash_stop_disarm(); /* its PID may name another process now */
}

/* Reap the launched program with wait4, whose resource usage is the only
 * place left to read its final CPU, faults and peak RSS (a zombie has no
 * memory, so /proc no longer has them).  flags: 0 or WNOHANG. */
static bool reap(struct target *t, int flags)
{
	if (wait4(t->pid, &t->wait_status, flags, &t->usage) != t->pid)
		return false;
	t->usage_valid = true;
	reaped(t);
	return true;
}

int target_launch(char *const argv[], bool tui, struct target *t, struct pytop_error *err)
{
	int report[2], out_fd, err_fd, child_errno = 0;
	pid_t parent = getpid();
	ssize_t n;

	memset(t, 0, sizeof(*t));
	t->launched = true;
	join_argv(argv, t->command, sizeof(t->command));
	if (syscall(SYS_gettid) != parent) {
		/* PR_SET_PDEATHSIG fires when the forking thread ends. */
		error_set(err, PYTOP_ERR_INTERNAL, "a program must be launched from the main thread");
		return -1;
	}
	if (pipe2(report, O_CLOEXEC) != 0)
		return launch_error(argv, errno, err);
	out_fd = tui ? open_output(t) : dup(STDERR_FILENO);
	err_fd = tui ? out_fd : -1;
	if (tui && out_fd < 0) {
		error_set(err, PYTOP_ERR_LAUNCH, "cannot open /dev/null for the program's output "
		          "(%s); check that /dev/null exists and is writable", strerror(errno));
		close(report[0]);
		close(report[1]);
		return -1;
	}
	fflush(NULL);
	t->pid = fork();
	if (t->pid < 0) {
		close(report[0]);
		close(report[1]);
		return launch_error(argv, errno, err);
	}
	if (t->pid == 0)
		child_exec(argv, parent, out_fd, err_fd, report[1]);
	crash_stop_arm(t->pid);
	close(report[1]);
	if (out_fd >= 0)
		close(out_fd);
	/* The pipe closes on a successful exec (O_CLOEXEC) or carries errno. */
	do
		n = read(report[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		reap(t, 0);
		return launch_error(argv, child_errno, err);
	}
	return 0;
}

bool target_poll_exit(struct target *t)
{
	if (t->exited)
		return true;
	if (t->launched) {
		/* Peek first: with --native the sampler thread traces the
		 * target for a moment, and a plain wait here (pytop is its
		 * parent) would consume that ptrace stop, leaving it stopped. */
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
			if (errno == ECHILD)
				reaped(t);
			return t->exited;
		}
		if (si.si_pid != t->pid || (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED &&
		                            si.si_code != CLD_DUMPED))
			return false;
		reap(t, WNOHANG);
	} else {
		t->exited = proc_threads_ended(t->pid);
	}
	return t->exited;
}

void target_wait_exit(struct target *t, uint64_t grace_ns)
{
	uint64_t deadline = clock_now_ns() + grace_ns;

	while (!target_poll_exit(t) && clock_now_ns() < deadline)
		clock_sleep_until(clock_now_ns() + 1000000);
	t->exited = true;
}

/* SIGTERM to the launched program, then to its descendants.  They would
 * be orphaned by stopping only the program (a multiprocessing pool's
 * workers wait forever for a parent that is gone); they are found by a
 * /proc scan first, and signalled after the program so that it cannot
 * start replacements. */
static void terminate_family(pid_t root)
{
	struct proc_children *pc = proc_children_new();
	const struct proc_child *fam;
	int n = pc != NULL ? proc_children_scan(pc, root, &fam) : 0;

	kill(root, SIGTERM);
	for (int i = 1; i < n; i++) /* [0] is the root */
		kill(fam[i].pid, SIGTERM);
	proc_children_free(pc);
}

void target_terminate(struct target *t)
{
	uint64_t deadline;

	if (!t->launched || target_poll_exit(t))
		return;
	terminate_family(t->pid);
	deadline = clock_now_ns() + 2000000000ull;
	while (!target_poll_exit(t) && clock_now_ns() < deadline)
		clock_sleep_until(clock_now_ns() + 10000000);
	if (!t->exited) {
		kill(t->pid, SIGKILL);
		reap(t, 0);
	}
}

void target_drop_empty_output(struct target *t)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	/* The directory is pytop's own (0700): nobody else can have put
	 * anything at these names since it was made. */
	if (t->output[0] == '\0' || lstat(t->output, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 0 || unlink(t->output) != 0)
		return;
	snprintf(dir, sizeof(dir), "%s", t->output);
	slash = strrchr(dir, '/');
	if (slash != NULL) {
		*slash = '\0';
		(void)rmdir(dir);
	}
	t->output[0] = '\0';
}

int target_exit_code(const struct target *t)
{
	if (!t->launched || !t->exited)
		return -1;
	if (WIFEXITED(t->wait_status))
		return WEXITSTATUS(t->wait_status);
	if (WIFSIGNALED(t->wait_status))
		return 128 + WTERMSIG(t->wait_status);
	return -1;
}
