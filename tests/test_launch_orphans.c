/* test_launch_orphans.c - a launched program never outlives pytop by
 * accident, however pytop ends.
 *
 * The program (a Python script) starts a child of its own (sh), which
 * starts one (sleep), and writes the three PIDs to a file; then pytop is
 * made to end: by itself (--duration, or q in the live view), by SIGTERM,
 * SIGHUP, a crash (SIGSEGV, SIGABRT) or SIGKILL.  The program and its
 * descendants must be gone (or zombies: dead, waiting for a reaper)
 * within a few seconds.  SIGKILL cannot be caught: the program dies of its
 * PR_SET_PDEATHSIG, its own descendants run on, as the man page says.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define START_WITHIN_S 15.0
#define GONE_WITHIN_S 4.0 /* pytop's SIGTERM grace is 2 s */
#define SERVER_LIFETIME_S 60

/* One run: the directory, pytop (batch: a child; TUI: in tmux), and the
 * program and its descendants once known. */
struct run {
	char *dir, *pids_file;
	struct h_proc pytop;
	bool batch_started;
	struct h_tmux tmux;
	pid_t tui_pytop;
	pid_t program, child, grandchild;
};

static struct run g_run; /* torn down by .fini even after a failed assert */

static void teardown(void)
{
	struct run *r = &g_run;
	if (r->batch_started)
		h_proc_free(&r->pytop);
	h_tmux_kill(&r->tmux);
	pid_t left[] = {r->tui_pytop, r->program, r->child, r->grandchild};
	for (size_t i = 0; i < sizeof left / sizeof left[0]; i++)
		if (left[i] > 0 && h_proc_state(left[i]) != 0)
			kill(left[i], SIGKILL);
	h_rmtree(r->dir);
	free(r->dir);
	free(r->pids_file);
	memset(r, 0, sizeof *r);
}

static char *write_program(void)
{
	struct run *r = &g_run;
	char *prog = h_path(r->dir, "prog.py");
	FILE *f = fopen(prog, "w");
	cr_assert_not_null(f);
	fputs("import os, subprocess, sys, time\n"
	      "gc = sys.argv[1] + '.gc'\n"
	      "child = subprocess.Popen(['sh', '-c', 'sleep 300 & "
	      "echo $! > \"$0.tmp\"; mv \"$0.tmp\" \"$0\"; wait', gc])\n"
	      "while not os.path.exists(gc):\n"
	      "    time.sleep(0.01)\n"
	      "with open(sys.argv[1] + '.tmp', 'w') as f:\n"
	      "    f.write('%d %d %s\\n' % (os.getpid(), child.pid, "
	      "open(gc).read().strip()))\n"
	      "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
	      "while True:\n"
	      "    time.sleep(0.02)\n",
	      f);
	fclose(f);
	return prog;
}

static void setup_dir(void)
{
	struct run *r = &g_run;
	h_need_python(H_PY_DEBIAN);
	r->dir = h_tmpdir();
	r->pids_file = h_path(r->dir, "pids");
}

/* Wait for the program to write its PID, its child's and grandchild's. */
static void learn_pids(void)
{
	struct run *r = &g_run;
	cr_assert(h_wait_file(r->pids_file, START_WITHIN_S),
	          "the program never started");
	char *text = h_read_file(r->pids_file);
	int program = 0, child = 0, grandchild = 0;
	cr_assert(text && sscanf(text, "%d %d %d", &program, &child,
	                         &grandchild) == 3);
	free(text);
	r->program = program;
	r->child = child;
	r->grandchild = grandchild;
	cr_assert(h_proc_state(r->program) != 0 && h_proc_state(r->child) != 0 &&
	          h_proc_state(r->grandchild) != 0);
}

static bool gone(pid_t pid)
{
	char state = h_proc_state(pid);
	return state == 0 || state == 'Z' || state == 'X';
}

/* All three gone within GONE_WITHIN_S, or (descendants_survive) the
 * program gone and its child and grandchild still running. */
static void expect_family_gone(const char *how, bool descendants_survive)
{
	struct run *r = &g_run;
	double deadline = h_now() + GONE_WITHIN_S;
	while (!(gone(r->program) && (descendants_survive ||
	                              (gone(r->child) && gone(r->grandchild)))) &&
	       h_now() < deadline)
		h_sleep(0.05);
	cr_assert(gone(r->program), "%s: the launched program (%d) still runs",
	          how, (int)r->program);
	pid_t desc[] = {r->child, r->grandchild};
	for (int i = 0; i < 2; i++) {
		if (descendants_survive)
			cr_assert(!gone(desc[i]), "%s: the program's %s (%d) is gone "
			          "too, which the man page says it is not", how,
			          i ? "grandchild" : "child", (int)desc[i]);
		else
			cr_assert(gone(desc[i]), "%s: the program's %s (%d) still runs",
			          how, i ? "grandchild" : "child", (int)desc[i]);
	}
}

/* ---- batch mode ------------------------------------------------------- */

static void batch_start(const char *duration)
{
	struct run *r = &g_run;
	setup_dir();
	char *prog = write_program();
	const char *argv[] = {h_pytop(), "-b", "-d", "0.2", "--duration",
	                      duration, "--", H_PY_DEBIAN, prog, r->pids_file,
	                      NULL};
	cr_assert(h_proc_start(&r->pytop, argv), "cannot start pytop");
	r->batch_started = true;
	free(prog);
	learn_pids();
}

/* pytop gets `sig` while the program runs; pytop must end, and with it
 * the program's family. */
static void batch_signal(int sig, int want_status, bool child_survives)
{
	struct run *r = &g_run;
	batch_start("60");
	h_sleep(0.3); /* sampling */
	h_proc_signal(&r->pytop, sig);
	cr_assert(h_proc_finish(&r->pytop, 10), "pytop did not end after %s",
	          strsignal(sig));
	cr_assert_eq(r->pytop.status, want_status,
	             "pytop's exit status %d after %s, want %d; stderr: %s",
	             r->pytop.status, strsignal(sig), want_status,
	             r->pytop.err.data ? r->pytop.err.data : "");
	expect_family_gone(strsignal(sig), child_survives);
}

TestSuite(orphans, .fini = teardown, .timeout = 40);

Test(orphans, batch_time_up)
{
	struct run *r = &g_run;
	batch_start("1");
	cr_assert(h_proc_finish(&r->pytop, 10), "pytop did not end at --duration");
	cr_assert_eq(r->pytop.status, 143, "exit status %d, want 143 (the "
	             "program stopped by SIGTERM)", r->pytop.status);
	expect_family_gone("--duration", false);
}

/* The program's status: it got SIGTERM from pytop. */
Test(orphans, batch_sigterm)
{
	batch_signal(SIGTERM, 143, false);
}

Test(orphans, batch_sighup)
{
	batch_signal(SIGHUP, 143, false);
}

/* pytop dies of the signal itself. */
Test(orphans, batch_sigsegv)
{
	batch_signal(SIGSEGV, 128 + SIGSEGV, false);
}

Test(orphans, batch_sigabrt)
{
	batch_signal(SIGABRT, 128 + SIGABRT, false);
}

/* Nothing in pytop runs: the kernel's PR_SET_PDEATHSIG kills the program;
 * its own descendants are left (the man page says so). */
Test(orphans, batch_sigkill)
{
	batch_signal(SIGKILL, 128 + SIGKILL, true);
}

/* ---- the live view ------------------------------------------------------ */

/* pytop in a tmux pane; the inner shell writes its PID (exec keeps it),
 * which is pytop's. */
static void tui_start(void)
{
	struct run *r = &g_run;
	h_need_program("tmux");
	setup_dir();
	char *prog = write_program();
	char *script = h_path(r->dir, "run.sh");
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "cd '%s'\n"
	        "sh -c 'echo $$ > pid.tmp; mv pid.tmp pytop.pid; exec \"$0\" \"$@\"' "
	        "'%s' -d 0.2 -- '%s' '%s' '%s' 2> pytop.err\n"
	        "echo $? > exit_status\n"
	        "echo PYTOP-DONE\n"
	        "exec sleep %d\n",
	        r->dir, h_pytop(), H_PY_DEBIAN, prog, r->pids_file,
	        SERVER_LIFETIME_S);
	fclose(f);
	free(prog);
	cr_assert(h_tmux_start(&r->tmux, 100, 30, script, SERVER_LIFETIME_S),
	          "cannot start tmux");
	free(script);
	learn_pids();
	char *pidfile = h_path(r->dir, "pytop.pid");
	char *pid = h_read_file(pidfile);
	cr_assert_not_null(pid);
	r->tui_pytop = (pid_t)atoi(pid);
	free(pid);
	free(pidfile);
	h_sleep(0.3); /* sampling */
}

static void tui_expect_done(const char *how)
{
	struct run *r = &g_run;
	char *last = NULL;
	char *done = h_tmux_wait_for(&r->tmux, "PYTOP-DONE", 10, &last);
	cr_assert_not_null(done, "%s: pytop did not end; screen:\n%s", how,
	                   last ? last : "");
	free(done);
	expect_family_gone(how, false);
}

Test(orphans, tui_quit)
{
	tui_start();
	const char *keys[] = {"q", NULL};
	cr_assert(h_tmux_keys(&g_run.tmux, keys));
	tui_expect_done("q");
}

Test(orphans, tui_sighup)
{
	tui_start();
	kill(g_run.tui_pytop, SIGHUP);
	tui_expect_done("SIGHUP");
}

/* The live view's fatal-signal handler puts the terminal back, then hands
 * the signal on to the engine's, which stops the family. */
Test(orphans, tui_sigsegv)
{
	tui_start();
	kill(g_run.tui_pytop, SIGSEGV);
	tui_expect_done("SIGSEGV");
}
