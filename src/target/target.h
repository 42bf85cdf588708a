/* target.h - the process being profiled: attach to a PID or launch a
 * command, notice when it exits, and (launch mode only) reap it and report
 * its exit status.  pytop never stops, signals or writes to an attached
 * target.  Waiting for its Python runtime is cpython/py_runtime_wait.h. */
#ifndef PYTOP_TARGET_H
#define PYTOP_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "errors.h"

struct target {
	pid_t pid;
	bool launched;       /* we started it: we reap it */
	bool exited;
	int wait_status;     /* raw waitpid status, valid when launched && exited */
	bool usage_valid;    /* usage holds the reaped program's figures */
	struct rusage usage; /* from wait4: its (and its reaped descendants')
	                        CPU, page faults and peak RSS (ru_maxrss) */
	char command[256];   /* its command line, for the header */
	char output[PATH_MAX]; /* launch mode: the file its stdout/stderr go to, or "" */
	struct pytop_error output_error; /* why there is no such file (its output
	                                    is discarded), code 0 when none */
};

/* Attach mode: check that pid exists and read its command line. */
int target_attach(pid_t pid, struct target *t, struct pytop_error *err);

/* Launch mode: fork and exec argv.  The child's stdin is /dev/null; its
 * stdout goes to pytop's stderr in batch mode (so pytop's stdout stays
 * parseable), and in TUI mode both stdout and stderr go to a new file,
 * $TMPDIR/pytop-PID.XXXXXX/output in a private directory (safe_create.h),
 * so that it cannot scribble on the screen; if that file cannot be made,
 * to /dev/null, and output_error says why.  The program gets SIGKILL if
 * pytop dies (PR_SET_PDEATHSIG); crash_stop.h covers its descendants when
 * pytop dies of a fatal signal.  Must be called from the main thread. */
int target_launch(char *const argv[], bool tui, struct target *t, struct pytop_error *err);

/* Non-blocking: has the target exited?  Reaps it in launch mode. */
bool target_poll_exit(struct target *t);

/* The target's memory is gone, so it is exiting: give it up to grace_ns to
 * finish (launch mode: to be reaped, for its exit status), then consider it
 * exited whatever the kernel says. */
void target_wait_exit(struct target *t, uint64_t grace_ns);

/* Launch mode, target still running when pytop is done: ask it to stop
 * (SIGTERM, then SIGKILL after a grace period) and reap it. */
void target_terminate(struct target *t);

/* Launch mode, once the program is done: an output file it never wrote to
 * is removed with its directory, so that a silent program leaves nothing
 * in $TMPDIR, and output becomes "".  A file with anything in it stays. */
void target_drop_empty_output(struct target *t);

/* The exit status pytop should return for the target (launch mode):
 * its exit code, or 128 + signal number. -1 when unknown. */
int target_exit_code(const struct target *t);

#endif
