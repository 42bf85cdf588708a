/* harness.h - helpers for the end-to-end tests that run the real pytop
 * binary: child processes with captured output and time limits, the
 * interpreters under test, JSON Lines, and a private tmux server.
 *
 * Every child gets its own process group and PR_SET_PDEATHSIG(SIGKILL), so
 * a test that fails or times out does not leave workloads burning CPU.
 * Strings returned as "owned" must be freed by the caller.
 */
#ifndef PYTOP_TESTS_HARNESS_H
#define PYTOP_TESTS_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tap_note.h"

/* ---- growing byte buffer -------------------------------------------- */
struct h_buf {
	char *data; /* owned, always NUL-terminated once anything was added */
	size_t len, cap;
};

/* ---- child processes ------------------------------------------------ */
struct h_proc {
	pid_t pid;
	int out_fd, err_fd;   /* -1 once closed */
	struct h_buf out, err;
	bool exited;
	bool timed_out;       /* h_proc_finish had to kill it */
	int status;           /* exit code, or 128 + signal; valid when exited */
	double started;       /* h_now() at spawn */
	double seconds;       /* run time, valid when exited */
};

/* Start argv[0] (PATH is searched) with stdin from /dev/null and stdout,
 * stderr captured.  Returns false (and reports why) if it could not. */
bool h_proc_start(struct h_proc *p, const char *const argv[]);

/* The waits below on a child's doings count wall time less the time its
 * process and its descendants spent waiting for a CPU (patience.h), up to
 * PATIENCE_MAX_S more per test. */
/* Read output and reap for up to timeout_s.  Returns true once exited. */
bool h_proc_pump(struct h_proc *p, double timeout_s);

/* Pump until `needle` appears in stdout or timeout; true if it appeared. */
bool h_proc_wait_stdout(struct h_proc *p, const char *needle, double timeout_s);
/* Whether `path` exists, waiting up to timeout_s for p's programs to
 * create it; p's output is read meanwhile (into p->out, p->err). */
bool h_proc_wait_file(struct h_proc *p, const char *path, double timeout_s);

/* Pump until exit; after timeout_s SIGKILL its process group, mark
 * timed_out and reap.  Returns true if it exited by itself in time. */
bool h_proc_finish(struct h_proc *p, double timeout_s);

/* Send sig to the child (not its group). */
void h_proc_signal(struct h_proc *p, int sig);

/* Kill (SIGKILL, whole group) if still running, reap, free buffers. */
void h_proc_free(struct h_proc *p);

/* Run to completion: h_proc_start + h_proc_finish.  r is filled either way
 * (free with h_proc_free).  Returns true if it ran and exited in time. */
bool h_run(struct h_proc *r, double timeout_s, const char *const argv[]);

/* The single-letter state of /proc/PID/stat ('R', 'S', 'T', ...), or 0 if
 * the process is gone. */
char h_proc_state(pid_t pid);

/* TracerPid from /proc/PID/status, -1 if unreadable. */
int h_tracer_pid(pid_t pid);

/* A PID that certainly names no process right now (a reaped child). */
pid_t h_dead_pid(void);

/* A diagnostic line ("# ...", as TAP comments are) for the test log, e.g.
 * measured accuracy figures: tap_note.h's one writer.  Criterion sends a
 * test's stderr to /dev/null under TAP; a main() that called
 * h_keep_notes() first gets them into the runner's original stderr (the
 * TAP stream the automake driver logs). */
#define h_note test_note
/* Call in main() before Criterion starts: keeps a copy of stderr open for
 * the test processes and tells them where (env PYTOP_NOTES). */
void h_keep_notes(void);

/* The loaded mode: with PYTOP_TEST_LOAD=1 in the environment, one
 * CPU-bound competitor process per online core runs at the tests' own
 * priority while the tests run, so that the accuracy figures are checked
 * on a busy machine too (scripts/quickstart.sh test-loaded).  The
 * competitors share one process group (killed as one) and die with the
 * process that started them (PR_SET_PDEATHSIG). */
struct h_load {
	pid_t pgid; /* -1: none running */
	int hogs;   /* started and not yet reaped */
};
/* Start them if PYTOP_TEST_LOAD=1 (and note it in the log); returns how
 * many were started, 0 when the mode is off. */
int h_load_start(struct h_load *load);
/* Kill and reap them; nothing if none were started. */
void h_load_stop(struct h_load *load);

/* The main() of the end-to-end test binaries: keeps notes, then runs the
 * tests one at a time unless CRITERION_JOBS says otherwise (each one keeps
 * a CPU-bound target and pytop busy; two at a time would disturb each
 * other's figures in ways no truth measures), under the loaded mode's
 * competitors when PYTOP_TEST_LOAD=1. */
int h_main_one_at_a_time(int argc, char *argv[]);

/* Non-empty lines in s. */
int h_count_lines(const char *s);

/* Monotonic seconds. */
double h_now(void);
void h_sleep(double seconds);

/* ---- paths ---------------------------------------------------------- */
const char *h_pytop(void);          /* $PYTOP_BIN, or ./pytop */
char *h_workload(const char *file); /* owned: $PYTOP_SRCDIR/tests/workloads/file */
char *h_tmpdir(void);               /* owned: fresh directory under /tmp */
void h_rmtree(const char *dir);
char *h_path(const char *dir, const char *name); /* owned: dir/name */
char *h_read_file(const char *path); /* owned, NULL if unreadable */
bool h_wait_file(const char *path, double timeout_s);

/* ---- interpreters under test ---------------------------------------- */
#define H_PY_DEBIAN "/usr/bin/python3.11"
#define H_PY_PYENV "/root/.pyenv/versions/3.11.7/bin/python3.11"
#define H_PY_PYENV_310 "/root/.pyenv/versions/3.10.13/bin/python3.10"

/* The interpreters the end-to-end tests know, each by a slot name that
 * test names end with ("launch_split_py314_sid").  Where each comes from:
 *   H_SRC_SYSTEM      /usr/bin/python3.X (Debian 12's own: static, non-PIE)
 *   H_SRC_PYENV       $PYENV_ROOT (default ~/.pyenv)/versions/3.X.N, the
 *                     highest N installed (shared libpython, PIE)
 *   H_SRC_SID         $PYTOP_PYTHONS_DIR/pythons.txt (default
 *                     $PYTOP_SRCDIR/build/pythons): Debian sid's, static,
 *                     non-PIE; scripts/fetch_pythons.sh writes the list
 *   H_SRC_SID_SHARED  pythons-shared.txt there: sid's, PIE, linked to
 *                     libpython3.X.so */
enum h_py_source { H_SRC_SYSTEM, H_SRC_PYENV, H_SRC_SID, H_SRC_SID_SHARED };

struct h_python {
	const char *slot;       /* "py314_sid" */
	const char *version;    /* "3.14": what the interpreter must report */
	enum h_py_source source;
};

/* Every slot, in version order; ends with a NULL slot. */
extern const struct h_python h_pythons[];

/* The slot's entry, or NULL for an unknown name. */
const struct h_python *h_python_slot(const char *slot);

/* Owned path of the slot's interpreter, or NULL when it is not available
 * (then *why, if given, receives an owned reason naming the version, where
 * it was looked for and how to get it). */
char *h_python_find(const struct h_python *py, char **why);

/* Owned path of the slot's interpreter; skips the calling test with the
 * reason when the interpreter is not available, so that the test output
 * says "python 3.14 (sid) not available: ..." instead of passing.  An
 * unknown slot fails the test.  Applies the environment a pythons.txt
 * line names (third field "ENV=NAME=value,...") to this test process, so
 * children started afterwards inherit it. */
char *h_need_python_slot(const char *slot);

/* Skips the calling test (naming it) when `program` is not in PATH. */
void h_need_program(const char *program);

/* The interpreter's path, or skips the calling test (naming it) when it is
 * not installed. */
const char *h_need_python(const char *path);

/* ---- JSON ----------------------------------------------------------- */
/* Parse JSON Lines: an owned array of the objects, or NULL if any
 * non-empty line is not a JSON object (*bad_line is then set to its
 * 1-based number). */
json_t *h_json_lines(const char *text, int *bad_line);
json_t *h_json_file(const char *path); /* owned, NULL on error */

/* The entry of snap.functions whose name is `name` (borrowed), or NULL. */
json_t *h_func(json_t *snap, const char *name);
/* The same, of the function `name` defined in `file` (another module may
 * have a function of that name too: site.main, for one). */
json_t *h_func_in(json_t *snap, const char *name, const char *file);
/* The entry of snap.lines for `line` of the file whose name ends with
 * file_end (borrowed), or NULL. */
json_t *h_line_row(json_t *snap, const char *file_end, int line);
/* own / samples of that function in percent; 0 if absent. */
double h_own_pct(json_t *snap, const char *name);
double h_total_pct(json_t *snap, const char *name);
/* Integer / real / bool member, whichever JSON number type it has. */
double h_num(json_t *obj, const char *key);
/* The ticks a snapshot says pytop did not take, in percent of those its
 * requested rate asks over its elapsed time (0 when it took them all).
 * A stall of the whole machine (a VM's CPU taken by its host) longer
 * than the sampler catches up is time a wall-clock truth counts in the
 * function it hit and pytop has no tick of: a share can move by at most
 * this much for it, which checks against wall time allow for. */
double h_unsampled_pct(json_t *snap);
/* A cpu_split.py --timeline truth cut to pytop's own window, when the
 * workload ran before and after it (attach): its calls cut to the
 * Unix-time span the snapshot sampled (time_us back to elapsed before
 * it), each function's seconds there stored as its "seconds" and the
 * span as "loop_wall"; the test fails if the two overlap under 1 s. */
void h_truth_to_window(json_t *truth, json_t *snap, const char *what);

/* ---- tmux ------------------------------------------------------------- */
struct h_tmux {
	char sock[64];        /* -L name: private server for this test */
	bool started;
	pid_t pane;           /* the pane's first process */
};

/* Start a private server with one w x h window running `sh script`;
 * the script is what the pane runs.  A watchdog kills the server after
 * `lifetime_s` even if the test dies. */
bool h_tmux_start(struct h_tmux *t, int w, int h, const char *script,
                  double lifetime_s);
/* Owned: the visible pane text, NULL if tmux failed. */
char *h_tmux_capture(struct h_tmux *t);
/* Owned: the pane with its attributes as SGR escape sequences (-e). */
char *h_tmux_capture_attrs(struct h_tmux *t);
/* Owned: the screen when it does (or, present false, does not) show
 * `needle` in two captures 0.2 s apart, the second one; NULL otherwise. */
char *h_tmux_settled(struct h_tmux *t, const char *needle, bool present);
/* Owned: a settled capture that contains `needle`, or NULL after
 * timeout_s (counted as patience.h says, for the pane's programs) (then *last, if given, receives the last capture, owned). */
char *h_tmux_wait_for(struct h_tmux *t, const char *needle, double timeout_s,
                      char **last);
/* Whether `path` exists, waiting up to timeout_s for the pane's
 * programs to create it. */
bool h_tmux_wait_file(struct h_tmux *t, const char *path, double timeout_s);
/* send-keys with these arguments (tmux key names or literal text). */
bool h_tmux_keys(struct h_tmux *t, const char *const keys[]);
bool h_tmux_literal(struct h_tmux *t, const char *text); /* send-keys -l */
bool h_tmux_resize(struct h_tmux *t, int w, int h);
pid_t h_tmux_pane_pid(struct h_tmux *t); /* the pane's first process */
void h_tmux_kill(struct h_tmux *t);

/* First child of `parent` whose comm is `comm`, 0 if none. */
pid_t h_find_child(pid_t parent, const char *comm);

#endif
