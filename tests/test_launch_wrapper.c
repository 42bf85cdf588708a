/* test_launch_wrapper.c - a launched program that reaches Python through a
 * wrapper that works for a while first (a pyenv shim runs half a dozen
 * bash helpers before its exec, over 3 s on a loaded machine) is waited
 * for; one that stays as it is is still called "not Python" within
 * seconds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The wrapper's helpers: 8 commands of 0.5 s, 4 s in all, longer than
 * the 3 s a program that shows no change is given. */
#define WRAPPER_HELPERS 8

static char *write_file(const char *dir, const char *name, const char *text)
{
	char *path = h_path(dir, name);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

Test(launch_wrapper, a_wrapper_busy_for_4_s_before_its_exec_is_profiled, .timeout = 60)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *dir = h_tmpdir(), script[1024];
	char *app = write_file(dir, "app.py",
	                       "import time\n"
	                       "def wrapped_hot():\n"
	                       "    end = time.time() + 1.5\n"
	                       "    while time.time() < end:\n"
	                       "        sum(range(1000))\n"
	                       "wrapped_hot()\n");

	snprintf(script, sizeof script,
	         "i=0\nwhile [ $i -lt %d ]; do sleep 0.5; i=$((i + 1)); done\n"
	         "exec '%s' '%s'\n", WRAPPER_HELPERS, py, app);
	char *wrapper = write_file(dir, "wrapper.sh", script);
	const char *const argv[] = { h_pytop(), "-b", "--json", "--", "sh", wrapper, NULL };
	struct h_proc r;

	cr_assert(h_run(&r, 40, argv), "pytop did not end: %s", r.err.data ? r.err.data : "");
	cr_expect_eq(r.status, 0, "pytop exited %d: %s", r.status, r.err.data ? r.err.data : "");
	cr_expect(r.out.data != NULL && strstr(r.out.data, "wrapped_hot") != NULL,
	          "the wrapped program's function is not in the profile: %s",
	          r.out.data ? r.out.data : "(no output)");
	h_note("wrapper with %d helpers: pytop ran %.1f s, exit %d", WRAPPER_HELPERS,
	       r.seconds, r.status);
	h_proc_free(&r);
	h_rmtree(dir);
	free(app);
	free(wrapper);
	free(dir);
}

/* A wrapper that waits on one child that never changes shows no way to
 * Python: the old answer, as soon as before. */
Test(launch_wrapper, a_program_that_stays_as_it_is_is_not_python_within_seconds, .timeout = 60)
{
	const char *const argv[] = { h_pytop(), "-b", "--", "sh", "-c", "sleep 30; :", NULL };
	struct h_proc r;

	cr_assert(h_run(&r, 20, argv), "pytop did not give up on sleep within 20 s");
	cr_expect_neq(r.status, 0);
	cr_expect(r.err.data != NULL && strstr(r.err.data, "is not a CPython process") != NULL,
	          "stderr: %s", r.err.data ? r.err.data : "");
	cr_expect_lt(r.seconds, 8.0, "took %.1f s to say so", r.seconds);
	h_proc_free(&r);
}
