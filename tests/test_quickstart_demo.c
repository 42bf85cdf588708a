/* test_quickstart_demo.c - the README's quick start ends in a working
 * command: `scripts/quickstart.sh demo` builds and installs pytop (here
 * staged with DESTDIR into a private directory, so the test installs
 * nothing on the machine), runs the demo, and after `q` exits 0 and names
 * the pytop it installed, which runs.
 *
 * The build step is make's "nothing to do" when the tree is built (the
 * test suite runs after `make`); the demo runs in a private tmux server.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define LIFETIME_S 240
#define BUILD_S 180 /* make's check of an up-to-date tree, on a busy machine */

static char *write_script(const char *dir)
{
	char *path = h_path(dir, "run.sh");
	const char *src = getenv("PYTOP_SRCDIR");
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	cr_assert_not_null(src, "PYTOP_SRCDIR is not set");
	fprintf(f,
	        "cd '%s'\n"
	        "DESTDIR='%s/stage' scripts/quickstart.sh demo 2>'%s/said'\n"
	        "echo \"QUICKSTART-STATUS $?\"\n"
	        "exec sleep %d\n",
	        src, dir, dir, LIFETIME_S);
	fclose(f);
	return path;
}

/* The pytop the script said it installed (owned), from its last words. */
static char *said_path(const char *said)
{
	const char *p = said != NULL ? strstr(said, "pytop is installed: ") : NULL;
	size_t n;

	if (p == NULL)
		return NULL;
	p += strlen("pytop is installed: ");
	n = strcspn(p, " \n");
	return strndup(p, n);
}

Test(quickstart, demo_quits_with_0_and_names_a_runnable_pytop)
{
	char *dir = h_tmpdir(), *script = write_script(dir), *screen, *last = NULL;
	struct h_tmux tmux = { 0 };

	h_need_program("tmux");
	cr_assert(h_tmux_start(&tmux, 100, 30, script, LIFETIME_S), "cannot start tmux");
	screen = h_tmux_wait_for(&tmux, "Verdict", BUILD_S, &last);
	cr_assert_not_null(screen, "the demo never showed pytop's screen:\n%s", last);
	free(screen);
	h_sleep(1.0);
	cr_assert(h_tmux_keys(&tmux, (const char *const[]){ "q", NULL }));
	screen = h_tmux_wait_for(&tmux, "QUICKSTART-STATUS", 15, &last);
	cr_assert_not_null(screen, "the quick start did not end after q:\n%s", last);
	cr_expect_not_null(strstr(screen, "QUICKSTART-STATUS 0"),
	                   "quitting the demo is not a success:\n%s", screen);

	char *said_file = h_path(dir, "said"), *said = h_read_file(said_file);
	char *pytop = said_path(said), *stage = h_path(dir, "stage");
	cr_assert_not_null(pytop, "the quick start did not say where pytop is:\n%s", said);
	cr_expect_eq(strncmp(pytop, stage, strlen(stage)), 0,
	             "it says %s, not the staged install under %s", pytop, stage);
	const char *argv[] = { pytop, "--version", NULL };
	struct h_proc p;
	cr_assert(h_run(&p, 10, argv), "%s --version did not run", pytop);
	cr_expect_eq(p.status, 0, "%s --version: exit %d", pytop, p.status);
	cr_expect_not_null(strstr(p.out.data, "pytop"), "%s --version said: %s", pytop,
	                   p.out.data);
	h_proc_free(&p);
	h_tmux_kill(&tmux);
	free(screen), free(last), free(said), free(said_file), free(pytop), free(stage);
	free(script);
	h_rmtree(dir);
	free(dir);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
