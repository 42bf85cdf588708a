/* tap_note.c - "# ..." lines that reach the TAP log from a Criterion test
 * worker (see tap_note.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tap_note.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A "# ..." diagnostic line for the test log.  Under TAP, Criterion's
 * runner dup()s its stdout and stderr to fds 3 and 4, points 1 and 2 (which
 * the test workers inherit) at /dev/null, and writes TAP through the saved
 * copies; so write to the runner's saved stderr, if it looks like one. */
void test_note(const char *fmt, ...)
{
	char line[512] = "# ";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + 2, sizeof line - 3, fmt, ap);
	va_end(ap);
	size_t len = strlen(line);
	line[len++] = '\n';

	struct stat err, null, st;
	int fd = STDERR_FILENO, runner = -1;
	if (fstat(STDERR_FILENO, &err) == 0 && stat("/dev/null", &null) == 0 &&
	    S_ISCHR(err.st_mode) && err.st_rdev == null.st_rdev) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/fd/4", (int)getppid());
		if (stat(path, &st) == 0 &&
		    (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) ||
		     (S_ISCHR(st.st_mode) && st.st_rdev != null.st_rdev)))
			runner = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (runner < 0)
			return;
		fd = runner;
	}
	ssize_t w = write(fd, line, len); /* one write: whole lines */
	(void)w;
	if (runner >= 0)
		close(runner);
}
