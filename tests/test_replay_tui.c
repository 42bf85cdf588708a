/* test_replay_tui.c - pytop replay FILE in the TUI, through a private
 * tmux server: the header says REPLAY, the time bar is drawn, Home and
 * . step through the recorded refreshes, [ and ] choose a window, and
 * then the functions table covers exactly that window: the same sample
 * count and the same %Own and %Total as `pytop replay -b --json --from
 * --to` of the window; the threads, call tree and flame graph screens
 * show it too.  r, a live key, changes nothing and says why. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define WAIT_S 15.0
#define SERVER_LIFETIME_S 60

static struct h_tmux g_tmux;
static char *g_dir;

static void teardown(void)
{
	h_tmux_kill(&g_tmux);
	h_rmtree(g_dir);
	free(g_dir);
	g_dir = NULL;
}

/* A recording of a -d 0.35 batch session (refreshes off the 100 ms
 * grid); its path, owned. */
static char *record(void)
{
	char *work = h_workload("replay_pair.py"), *file = h_path(g_dir, "run.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "0.35", "-w", file, "--",
	                       py, work, "2.0", NULL };
	struct h_proc p;

	cr_assert(h_run(&p, 40, argv), "pytop did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status, p.err.data);
	h_proc_free(&p);
	free(work);
	return file;
}

/* pytop replay -b --json FILE [--from F --to T]: the JSON lines. */
static json_t *replay_json(const char *file, const char *from, const char *to)
{
	const char *argv[10] = { h_pytop(), "replay", "-b", "--json", file };
	size_t n = 5;
	struct h_proc p;
	json_t *lines;
	int bad = 0;

	if (from != NULL) {
		argv[n++] = "--from";
		argv[n++] = from;
		argv[n++] = "--to";
		argv[n++] = to;
	}
	argv[n] = NULL;
	cr_assert(h_run(&p, 30, argv), "pytop replay did not finish");
	cr_assert_eq(p.status, 0, "pytop replay: status %d, stderr: %s", p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) > 0, "no JSON (bad line %d)", bad);
	h_proc_free(&p);
	return lines;
}

static char *see(const char *needle, const char *why)
{
	char *last = NULL, *screen = h_tmux_wait_for(&g_tmux, needle, WAIT_S, &last);

	cr_assert_not_null(screen, "%s: \"%s\" never appeared; screen:\n%s", why, needle,
	                   last != NULL ? last : "(no capture)");
	free(last);
	return screen;
}

static void keys(const char *k)
{
	const char *const argv[] = { k, NULL };

	cr_assert(h_tmux_keys(&g_tmux, argv));
}

/* "% of 1,234 samples" in the table's description: the count. */
static long long shown_samples(const char *screen)
{
	const char *p = strstr(screen, "% of ");
	long long n = 0;

	cr_assert_not_null(p, "no sample count on screen:\n%s", screen);
	for (p += 5; (*p >= '0' && *p <= '9') || *p == ','; p++)
		if (*p != ',')
			n = n * 10 + (*p - '0');
	return n;
}

/* The %Own (column 0) or %Total (1) cell of the row of function `name`
 * (its line starts with the figures). */
static double shown_pct(const char *screen, const char *name, int col)
{
	char needle[64];
	const char *p, *bol;

	snprintf(needle, sizeof needle, " %s (", name);
	p = strstr(screen, needle);
	cr_assert_not_null(p, "no row for %s:\n%s", name, screen);
	for (bol = p; bol > screen && bol[-1] != '\n'; bol--)
		;
	char *end;
	double v = strtod(bol, &end);

	return col == 0 ? v : strtod(end, NULL);
}

Test(replay_tui, window_keys_match_batch, .init = NULL, .fini = teardown, .timeout = 90)
{
	char *file, *script, *screen, from[32], to[32], want[128];
	json_t *all, *win, *last;
	FILE *f;

	h_need_program("tmux");
	g_dir = h_tmpdir();
	file = record();
	all = replay_json(file, NULL, NULL);
	cr_assert_gt(json_array_size(all), 4, "too few refreshes: %zu", json_array_size(all));
	/* Positions: the start, then each refresh.  Home . [ . . ] chooses
	 * the window from refresh 0 to refresh 2. */
	snprintf(from, sizeof from, "%.9f", h_num(json_object_get(json_array_get(all, 0),
	                                                          "replay"), "at"));
	snprintf(to, sizeof to, "%.9f", h_num(json_object_get(json_array_get(all, 2),
	                                                        "replay"), "at"));
	win = replay_json(file, from, to);
	last = json_array_get(win, json_array_size(win) - 1);

	script = h_path(g_dir, "run.sh");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "%s replay '%s'\necho PYTOP-DONE\nexec sleep %d\n", h_pytop(), file,
	        SERVER_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&g_tmux, 120, 30, script, SERVER_LIFETIME_S), "cannot start tmux");
	free(script);

	screen = see("REPLAY", "the header says it is a replay");
	cr_assert(strstr(screen, " of ") != NULL && strstr(screen, " s") != NULL);
	cr_assert_eq(shown_samples(screen), h_num(json_array_get(all, json_array_size(all) - 1),
	                                          "samples"),
	             "opened at the end: all the samples:\n%s", screen);
	free(screen);

	keys("Home");
	free(see("REPLAY 0.0-0.0 s", "Home goes to the start"));
	keys(".");
	snprintf(want, sizeof want, "REPLAY 0.0-%.1f s", atof(from));
	free(see(want, ". steps to the first refresh"));
	keys("[");
	keys(".");
	keys(".");
	keys("]");
	snprintf(want, sizeof want, "REPLAY %.1f-%.1f s", atof(from), atof(to));
	screen = see(want, "[ and ] choose the window");
	h_note("window %s-%s s: %lld samples shown, %lld by replay -b --from --to", from, to,
	       shown_samples(screen), (long long)h_num(last, "samples"));
	cr_assert_eq(shown_samples(screen), (long long)h_num(last, "samples"),
	             "the table's samples are not the window's:\n%s", screen);
	cr_assert(strstr(screen, "window ") != NULL, "the time bar does not show the "
	          "window:\n%s", screen);
	const char *names[] = { "leaf", "mid", "other", "worker" };
	for (size_t i = 0; i < 4; i++) {
		json_t *fn = h_func(last, names[i]);
		double n = h_num(last, "samples");
		char a[16], b[16], c[16], d[16];

		cr_assert_not_null(fn, "%s is not in the window's batch replay", names[i]);
		snprintf(a, sizeof a, "%.1f", 100.0 * h_num(fn, "own") / n);
		snprintf(b, sizeof b, "%.1f", shown_pct(screen, names[i], 0));
		snprintf(c, sizeof c, "%.1f", 100.0 * h_num(fn, "total") / n);
		snprintf(d, sizeof d, "%.1f", shown_pct(screen, names[i], 1));
		h_note("%s: %%Own %s, %%Total %s on screen; %s, %s from the batch replay",
		       names[i], b, d, a, c);
		cr_assert_str_eq(a, b, "%s: %%Own %s on screen, %s by replay -b", names[i], b, a);
		cr_assert_str_eq(c, d, "%s: %%Total %s on screen, %s by replay -b", names[i], d, c);
	}
	free(screen);

	/* r would reset a live view's counts: here it says why not. */
	keys("r");
	screen = see("[replay:", "r answers with a status message");
	cr_assert_eq(shown_samples(screen), (long long)h_num(last, "samples"),
	             "r changed the figures");
	free(screen);

	/* Every screen shows the window: threads, call tree, flame graph. */
	char span[64];

	snprintf(span, sizeof span, "in %.1f-%.1f s of the recording", atof(from), atof(to));
	keys("t");
	screen = see("Threads: 2", "the threads screen lists both threads");
	cr_assert(strstr(screen, "w1") != NULL || strstr(screen, "python") != NULL,
	          "no thread names:\n%s", screen);
	free(screen);
	keys("T");
	snprintf(want, sizeof want, "Call tree %s", span);
	free(see(want, "the call tree covers the window"));
	keys("G");
	screen = see("Flame", "the flame graph opens");
	cr_assert(strstr(screen, span) != NULL && strstr(screen, "leaf") != NULL,
	          "the flame graph does not cover the window:\n%s", screen);
	free(screen);
	keys("G");
	free(see("Functions in", "back to the functions table"));

	/* c clears the window: the figures since the start again. */
	keys("c");
	snprintf(want, sizeof want, "REPLAY 0.0-%.1f s", atof(to));
	free(see(want, "c clears the window"));
	keys("q");
	free(see("PYTOP-DONE", "q quits"));
	json_decref(all);
	json_decref(win);
	free(file);
}

/* One case at a time: each runs a CPU-bound workload under pytop, and
 * Criterion's parallel runner leaks under ASan. */
int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
