/* tap_note.c - "# ..." lines that reach the TAP log from a Criterion test
 * worker (see tap_note.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tap_note.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool stat_is_dev_null(const struct stat *st)
{
	struct stat null;

	return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 &&
	       st->st_rdev == null.st_rdev;
}

/* Under TAP, Criterion's runner dup()s its stdout and stderr to fds 3 and
 * 4, points 1 and 2 (which the test workers inherit) at /dev/null, and
 * writes TAP through the saved copies: the runner's saved stderr, opened
 * by path, if it looks like one; -1 when there is none. */
static int runner_stderr(void)
{
	struct stat st;
	char path[64];

	snprintf(path, sizeof path, "/proc/%d/fd/4", (int)getppid());
	if (stat(path, &st) != 0 || stat_is_dev_null(&st) ||
	    !(S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) ||
	      S_ISCHR(st.st_mode)))
		return -1;
	return open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
}

/* Where a note goes: the copy of the test program's stderr that
 * h_keep_notes named (PYTOP_NOTES), else stderr, else (stderr is
 * /dev/null: a Criterion worker under TAP) the runner's stderr.  Returns
 * the descriptor, *opened when the caller must close it; -1: nowhere. */
static int note_fd(bool *opened)
{
	const char *path = getenv("PYTOP_NOTES");
	struct stat err;
	int fd = path != NULL ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
	                      : -1;

	*opened = fd >= 0;
	if (fd >= 0)
		return fd;
	if (fstat(STDERR_FILENO, &err) != 0 || !stat_is_dev_null(&err))
		return STDERR_FILENO;
	fd = runner_stderr();
	*opened = fd >= 0;
	return fd;
}

void test_note(const char *fmt, ...)
{
	char line[1024] = "# ";
	va_list ap;
	size_t len;
	bool opened;
	int fd;

	va_start(ap, fmt);
	vsnprintf(line + 2, sizeof line - 3, fmt, ap);
	va_end(ap);
	len = strlen(line);
	if (line[len - 1] != '\n')
		line[len++] = '\n';
	fd = note_fd(&opened);
	if (fd < 0)
		return;
	/* One write per line: whole lines even if the runner writes too. */
	ssize_t w = write(fd, line, len);
	(void)w;
	if (opened)
		close(fd);
}
