/* test_tree_live.c - the call tree (T) and the flame graph (G) on a live
 * interpreter, through a private tmux server at 80x24: the workload
 * tests/workloads/two_paths.py reaches its hot function through route_a
 * (70 %) and route_b (30 %); the tree, opened at its hottest path (Home,
 * e), shows route_a -> via_a -> hot, each under the one before; the
 * flame graph shows both routes side by side, End walks its hottest path
 * down to hot, whose status names it; the pause key freezes it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "patience.h"

#define WAIT_S 20.0
#define SERVER_LIFETIME_S 90

static struct h_tmux g_tmux;
static char *g_dir;

static void teardown(void)
{
	h_tmux_kill(&g_tmux);
	h_rmtree(g_dir);
	free(g_dir);
	g_dir = NULL;
}

static void start(void)
{
	char *script, *wl = h_workload("two_paths.py");
	const char *py = h_need_python(H_PY_DEBIAN);
	FILE *f;

	h_need_program("tmux");
	g_dir = h_tmpdir();
	script = h_path(g_dir, "run.sh");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "%s -d 0.5 -- '%s' '%s' --seconds 60\necho PYTOP-DONE\n"
	        "exec sleep %d\n", h_pytop(), py, wl, SERVER_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&g_tmux, 80, 24, script, SERVER_LIFETIME_S),
	          "cannot start tmux");
	free(script);
	free(wl);
}

static char *see(const char *needle, const char *why)
{
	char *last = NULL, *screen = h_tmux_wait_for(&g_tmux, needle, WAIT_S, &last);

	cr_assert_not_null(screen, "%s: \"%s\" never appeared; screen:\n%s", why,
	                   needle, last != NULL ? last : "(no capture)");
	free(last);
	return screen;
}

static void keys(const char *k)
{
	const char *const argv[] = { k, NULL };

	cr_assert(h_tmux_keys(&g_tmux, argv));
}

/* The line of screen containing needle after `after` (NULL: the
 * start), and the column where needle starts in its line; NULL if
 * none. */
static const char *line_with(const char *screen, const char *after,
                             const char *needle, int *col)
{
	const char *p = strstr(after != NULL ? after : screen, needle), *bol;

	if (p == NULL)
		return NULL;
	for (bol = p; bol > screen && bol[-1] != '\n'; bol--)
		;
	/* columns: UTF-8 characters ("\u25be" is three bytes) */
	*col = 0;
	for (const char *c = bol; c < p; c++)
		*col += ((unsigned char)*c & 0xc0) != 0x80;
	return p;
}

/* The workload's CPU time (user + system) in seconds, -1 if unreadable. */
static double cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	p = fgets(buf, sizeof buf, f);
	fclose(f);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Wait until the workload (named in pytop's header, "pid N") has run for
 * `seconds` of CPU more than now.  Starved at nice 19, its samples since
 * the reset are mostly waits for a CPU, each at the stack a scheduler
 * slice left it in: a few dozen slices decide which route is hottest,
 * and route_b's 30 % came out on top at 97 % CPU wait (a fresh-root CI
 * run).  A second of CPU is some 250 slices, the split near its 70/30. */
static void until_workload_ran(const char *screen, double seconds)
{
	const char *at = strstr(screen, " pid ");
	int pid = at != NULL ? atoi(at + 5) : 0;
	struct patience w;
	double start, now = -1;

	cr_assert_gt(pid, 0, "no pid in pytop's header:\n%s", screen);
	start = cpu_s(pid);
	cr_assert_geq(start, 0, "cannot read the workload's CPU time");
	patience_start(&w, h_tmux_pane_pid(&g_tmux), WAIT_S);
	while (!patience_over(&w) && (now = cpu_s(pid)) >= 0 && now - start < seconds)
		h_sleep(0.1);
	patience_end(&w, "the workload's second of CPU since the reset");
	cr_assert_geq(now - start, seconds, "the workload ran %.2f s of CPU in the wait",
	              now - start);
}

TestSuite(tree_live, .fini = teardown, .timeout = 80);

Test(tree_live, tree_and_flame_find_the_hot_path)
{
	int c1, c2, c3;

	start();
	free(see("hot (", "the functions table lists the workload's hot function"));
	/* Forget the start-up: starved at nice 19 (scripts/quickstart.sh),
	 * the interpreter's imports can outweigh the loop since start, and
	 * the tree's hottest path would rightly be theirs. */
	keys("r");
	h_sleep(1.0);
	char *shown = see("hot (", "the functions table lists hot again after the reset");
	until_workload_ran(shown, 1.0);
	free(shown);
	keys("T");
	free(see("Call tree since reset", "T shows the tree"));
	keys("Home");
	keys("e");
	char *screen = see("hot (", "e opens the hottest path");
	h_note("call tree at 80x24:\n%s", screen);
	const char *a = line_with(screen, NULL, "route_a (", &c1);
	cr_assert_not_null(a, "%s", screen);
	const char *v = line_with(screen, a, "via_a (", &c2);
	cr_assert_not_null(v, "%s", screen);
	const char *h = line_with(screen, v, "hot (", &c3);
	cr_assert_not_null(h, "%s", screen);
	cr_expect(c1 < c2 && c2 < c3, "route_a, via_a, hot indented under "
	          "each other: %d %d %d\n%s", c1, c2, c3, screen);
	/* its first row is no deeper than route_a's, the hot path open */
	cr_expect_null(strstr(screen, "\u25b8 route_a"), "%s", screen);
	free(screen);

	keys("G");
	screen = see("Flame (", "G shows the flame graph");
	free(screen);
	screen = see("route_b", "both routes have blocks");
	cr_expect_not_null(strstr(screen, "route_a"), "%s", screen);
	free(screen);
	keys("End");
	screen = see("  %Total ", "the status row");
	free(screen);
	screen = see("hot (", "End walks down to hot");
	h_note("flame graph at 80x24:\n%s", screen);
	free(screen);

	/* paused: nothing moves */
	keys("p");
	char *before = see("[paused]", "p pauses");
	h_sleep(1.5);
	char *after = h_tmux_capture(&g_tmux);
	cr_assert_not_null(after);
	cr_expect_str_eq(after, before, "the graph moved while paused");
	free(before);
	free(after);
	keys("q");
	free(see("PYTOP-DONE", "q quits"));
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
