/* test_stale_source.c - the lines view flags a source file that changed
 * under the running target (issue 15, item 3), on the oldest and the
 * newest CPython, driven through tmux.
 *
 * The workload (tests/workloads/stale_source.py) imports a module written
 * before it started and runs its hot().  The lines view of hot() first
 * shows no flag (the file is older than the process, its def line is
 * where the code says); once the file is rewritten with two lines more on
 * top, the view opened again says "[source changed since start: line
 * numbers may not match]" in its title and why on its note line. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define FLAG "[source changed since start: line numbers may not match]"
#define WAIT_S 15.0
#define LIFETIME_S 60

static const char module[] =
	"import time\n"
	"\n"
	"\n"
	"def hot(budget):\n"
	"    end = time.perf_counter() + budget\n"
	"    x = 0\n"
	"    while time.perf_counter() < end:\n"
	"        x += 1\n"
	"    return x\n";

struct ui {
	struct h_tmux tmux;
	char *screen; /* owned: the last capture that matched */
};

static void see(struct ui *u, const char *needle, const char *why)
{
	char *last = NULL;
	free(u->screen);
	u->screen = h_tmux_wait_for(&u->tmux, needle, WAIT_S, &last);
	cr_assert_not_null(u->screen, "%s: \"%s\" never appeared; screen:\n%s", why, needle,
	                   last ? last : "(no capture)");
	free(last);
}

static void key(struct ui *u, const char *k)
{
	const char *const ks[] = {k, NULL};
	cr_assert(h_tmux_keys(&u->tmux, ks), "send-keys %s failed", k);
}

/* The module, written (and dated) well before the target starts. */
static void write_module(const char *dir)
{
	char *path = h_path(dir, "stale_mod.py");
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, module, sizeof module - 1), (ssize_t)(sizeof module - 1));
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 600;
	t[1] = t[0];
	cr_assert_eq(futimens(fd, t), 0);
	close(fd);
	free(path);
}

static void stale_source(const char *slot)
{
	struct ui u = {0};
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("stale_source.py");
	h_need_program("tmux");
	char *dir = h_tmpdir();
	write_module(dir);
	char *script = h_path(dir, "run.sh");
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "cd '%s'\n'%s' -- '%s' '%s' 30 '%s'\necho PYTOP-DONE\nexec sleep %d\n", dir,
	        h_pytop(), python, wl, dir, LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&u.tmux, 200, 30, script, LIFETIME_S), "cannot start tmux");

	see(&u, "stale_mod.py", "hot() in the table");
	key(&u, "/");
	cr_assert(h_tmux_literal(&u.tmux, "hot"));
	key(&u, "Enter");
	key(&u, "Enter");
	see(&u, "Source of hot", "the lines view of hot()");
	cr_expect_null(strstr(u.screen, "source changed"),
	               "%s: flagged before the file changed:\n%s", slot, u.screen);

	key(&u, "Left");
	char *ask = h_path(dir, "rewrite-now"), *done = h_path(dir, "rewritten");
	FILE *a = fopen(ask, "w");
	cr_assert_not_null(a);
	fclose(a);
	cr_assert(h_tmux_wait_file(&u.tmux, done, WAIT_S), "the source was never rewritten");
	key(&u, "Enter");
	see(&u, FLAG, "the flag on the lines view of the rewritten file");
	const char *title = strstr(u.screen, "Source of hot");
	cr_expect(title != NULL && strstr(title, FLAG) != NULL &&
	          strchr(title, '\n') > strstr(title, FLAG), "%s: the flag is not in the title:\n%s",
	          slot, u.screen);
	cr_expect_not_null(strstr(u.screen, "source changed since start: "),
	                   "%s: no reason on the note line:\n%s", slot, u.screen);
	h_note("stale_source %s: flag shown after the rewrite, not before", slot);
	key(&u, "q");
	see(&u, "PYTOP-DONE", "pytop quits");
	h_tmux_kill(&u.tmux);
	free(ask);
	free(done);
	free(script);
	h_rmtree(dir);
	free(dir);
	free(u.screen);
	free(wl);
	free(python);
}

Test(stale_source, lines_view_flags_rewritten_file_py311_debian, .timeout = 90)
{
	stale_source("py311_debian");
}

Test(stale_source, lines_view_flags_rewritten_file_py315_sid, .timeout = 90)
{
	stale_source("py315_sid");
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
