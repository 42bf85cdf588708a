/* py_runtime_wait.c - waiting for a target's Python runtime: a launched
 * program may still be a shell or a pyenv shim, or an interpreter that has
 * not created its first thread state yet. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_runtime_wait.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

/* How long a launched program may run without becoming a Python before we
 * call it "not Python".  Wrappers (pyenv shims, shell scripts) exec the
 * real interpreter within milliseconds; the clock restarts at every exec. */
#define NOT_PYTHON_AFTER_NS (3 * NSEC_PER_SEC)
#define READY_TIMEOUT_NS (10 * NSEC_PER_SEC)
/* An attached process may be one that has just started: its libpython's
 * data segment may not be mapped yet, so a debug table that does not
 * match is read again for this long before it is believed. */
#define TABLE_SETTLE_NS (NSEC_PER_SEC / 2)

static void exe_of(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

static int exited_early(struct target *t, struct pytop_error *err)
{
	error_set(err, PYTOP_ERR_NOT_PYTHON,
	          "%s exited with status %d before a Python runtime appeared in it; "
	          "pytop profiles CPython programs (e.g. pytop -- python3 app.py)",
	          t->command, target_exit_code(t));
	return -1;
}

/* Poll until the launched program is a Python whose runtime we can read. */
static int wait_for_runtime(struct target *t, struct py_runtime *rt, struct pytop_error *err)
{
	char exe[4096] = "", now_exe[4096];
	uint64_t since = clock_now_ns();

	for (;;) {
		if (target_poll_exit(t))
			return exited_early(t, err);
		if (py_runtime_find(t->pid, rt, err) == 0)
			return 0;
		if (err->code != PYTOP_ERR_NOT_PYTHON && err->code != PYTOP_ERR_NO_PROCESS &&
		    !rt->table_unread) {
			target_terminate(t);
			return -1;
		}
		exe_of(t->pid, now_exe, sizeof(now_exe));
		if (strcmp(exe, now_exe) != 0) {
			memcpy(exe, now_exe, sizeof(exe));
			since = clock_now_ns();
		} else if (clock_now_ns() - since > NOT_PYTHON_AFTER_NS) {
			target_terminate(t);
			return -1; /* err says what was found instead */
		}
		clock_sleep_until(clock_now_ns() + 200000);
	}
}

/* The runtime exists; wait until the interpreter has its first thread. */
static int wait_until_ready(struct target *t, const struct py_runtime *rt,
                            struct pytop_error *err)
{
	uint64_t start = clock_now_ns();

	while (py_runtime_ready(t->pid, rt) != 0) {
		if (target_poll_exit(t))
			return exited_early(t, err);
		if (!t->launched || clock_now_ns() - start > READY_TIMEOUT_NS) {
			error_set(err, PYTOP_ERR_NOT_PYTHON,
			          "the Python runtime in process %d has no interpreter or thread yet "
			          "(still starting, or shutting down); try again in a moment",
			          (int)t->pid);
			return -1;
		}
		clock_sleep_until(clock_now_ns() + 50000);
	}
	return 0;
}

static int find_attached(pid_t pid, struct py_runtime *rt, struct pytop_error *err)
{
	uint64_t start = clock_now_ns();
	int rc;

	while ((rc = py_runtime_find(pid, rt, err)) != 0 && rt->table_unread &&
	       clock_now_ns() - start < TABLE_SETTLE_NS)
		clock_sleep_until(clock_now_ns() + 1000000);
	return rc;
}

int py_runtime_wait(struct target *t, struct py_runtime *rt, struct pytop_error *err)
{
	int rc = t->launched ? wait_for_runtime(t, rt, err) : find_attached(t->pid, rt, err);

	if (rc != 0)
		return rc;
	return wait_until_ready(t, rt, err);
}

