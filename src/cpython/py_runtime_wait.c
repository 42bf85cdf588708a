/* py_runtime_wait.c - waiting for a target's Python runtime: a launched
 * program may still be a shell or a pyenv shim, or an interpreter that has
 * not created its first thread state yet. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_runtime_wait.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

/* How long a launched program may go without becoming a Python, and
 * without showing it is on its way there, before we call it "not Python".
 * A wrapper (a pyenv shim, a shell script) execs the real interpreter
 * after running helpers of its own: a shim runs half a dozen bash
 * commands, which on a loaded machine took over 3 s, all in one bash
 * (its execs of further scripts keep /usr/bin/bash as the executable).
 * So the clock restarts whenever the program's executable, its command
 * line (an exec of a script) or its set of children (a helper started or
 * ended) changes; a program that stays as it is for this long is not on
 * its way to Python. */
#define NOT_PYTHON_AFTER_NS (3 * NSEC_PER_SEC)
/* However busy a wrapper looks, it is "not Python" after this long. */
#define WRAPPER_AT_MOST_NS (60 * NSEC_PER_SEC)
#define READY_TIMEOUT_NS (10 * NSEC_PER_SEC)
/* An attached process may be one that has just started: its libpython's
 * data segment may not be mapped yet, so a debug table that does not
 * match is read again for this long before it is believed. */
#define TABLE_SETTLE_NS (NSEC_PER_SEC / 2)

/* What shows a launched program on its way: its executable, command line
 * and children, one after the other in buf (NUL-separated, cut at len). */
#define WAY_BYTES 8192

static size_t read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len) : -1;

	if (fd >= 0)
		close(fd);
	return n > 0 ? (size_t)n : 0;
}

static size_t way_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	size_t at;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, len / 4);
	at = n > 0 ? (size_t)n : 0;
	buf[at++] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	at += read_proc(path, buf + at, (len - at) / 2);
	buf[at++] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	return at + read_proc(path, buf + at, len - at);
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
	char way[WAY_BYTES], now_way[WAY_BYTES];
	size_t n_way = 0;
	uint64_t start = clock_now_ns(), since = start;

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
		size_t n_now = way_of(t->pid, now_way, sizeof(now_way));
		uint64_t now = clock_now_ns();

		if (n_now != n_way || memcmp(way, now_way, n_now) != 0) {
			memcpy(way, now_way, n_now);
			n_way = n_now;
			since = now;
		}
		if (now - since > NOT_PYTHON_AFTER_NS || now - start > WRAPPER_AT_MOST_NS) {
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

