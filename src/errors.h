/* errors.h - what went wrong, as one line that names the problem and the
 * fix.  Engine functions fill a struct pytop_error; main prints it. */
#ifndef PYTOP_ERRORS_H
#define PYTOP_ERRORS_H

#include <sys/types.h>

enum pytop_err {
	PYTOP_OK = 0,
	PYTOP_ERR_NO_PROCESS,   /* no such PID, or it exited */
	PYTOP_ERR_PERMISSION,   /* ptrace access check refused */
	PYTOP_ERR_NOT_PYTHON,   /* no CPython runtime in the target */
	PYTOP_ERR_UNSUPPORTED,  /* a CPython this build cannot read */
	PYTOP_ERR_LAUNCH,       /* the command could not be started */
	PYTOP_ERR_INTERNAL,     /* out of memory, thread creation... */
	PYTOP_ERR_FILE,         /* a file pytop creates could not be */
};

struct pytop_error {
	enum pytop_err code;
	char text[512]; /* one line, no trailing newline, no "pytop: " prefix */
};

/* The formatted line, with control characters and invalid UTF-8 from the
 * arguments escaped as \xNN (escape.h). */
void error_set(struct pytop_error *e, enum pytop_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The permission-denied line for `pid`, including why (ptrace_scope,
 * non-root) and how to fix it. */
void error_set_permission(struct pytop_error *e, pid_t pid, const char *what);

#endif
