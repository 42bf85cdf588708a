/* test_tui.c - the real live view, driven through a private tmux server:
 * keys in with send-keys, the screen out with capture-pane.
 *
 * The pane runs a small shell script that records `stty -a` before and
 * after pytop, so every test also checks that the terminal was restored.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"

#define WAIT_S 15.0       /* for anything to appear on screen */
#define SERVER_LIFETIME_S 120

/* One pytop session in tmux.  Owns the directory, the server and the
 * target it launches. */
struct tui {
	struct h_tmux tmux;
	char *dir;
	char *wl;
	const char *wl_args; /* more workload arguments (static), or NULL */
	pid_t target;        /* the workload pytop launched, once known */
	char target_pid[16];
	char *screen;        /* the last capture we looked at */
};

/* Criterion's .fini takes no argument: the session of the running test
 * must live here so that a failed assertion still tears it down (each
 * test runs in its own process, so there is one per test). */
static struct tui g_tui;

static void tui_teardown(void)
{
	struct tui *u = &g_tui;
	h_tmux_kill(&u->tmux);
	if (u->target > 0 && h_proc_state(u->target) != 0)
		kill(u->target, SIGKILL);
	h_rmtree(u->dir);
	free(u->dir);
	free(u->wl);
	free(u->screen);
	memset(u, 0, sizeof *u);
}

/* The script the pane runs: stty before, pytop, exit status, stty after,
 * then keep the pane open for the test to read. */
static void write_script(struct tui *u, const char *py, const char *env,
                         const char *extra_args)
{
	char *path = h_path(u->dir, "run.sh");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "cd '%s'\n"
	        "stty -a > stty.before\n"
	        "%s '%s' -r 500 %s -- '%s' '%s' --seconds 60 --ready-file ready "
	        "--truth truth.json %s\n"
	        "echo $? > exit_status\n"
	        "stty -a > stty.after\n"
	        "echo PYTOP-DONE\n"
	        "exec sleep %d\n",
	        u->dir, env ? env : "", h_pytop(), extra_args ? extra_args : "",
	        py, u->wl, u->wl_args ? u->wl_args : "", SERVER_LIFETIME_S);
	fclose(f);
	free(path);
}

static void tui_start_workload(const char *workload, const char *env,
                               const char *extra_args, int w, int h)
{
	struct tui *u = &g_tui;
	h_need_program("tmux");
	const char *py = h_need_python(H_PY_DEBIAN);
	u->dir = h_tmpdir();
	u->wl = h_workload(workload);
	write_script(u, py, env, extra_args);
	char *script = h_path(u->dir, "run.sh");
	bool ok = h_tmux_start(&u->tmux, w, h, script, SERVER_LIFETIME_S);
	free(script);
	cr_assert(ok, "cannot start tmux");

	char *ready = h_path(u->dir, "ready");
	bool started = h_tmux_wait_file(&u->tmux, ready, WAIT_S);
	char *pid = started ? h_read_file(ready) : NULL;
	free(ready);
	cr_assert(started && pid, "the workload never started; screen:\n%s",
	          h_tmux_capture(&u->tmux));
	u->target = (pid_t)atoi(pid);
	snprintf(u->target_pid, sizeof u->target_pid, "%d", (int)u->target);
	free(pid);
}

static void tui_start_sized(const char *env, const char *extra_args, int w,
                            int h)
{
	tui_start_workload("cpu_split.py", env, extra_args, w, h);
}

static void tui_start(const char *env)
{
	tui_start_sized(env, NULL, 100, 30);
}

/* Wait until the screen shows `needle`; keeps the capture in u->screen. */
static void see(const char *needle, const char *why)
{
	struct tui *u = &g_tui;
	char *last = NULL;
	free(u->screen);
	u->screen = h_tmux_wait_for(&u->tmux, needle, WAIT_S, &last);
	cr_assert_not_null(u->screen, "%s: \"%s\" never appeared; screen:\n%s",
	                   why, needle, last ? last : "(no capture)");
}

/* Capture now, without waiting. */
static const char *screen_now(void)
{
	struct tui *u = &g_tui;
	free(u->screen);
	u->screen = h_tmux_capture(&u->tmux);
	cr_assert_not_null(u->screen, "capture-pane failed");
	return u->screen;
}

/* Wait until `needle` is gone from two captures in a row (one alone may
 * catch the terminal mid-update); returns the later screen. */
static const char *wait_without(const char *needle, const char *why)
{
	struct tui *u = &g_tui;
	double deadline = h_now() + WAIT_S;
	for (;;) {
		char *s = h_tmux_settled(&u->tmux, needle, false);
		if (s != NULL) {
			free(u->screen);
			u->screen = s;
			return s;
		}
		const char *now = screen_now();
		cr_assert(h_now() < deadline, "%s: \"%s\" is still on screen:\n%s",
		          why, needle, now);
		h_sleep(0.1);
	}
}

static void keys(const char *const k[])
{
	cr_assert(h_tmux_keys(&g_tui.tmux, k), "send-keys failed");
}

static void key(const char *k)
{
	const char *const ks[] = {k, NULL};
	keys(ks);
}

/* Wait until the screen satisfies ok(screen, arg) and returns it.  A
 * capture can catch ncurses mid-update (a title already redrawn, the old
 * rows half gone), so one is trusted only when a second capture 0.2 s
 * later satisfies the condition too; that second one is returned. */
static const char *settled(bool (*ok)(const char *s, const void *arg),
                           const void *arg, const char *why)
{
	double deadline = h_now() + WAIT_S;
	for (;;) {
		if (ok(screen_now(), arg)) {
			h_sleep(0.2);
			if (ok(screen_now(), arg))
				return g_tui.screen;
		}
		cr_assert(h_now() < deadline, "%s; screen:\n%s", why, g_tui.screen);
		h_sleep(0.1);
	}
}

static bool shows(const char *s, const void *needle)
{
	return strstr(s, needle) != NULL;
}

static bool shows_ci(const char *s, const void *needle)
{
	return strcasestr(s, needle) != NULL;
}

static bool lacks_ci(const char *s, const void *needle)
{
	return strcasestr(s, needle) == NULL;
}

static bool lacks(const char *s, const void *needle)
{
	return strstr(s, needle) == NULL;
}

/* The header shows the target's PID and Python version, and the table a
 * hot function: the live view is up and sampling. */
static void see_live_view(void)
{
	see("hot_a", "hot function");
	see(g_tui.target_pid, "target pid in the header");
	see("3.11", "python version in the header");
}

/* After pytop ended: the shell got control back and the terminal settings
 * are exactly what they were before. */
static void check_terminal_restored(void)
{
	struct tui *u = &g_tui;
	see("PYTOP-DONE", "the shell after pytop");
	char *before_path = h_path(u->dir, "stty.before");
	char *after_path = h_path(u->dir, "stty.after");
	char *before = h_read_file(before_path);
	char *after = h_read_file(after_path);
	cr_assert(before && after, "stty output missing");
	cr_assert_str_neq(before, "", "stty -a printed nothing");
	cr_assert_str_eq(before, after, "terminal not restored:\nbefore:\n%s\n"
	                 "after:\n%s", before, after);
	free(before), free(after), free(before_path), free(after_path);
}

static void quit(void)
{
	key("q");
	check_terminal_restored();
}

/* The line of the screen that holds `needle` (owned), or NULL. */
static char *line_with(const char *screen, const char *needle)
{
	const char *hit = strstr(screen, needle);
	if (!hit)
		return NULL;
	const char *start = hit;
	while (start > screen && start[-1] != '\n')
		start--;
	const char *end = strchr(hit, '\n');
	size_t n = end ? (size_t)(end - start) : strlen(start);
	return strndup(start, n);
}

/* The table's column header line: the one naming the Function column.
 * Not the first line with "Function" in it: the title above the table
 * ("Functions since start, % of 8,188 samples ...") changes at every
 * refresh, so a header taken from it never came back after '>' and '<'
 * once a refresh fell between them. */
#define COLUMN_HEADER "Function (file:line)"
static char *column_header(const char *screen)
{
	char *line = line_with(screen, COLUMN_HEADER);
	cr_assert_not_null(line, "no column header on screen:\n%s", screen);
	return line;
}

/* For settled: the column header is on screen; and it is (not) *before. */
static bool shows_header(const char *s, const void *unused)
{
	(void)unused;
	return strstr(s, COLUMN_HEADER) != NULL;
}

static bool header_is(const char *s, const void *before)
{
	char *line = line_with(s, COLUMN_HEADER);
	bool same = line && strcmp(line, before) == 0;
	free(line);
	return same;
}

static bool header_differs(const char *s, const void *before)
{
	char *line = line_with(s, COLUMN_HEADER);
	bool differs = line && strcmp(line, before) != 0;
	free(line);
	return differs;
}

/* Columns of the widest line (UTF-8: "…" is one column, three bytes). */
static size_t widest_line(const char *screen)
{
	size_t columns = 0, widest = 0;
	for (const char *p = screen; *p; p++) {
		if (*p == '\n')
			columns = 0;
		else if (((unsigned char)*p & 0xC0) != 0x80)
			columns++; /* not a UTF-8 continuation byte */
		if (columns > widest)
			widest = columns;
	}
	return widest;
}

/* Line of the `# LOOP name` marker in the workload. */
static int loop_line(const char *name)
{
	char *src = h_read_file(g_tui.wl);
	cr_assert_not_null(src);
	char marker[64];
	snprintf(marker, sizeof marker, "# LOOP %s\n", name);
	char *hit = strstr(src, marker);
	cr_assert_not_null(hit);
	int line = 1;
	for (char *p = src; p < hit; p++)
		line += *p == '\n';
	free(src);
	return line;
}

/* ---- the tests ------------------------------------------------------------ */

TestSuite(tui, .fini = tui_teardown, .timeout = 90);

Test(tui, header_table_and_quit)
{
	tui_start(NULL);
	see_live_view();
	see("hot_b", "second hot function");
	see("Klass.hot_c", "qualified method name");
	see("cpu_split.py", "file of the functions");
	quit();
}

Test(tui, sort_keys_move_the_indicator)
{
	tui_start(NULL);
	see_live_view();
	char *before = column_header(settled(shows_header, NULL,
	                                     "no column header"));
	key(">");
	settled(header_differs, before, "'>' did not change the sort indicator");
	key("<");
	settled(header_is, before, "'<' did not undo '>'");
	free(before);
	quit();
}

Test(tui, filter_shows_only_matching_rows)
{
	tui_start(NULL);
	see_live_view();
	see("hot_b", "hot_b before filtering");
	key("/");
	cr_assert(h_tmux_literal(&g_tui.tmux, "hot_b"));
	key("Enter");
	const char *s = wait_without("hot_a", "filter hot_b");
	cr_assert_not_null(strstr(s, "hot_b"), "filter hid hot_b too:\n%s", s);
	cr_assert_null(strstr(s, "Klass.hot_c"), "filter kept hot_c:\n%s", s);
	cr_assert_null(strstr(s, "run_rounds"), "filter kept run_rounds:\n%s",
	               s);
	quit();
}

Test(tui, line_view_shows_file_and_line)
{
	tui_start(NULL);
	see_live_view();
	char where[64];
	snprintf(where, sizeof where, "cpu_split.py:%d", loop_line("hot_a"));
	cr_assert_null(strstr(screen_now(), where),
	               "function view already shows the loop line %s", where);
	key("l");
	see(where, "line view: the hot loop line of hot_a");
	key("l");
	wait_without(where, "back to the function view");
	quit();
}

Test(tui, enter_on_a_function_shows_its_source)
{
	tui_start(NULL);
	see_live_view();
	/* Only hot_a left, so Enter opens it whatever the order. */
	key("/");
	cr_assert(h_tmux_literal(&g_tui.tmux, "hot_a"));
	key("Enter");
	wait_without("hot_b", "filter hot_a");
	key("Enter");
	see("Source of hot_a", "the lines view's title");
	see("def hot_a(budget):", "the function's first line from the file");
	see("x = (x * 1.000001", "the hot loop's source text");
	/* The loop line carries figures: its number, then %Own. */
	char where[16];
	snprintf(where, sizeof where, "%5d  ", loop_line("hot_a"));
	char *loop = line_with(settled(shows, "x = (x * 1.000001",
	                               "the hot loop's line"),
	                       "x = (x * 1.000001");
	cr_assert(loop && strncmp(loop, where, strlen(where)) == 0 &&
	          strchr(loop, '.'), "no figures on the loop line: %s", loop);
	free(loop);
	cr_assert_null(strstr(g_tui.screen, "def hot_b"), "hot_b's source "
	               "shown too:\n%s", g_tui.screen);
	key("Left");
	see("Function (file:line)", "Left goes back to the functions");
	wait_without("Source of", "the lines view is gone");
	quit();
}

Test(tui, pause_and_help)
{
	tui_start(NULL);
	see_live_view();
	key("p");
	const char *s = settled(shows_ci, "paused", "'p' shows no paused mark");
	/* Frozen: the table does not change over two refreshes. */
	char *frozen = strdup(strstr(s, "hot_"));
	h_sleep(2.5);
	s = screen_now();
	cr_assert(strstr(s, "hot_") && strcmp(strstr(s, "hot_"), frozen) == 0,
	          "the paused table changed:\nbefore:\n%s\nafter:\n%s", frozen,
	          strstr(s, "hot_"));
	free(frozen);
	key("p");
	settled(lacks_ci, "paused", "'p' again does not resume");

	key("?");
	s = settled(lacks, "hot_a", "'?' shows no help");
	cr_assert(strcasestr(s, "quit") && strcasestr(s, "sort") &&
	          strcasestr(s, "filter"),
	          "the help screen does not explain the keys:\n%s", s);
	key("x");
	see("hot_a", "any key leaves help");
	quit();
}

/* Does the screen (captured with -e) set a foreground or background
 * colour anywhere?  Returns the offending SGR parameter, or 0. */
static int colour_in(const char *screen)
{
	for (const char *p = screen; (p = strstr(p, "\033[")) != NULL;) {
		p += 2;
		const char *end = p + strspn(p, "0123456789;");
		if (*end != 'm') {
			p = end;
			continue;
		}
		while (p < end) {
			int v = atoi(p);
			if ((v >= 30 && v <= 49) || (v >= 90 && v <= 107))
				if (v != 39 && v != 49) /* default colours */
					return v;
			p += strcspn(p, ";m");
			if (*p == ';')
				p++;
		}
		p = end;
	}
	return 0;
}

Test(tui, terminal_types_and_no_colour)
{
	static const struct {
		const char *env;
		bool colour_allowed;
	} runs[] = {
		{"env TERM=vt100", false},
		{"env NO_COLOR=1", false},
		{"env TERM=xterm-256color", true},
		{"env TERM=screen", true},
		{"env TERM=tmux-256color", true},
	};
	for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
		tui_start(runs[i].env);
		see_live_view();
		see("Function", "column header");
		char *attrs = h_tmux_capture_attrs(&g_tui.tmux);
		cr_assert_not_null(attrs);
		int colour = colour_in(attrs);
		if (!runs[i].colour_allowed)
			cr_assert_eq(colour, 0, "%s: the screen uses colour (SGR "
			             "%d)", runs[i].env, colour);
		free(attrs);
		quit();
		tui_teardown();
	}
}

/* For settled: the live view's header and table within 80 columns. */
static bool fits_80_with_header(const char *s, const void *unused)
{
	(void)unused;
	return widest_line(s) <= 80 && strstr(s, g_tui.target_pid) &&
	       strstr(s, "3.11") && strstr(s, "hot_a");
}

Test(tui, resize_keeps_the_header)
{
	tui_start(NULL);
	see_live_view();
	cr_assert(h_tmux_resize(&g_tui.tmux, 80, 24), "resize-window failed");
	/* The header is still there and every line fits in 80 columns. */
	const char *s = settled(fits_80_with_header, NULL, "after resizing to 80x24");
	cr_assert_leq(h_count_lines(s), 24);
	/* Back to the first size, so that stty's rows and columns match;
	 * tmux resizes the pane asynchronously, pytop then redraws wider. */
	cr_assert(h_tmux_resize(&g_tui.tmux, 100, 30), "resize-window failed");
	double deadline = h_now() + WAIT_S;
	while (s = screen_now(), widest_line(s) <= 80) {
		cr_assert(h_now() < deadline, "pytop did not grow back to 100 "
		          "columns:\n%s", s);
		h_sleep(0.1);
	}
	quit();
}

Test(tui, sigterm_restores_the_terminal)
{
	tui_start(NULL);
	see_live_view();
	pid_t shell = h_tmux_pane_pid(&g_tui.tmux);
	cr_assert_gt(shell, 0);
	pid_t pytop = h_find_child(shell, "pytop");
	cr_assert_gt(pytop, 0, "pytop is not a child of the pane's shell");
	cr_assert_eq(kill(pytop, SIGTERM), 0);
	check_terminal_restored();
}

/* User + system CPU clock ticks of pid, -1 if unreadable. */
static long cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *text = h_read_file(path);
	char *rp = text ? strrchr(text, ')') : NULL;
	long utime = -1, stime = -1;
	if (rp)
		sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld",
		       &utime, &stime);
	free(text);
	return utime < 0 ? -1 : utime + stime;
}

Test(tui, target_exit_keeps_final_figures)
{
	/* A short run: the view stays on the final figures until q. */
	struct tui *u = &g_tui;
	h_need_program("tmux");
	const char *py = h_need_python(H_PY_DEBIAN);
	u->dir = h_tmpdir();
	u->wl = h_workload("cpu_split.py");
	char *path = h_path(u->dir, "run.sh");
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "cd '%s'\n"
	        "stty -a > stty.before\n"
	        "'%s' -r 500 -- '%s' '%s' --seconds 1.5 --exit 3 --ready-file "
	        "ready\n"
	        "echo $? > exit_status\n"
	        "stty -a > stty.after\n"
	        "echo PYTOP-DONE\n"
	        "exec sleep %d\n",
	        u->dir, h_pytop(), py, u->wl, SERVER_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&u->tmux, 100, 30, path, SERVER_LIFETIME_S));
	free(path);
	see("hot_a", "hot function");
	/* Seen, not slept for: starved at nice 19, 1.5 s of its loop can
	 * take far longer than 1.5 s */
	see("[target exited", "the header says the target exited");
	h_sleep(1.0);
	const char *s = screen_now();
	cr_assert_null(strstr(s, "PYTOP-DONE"), "pytop left when its target "
	               "exited instead of showing the final figures:\n%s", s);
	cr_assert_not_null(strstr(s, "hot_a"), "final figures gone:\n%s", s);
	/* Waiting for q on the final figures must not spin. */
	pid_t pytop = h_find_child(h_tmux_pane_pid(&u->tmux), "pytop");
	cr_assert_gt(pytop, 0, "no pytop under the pane's shell");
	long before = cpu_ticks(pytop);
	h_sleep(1.0);
	long used = cpu_ticks(pytop) - before;
	cr_assert_leq(used, 10, "pytop used %ld clock ticks of CPU in 1 s while "
	              "showing final figures", used);
	quit();
	char *status_path = h_path(u->dir, "exit_status");
	char *status = h_read_file(status_path);
	cr_assert(status && atoi(status) == 3,
	          "pytop's exit status %s, the target's 3", status);
	free(status), free(status_path);
}

/* The TID the thread_states.py workload reports for one of its threads
 * (its truth file is written before it says it is ready). */
static int workload_tid(const char *role)
{
	char *path = h_path(g_tui.dir, "truth.json");
	json_t *truth = h_json_file(path);
	cr_assert_not_null(truth, "no truth file %s", path);
	json_t *t = json_object_get(json_object_get(truth, "threads"), role);
	cr_assert_not_null(t, "no %s thread in the truth", role);
	int tid = (int)h_num(t, "tid");
	json_decref(truth);
	free(path);
	return tid;
}

Test(tui, threads_screen_selects_a_thread)
{
	tui_start_workload("thread_states.py", NULL, "--idle", 100, 30);
	see("hash_loop", "the native thread's function");
	see("spin", "the GIL-bound thread's function");
	see("GIL ", "GIL share in the header");
	see("active ", "active share in the header");
	int spinner = workload_tid("gil_bound");

	key("t");
	see("Top function", "the threads screen's titles");
	see("run+GIL", "the GIL-bound thread's state");
	see(" run ", "the native thread's state");
	see("idle", "the sleeping threads' state");
	see("gone", "the thread that ended");
	see("Enter Funcs", "the threads screen's legend");

	/* Keep only the thread whose top function is spin, and choose it. */
	key("/");
	cr_assert(h_tmux_literal(&g_tui.tmux, "spin"));
	key("Enter");
	wait_without("hash_loop", "threads filtered to spin's");
	key("Enter");
	char what[64];
	snprintf(what, sizeof what, "samples of thread %d", spinner);
	see(what, "the functions view names the chosen thread");
	const char *s = wait_without("hash_loop", "functions of one thread");
	cr_assert_not_null(strstr(s, "spin"), "the thread's own function is "
	                   "missing:\n%s", s);
	see("a All", "the legend offers all threads again");

	key("a");
	see("samples of all threads", "all threads again");
	see("hash_loop", "the other thread's function is back");
	quit();
}

/* The parent PID of pid from /proc/PID/stat, -1 if unreadable. */
static int ppid_of(int pid)
{
	char path[64], *stat, *close;
	int ppid = -1;

	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	stat = h_read_file(path);
	/* "pid (comm) state ppid ...": comm may hold anything but ')'
	 * ends it for good at its last occurrence. */
	close = stat != NULL ? strrchr(stat, ')') : NULL;
	if (close != NULL && sscanf(close + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(stat);
	return ppid;
}

/* The PID at the start of the processes screen's row showing func. */
static int worker_pid(const char *screen, const char *func)
{
	char *line = line_with(screen, func);
	cr_assert_not_null(line, "no process row with %s:\n%s", func, screen);
	int pid = atoi(line);
	free(line);
	return pid;
}

/* For settled: both pool workers' rows and the tree's branches. */
static bool shows_both_workers(const char *s, const void *unused)
{
	(void)unused;
	return strstr(s, "pool_hot_a") && strstr(s, "pool_hot_b") &&
	       strstr(s, "Enter Funcs");
}

/* -s: P shows the family as a tree with both pool workers (children of
 * the target, by /proc, each with its own hot function on top); Enter on
 * one shows only its functions, a all of them again. */
Test(tui, processes_screen_selects_a_process)
{
	/* The workers' loops outlast a start starved at nice 19
	 * (scripts/quickstart.sh); quitting ends them. */
	g_tui.wl_args = "family --seconds 40";
	tui_start_workload("subprocs.py", NULL, "-s", 120, 30);
	see("procs ", "the process count in the header");
	key("P");
	see("Command", "the processes screen's titles");
	see("pool_hot_a", "one worker's top function");
	see("pool_hot_b", "the other worker's top function");
	see("Enter Funcs", "the processes screen's legend");
	const char *s = settled(shows_both_workers, NULL, "the processes "
	                        "screen with both workers' rows");
	int a = worker_pid(s, "pool_hot_a"), b = worker_pid(s, "pool_hot_b");
	cr_assert_neq(a, b, "one process for both functions:\n%s", s);
	cr_assert_eq(ppid_of(a), (int)g_tui.target, "worker %d of %d?", a,
	             ppid_of(a));
	cr_assert_eq(ppid_of(b), (int)g_tui.target, "worker %d of %d?", b,
	             ppid_of(b));
	cr_assert_not_null(strstr(s, "\u2500 "), "no tree branches:\n%s", s);

	/* Keep the row of pool_hot_b's worker, and choose it. */
	key("/");
	cr_assert(h_tmux_literal(&g_tui.tmux, "pool_hot_b"));
	key("Enter");
	wait_without("pool_hot_a", "processes filtered to pool_hot_b's");
	key("Enter");
	char what[64];
	snprintf(what, sizeof what, "samples of process %d", b);
	see(what, "the functions view names the chosen process");
	s = wait_without("pool_hot_a", "functions of one process");
	cr_assert_not_null(strstr(s, "pool_hot_b"), "the worker's own "
	                   "function is missing:\n%s", s);
	see("a All", "the legend offers all processes again");

	key("a");
	see("samples of running threads", "all processes again");
	see("pool_hot_a", "the other worker's function is back");
	quit();
}

/* A tmux pane is a session of its own, which the kernel's autogroup
 * scheduling weighs against the test's whole session as an equal, whatever
 * nice value the pane inherited: a tmux test run at nice 19 beside the
 * accuracy tests (scripts/quickstart.sh) took as much CPU as all of them.
 * So the pane's session gets the test's nice value. */
Test(tui, pane_session_keeps_the_tests_nice)
{
	char path[64], *dir, *script, *text = NULL;
	struct h_tmux t;
	int pane_nice = 0;

	h_need_program("tmux");
	snprintf(path, sizeof path, "/proc/%d/autogroup", (int)getpid());
	if (access(path, R_OK) != 0)
		cr_skip_test("no autogroup scheduling in this kernel");
	cr_assert_eq(setpriority(PRIO_PROCESS, 0, 19), 0);
	dir = h_tmpdir();
	script = h_path(dir, "run.sh");
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs("exec sleep 30\n", f);
	fclose(f);
	cr_assert(h_tmux_start(&t, 80, 24, script, 60));
	pid_t pane = h_tmux_pane_pid(&t);
	cr_assert_gt(pane, 0);
	snprintf(path, sizeof path, "/proc/%d/autogroup", (int)pane);
	for (double end = h_now() + 5; h_now() < end; h_sleep(0.05)) {
		free(text);
		text = h_read_file(path);
		const char *at = text ? strstr(text, " nice ") : NULL;
		pane_nice = at ? atoi(at + 6) : 0;
		if (pane_nice == 19)
			break;
	}
	h_tmux_kill(&t);
	cr_assert_eq(pane_nice, 19, "the pane's autogroup: %s", text);
	free(text), free(script);
	h_rmtree(dir);
	free(dir);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
