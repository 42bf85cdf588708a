/* errors.c - filling a struct pytop_error: one line naming the problem and
 * the fix, the target's bytes in it escaped (errors.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "errors.h"

#include "escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void error_set(struct pytop_error *e, enum pytop_err code, const char *fmt, ...)
{
	char raw[sizeof(e->text)];
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* The arguments may name the target's files: keep their bytes from
	 * driving the terminal the line is printed on. */
	escape_text(e->text, sizeof(e->text), raw);
}

/* -1 when Yama is not present. */
static int read_ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void error_set_permission(struct pytop_error *e, pid_t pid, const char *what)
{
	int scope = read_ptrace_scope();

	if (scope >= 1 && geteuid() != 0) {
		error_set(e, PYTOP_ERR_PERMISSION,
		          "permission denied to %s process %d: kernel.yama.ptrace_scope is %d; "
		          "run pytop as root or with CAP_SYS_PTRACE, launch the program "
		          "under pytop (pytop -- COMMAND), or set the sysctl to 0",
		          what, (int)pid, scope);
		return;
	}
	error_set(e, PYTOP_ERR_PERMISSION,
	          "permission denied to %s process %d: run pytop as the same user as "
	          "the target, as root, or with CAP_SYS_PTRACE "
	          "(containers: --cap-add SYS_PTRACE)", what, (int)pid);
}
