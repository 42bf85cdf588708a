/* snapshot.h - the immutable picture of the profile that the views draw.
 * This is the seam between the engine and ui/: views include this header
 * (and options.h) and nothing else from src/ (sample_errors.h, which this
 * header includes, names the error kinds).
 *
 * A snapshot owns its arrays and the strings inside them (the aggregator
 * copies them in: under code churn it forgets the names of functions no
 * longer seen, and a view may keep a snapshot for as long as it likes).
 * Views may sort and filter the arrays in place.
 */
#ifndef PYTOP_SNAPSHOT_H
#define PYTOP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sample_errors.h"

/* What the own samples of a row were doing, and what memory they cost.
 * The kinds split the row's own samples (fractions of a sample: a
 * thread's system time is only known per clock tick and its run-queue
 * time when the wait ends, so both are shared out over the samples they
 * span; see aggregator.h):
 *  python   - on a CPU, running bytecode;
 *  native   - on a CPU in user mode, in native code called from Python
 *             (the leaf frame is in a call);
 *  system   - on a CPU in the kernel on the thread's behalf;
 *  cpu_wait - runnable (state R) but in the run queue, waiting for a CPU
 *             (the scheduler's run-queue delay, schedstat);
 *  gil_wait - waiting for the GIL: the thread neither holds it nor is in
 *             a call that released it (on a CPU or not);
 *  waiting  - off CPU otherwise: sleeping, I/O, locks (only counted with
 *             --idle).
 * python + native + system + cpu_wait + gil_wait + waiting == own (up to
 * rounding), at every snapshot: samples whose system and run-queue
 * shares are not known yet count as their class (python or native) until
 * they are.
 * mem_growth: bytes of RSS growth charged to these samples, mem_shrink
 * bytes of RSS shrink charged the same way (their difference is the net
 * growth, snap_mem_net); minflt and majflt: the sampled threads' page
 * faults charged to them. */
struct snap_split {
	double python, native, system, waiting;
	double cpu_wait, gil_wait;
	uint64_t mem_growth, mem_shrink;
	uint64_t minflt, majflt;
};

void snap_split_add(struct snap_split *to, const struct snap_split *d);

/* Net RSS growth, bytes: mem_growth - mem_shrink (negative: gave back
 * more than it took). */
int64_t snap_mem_net(const struct snap_split *s);

/* Counters for one function or one line.  "own" = the leaf frame was here;
 * "total" = somewhere on the stack (once per sample, even under recursion).
 * *_win = during the last refresh window only.  Times are the summed
 * sampling intervals of those samples, in seconds.  mem_kept: net RSS
 * growth of the own samples over the last minute (mem_kept.h), bytes. */
struct snap_counts {
	uint64_t own, total;
	uint64_t own_win, total_win;
	double own_s, total_s;
	struct snap_split split, split_win; /* of the own samples */
	int64_t mem_kept;
};

struct snap_func {
	const char *name; /* qualified name */
	const char *file; /* native: source file, or the module when unknown */
	int line;         /* first line of the function (native: 0 unknown) */
	struct snap_counts c;
	bool native;      /* a native function (--native) */
	const char *module; /* native: its module's file name; "" for Python */
	bool other;       /* "[other]": the rows folded away (see folded_funcs) */
};

struct snap_line {
	const char *name; /* function the line belongs to */
	const char *file;
	int line;
	struct snap_counts c;
	bool native;      /* a native source line (--native, debug info) */
	const char *module; /* native: its module's file name; "" for Python */
	bool other;       /* "[other]": the rows folded away (see folded_lines) */
};

/* --native: the own samples of a Python line (caller_file:caller_line)
 * whose leaf was the native function name - where in native code that
 * line's time went.  c.own == c.total; the split covers those samples. */
struct snap_callee {
	const char *caller_file; /* the Python line, as its snap_line names it */
	int caller_line;
	const char *name;        /* the native leaf function */
	const char *file;        /* its source file, or its module */
	int line;                /* its first line, 0 unknown */
	const char *module;      /* its module's file name */
	struct snap_counts c;
};

/* The stack table (profile/stack_table.h), for the call tree, the flame
 * graph and exports.  A frame: a function and the line it was on.  A
 * node: a stack, as its innermost frame and the node of the stack
 * without it (node 0 is the root, the empty stack, frame unused; node 1
 * "[other stacks]", the stacks folded away, whose frame says other).
 * Parents come before their children. */
struct snap_frame {
	const char *name;   /* qualified name, or "[other stacks]" */
	const char *file;   /* native: source file, or its module */
	int line;           /* the frame's line (native: 0 unknown) */
	int first_line;     /* its function's first line (as snap_func.line) */
	bool native;
	bool other;         /* "[other stacks]" */
	const char *module; /* native: its module's file name; "" for Python */
	bool marker;        /* "[N more frames]": the frames a truncated stack
	                       left out; it has no line */
	bool folded_func;   /* its function's row folded into "[other]"
	                       (aggregator.h, bounded memory): the frame keeps
	                       its name, its samples count in "[other]" */
	bool folded_line;   /* likewise its line's row */
	bool folded_other;  /* "[other]": the one frame standing for the
	                       frames of folded rows whose code objects
	                       pytop forgot (folded_func set too) */
};

enum snap_folded_kind { SNAP_FOLDED_FUNC, SNAP_FOLDED_LINE, SNAP_FOLDED_CALLEE };

/* One thread's counts of a function, line or callee on stacks folded
 * into "[other stacks]".  other: the row is "[other]" (a callee: its
 * function's); a callee's Python line is caller_file:caller_line, or
 * "[other]" when caller_other. */
struct snap_folded_row {
	enum snap_folded_kind kind;
	pid_t tid, pid;
	const char *name, *file, *module;
	int line;           /* a function's first line, a line's line */
	bool native, other;
	const char *caller_file;
	int caller_line;
	bool caller_other;
	struct snap_counts c;
};

struct snap_stack_node {
	uint32_t parent;    /* node index; the root's is 0 */
	uint32_t frame;     /* index into stack_frames */
	uint32_t depth;     /* frames from the root: 1 = outermost */
};

/* The samples of one thread whose whole stack was one node: the own
 * samples of its innermost frame there, and their split (a node's
 * total is the sum of the stacks at or under it).  Not filtered by
 * thread_filter / process_filter: tid and pid say whose they are; tid
 * -pid: the threads of process pid that are gone (aged out, as the
 * threads table's 64 kept). */
struct snap_stack {
	uint32_t node;
	pid_t tid, pid;
	uint64_t samples, samples_win;
	double seconds;     /* their summed sampling intervals */
	struct snap_split split, split_win;
	int64_t mem_kept;   /* net RSS growth over the last minute (as
	                       snap_counts.mem_kept): a row's is the sum of
	                       its own stacks' */
};

enum snap_thread_state {
	THREAD_UNKNOWN = 0,
	THREAD_RUNNING_GIL,   /* on a CPU, holding the GIL: running Python */
	THREAD_RUNNING,       /* on a CPU without the GIL: native code */
	THREAD_GIL_WAIT,      /* waiting for the GIL: asleep on it, or runnable
	                         without it and not in a call that released it */
	THREAD_IDLE,          /* off CPU: sleeping, I/O, lock */
	THREAD_GONE,          /* no longer in the interpreter's thread list */
};

struct snap_thread {
	pid_t tid;
	const char *name;   /* OS thread name, "" if unknown */
	const char *py_name; /* the program's name for it (threading), escaped
	                        (py_name_text.h); "" if unknown */
	uint64_t samples;   /* since start */
	uint64_t samples_win;
	bool running;       /* in the last sample seen */
	const char *top_func; /* leaf function of its last sample, or "" */
	enum snap_thread_state state; /* at the last REC_THREADS */
	char os_state;      /* /proc state letter, 0 unknown */
	double cpu_user_pct, cpu_sys_pct; /* over the last window, % of one CPU */
	double gil_pct;     /* share of the window's thread reports holding the GIL */
};

/* The target process as a whole, from /proc (libproc2), read at each
 * snapshot.  Rates and percentages are over the snapshot's window. */
struct snap_gauges {
	bool valid;                 /* false until the first read succeeded */
	uint64_t rss, rss_peak;     /* bytes; peak = the kernel's high-water mark */
	double rss_growth_per_min;  /* bytes per minute over the last minute
	                               (rss_rate.h); negative: shrinking */
	uint64_t mem_limit;         /* bytes: the cgroup's memory.max if set,
	                               else the machine's RAM */
	double cpu_limit;           /* CPUs the cgroup's quota allows, 0 = none */
	double cpu_throttled_pct;   /* the window's time the cgroup's CPU quota
	                               held it back (summed over CPUs), % */
	uint64_t minflt, majflt;    /* cumulative, whole process */
	double minflt_rate, majflt_rate; /* per second */
	double cpu_user, cpu_system;     /* seconds, cumulative */
	double cpu_user_pct, cpu_system_pct; /* % of one CPU */
	int threads;                /* OS threads of the process */
	uint64_t mem_unattributed;  /* RSS growth seen while no sampled
	                               thread was running (not in any row) */
};

enum snap_verdict {
	VERDICT_NONE = 0,   /* too little data to say */
	VERDICT_CPU,        /* user time ~ wall x busy threads */
	VERDICT_SYSTEM,     /* a large share of the CPU time is in the kernel */
	VERDICT_MEMORY,     /* major faults, or RSS near the memory limit */
	VERDICT_WAITING,    /* mostly off CPU: sleeping, I/O, locks */
	VERDICT_STARVED,    /* runnable, but mostly waiting for a CPU */
	VERDICT_THROTTLED,  /* ... held back by its cgroup's CPU quota */
};

/* A process of the followed family (-s).  Values match rec_process_state. */
enum snap_process_state {
	PROCESS_LOOKING = 0,  /* found; its runtime not identified yet */
	PROCESS_PYTHON,       /* sampled */
	PROCESS_NOT_PYTHON,   /* listed, not sampled: another program */
	PROCESS_UNREADABLE,   /* Python, not sampled: see `python` for why */
	PROCESS_EXITED,
};

struct snap_process {
	pid_t pid, ppid;
	int depth;            /* in the tree: 0 = the target (or an orphan) */
	const char *command;  /* its command line, "" if unknown */
	const char *python;   /* "3.12.1", or why it is not sampled */
	enum snap_process_state state;
	char os_state;        /* /proc state letter, 0 unknown */
	double cpu_user_pct, cpu_sys_pct; /* all its threads, % of one CPU */
	uint64_t rss_bytes;
	uint64_t samples, samples_win; /* its threads' samples */
	const char *top_func; /* its most sampled leaf function in the window
	                         (since start if the window had none), or "" */
};

/* --push's health (ui/push_live.h fills it in as the views take the
 * snapshot; the engine leaves it zero): periods sent, given up (a 4xx, or
 * retries exhausted) and dropped (the queue was full), attempts failed in
 * a row, the last success (Unix seconds, 0 never) and the last error. */
struct snap_push {
	bool on;
	uint64_t sent, failed, dropped;
	unsigned failing_tries;
	int64_t last_ok_unix;
	char last_error[80];
};

/* pytop replay: what part of a recording the snapshot shows.  A
 * replay's snapshot holds every figure the recording keeps (man pytop:
 * REPLAY); those it does not keep are left 0 and the views show them as
 * unknown when `on`. */
#define SNAP_REPLAY_HISTORY 60

struct snap_replay {
	bool on;
	char file[256];       /* the recording, as the user named it */
	double extent_s;      /* the recording's end, seconds from its start */
	double at_s;          /* the position: the refresh shown */
	double from_s, to_s;  /* the figures cover [from_s, to_s) */
	bool window;          /* from_s / to_s were chosen (--from/--to, [ ]) */
	double delay_s;       /* the live view's refresh interval (-d) */
	/* The TUI's: the gauges at the refreshes up to this one, oldest
	 * first, for the sparklines (a replay jumps: the history comes with
	 * the position). */
	struct snap_gauges history[SNAP_REPLAY_HISTORY];
	size_t nhistory;
};

struct snapshot {
	/* target */
	pid_t pid;
	double target_started;    /* CLOCK_REALTIME seconds; 0 unknown */
	char command[256];        /* the target's command line, spaces between */
	char python_version[16];  /* "3.11.2" */
	bool target_exited;
	bool target_exec;         /* it ran exec after pytop found it: its new
	                             program is not sampled (figures stop) */
	int exit_status;          /* valid when target_exited; -1 unknown */

	/* sampling health */
	double elapsed_s;         /* since sampling started */
	int64_t time_us;          /* Unix time at the window's end, in us */
	double window_s;          /* length of the last refresh window */
	uint64_t samples;         /* stack samples counted since start */
	uint64_t samples_win;
	uint64_t ticks;           /* sampler ticks since start */
	uint64_t errors;          /* failed or torn samples since start */
	uint64_t errors_by_kind[SAMPLE_ERR_KINDS]; /* the same by why; they
	                             sum to errors (sample_errors.h names them) */
	uint64_t deep_cut;        /* samples of stacks deeper than the frame
	                             limit, since start: shown with a
	                             "[N more frames]" frame in place of N */
	uint64_t dropped;         /* records lost because the ring was full */
	double rate_hz;           /* ticks per second over the last window */
	int requested_hz;
	int threads_running, threads_total; /* at the last tick */
	double pytop_cpu_pct;     /* pytop's own CPU over the last window */
	double sample_work_us;    /* mean sampler work per tick, last window */
	bool idle_mode;           /* --idle: off-CPU samples counted */
	double gil_held_pct;      /* ticks some thread held the GIL, last window */
	/* Of the last window's ticks: some thread of the target runnable
	 * (/proc state R), and that runnable time divided into on a CPU
	 * (active) and in the run queue waiting for one (cpu_wait) by how
	 * the runnable threads' schedstat run time and delay grew. */
	double runnable_pct, active_pct, cpu_wait_pct;
	/* 0 = all threads.  Else funcs and lines count only this tid's
	 * samples, and samples / samples_win are that thread's samples with a
	 * Python stack, so percentages are shares of the thread's samples. */
	pid_t thread_filter;
	/* > 0: funcs, lines and split count only the last recent_s seconds
	 * (recent_asked was asked for; the span is shorter early in a run),
	 * recent_samples the samples among them (what 100 % of a row is);
	 * 0: since start (or reset).  See profile/recent.h. */
	double recent_s, recent_asked;
	uint64_t recent_samples;
	/* --native: the Debian packages whose debug symbols would name the
	 * functions shown as "module+0x..." ("python3.11-dbg"), blank
	 * separated; "" = none known. */
	char debug_packages[128];

	struct snap_gauges gauges;
	bool split_off;             /* --no-split: every snap_split is 0 */
	struct snap_split split, split_win; /* all counted samples */
	enum snap_verdict verdict;  /* over the last window */
	char verdict_reason[96];    /* e.g. "user 97% of 1.0 busy thread" */

	/* -w / pytop record (src/record/recorder.h) */
	bool recording;
	uint64_t record_merged;   /* 100 ms buckets merged into later ones
	                             because the writer was behind */
	bool record_failed;       /* the recording stopped (write failed) */

	/* --native */
	bool native;              /* native stacks are sampled */
	bool native_all;          /* the interpreter's plumbing is shown */
	uint64_t native_missed;   /* thread samples without a native stack */
	const char *native_method; /* "perf" (nothing stops) or "ptrace"; static */

	/* Bounded memory under code churn: beyond a cap, the function and
	 * line rows with the fewest samples are folded into one "[other]"
	 * row each (other = true), which carries their counts, so own still
	 * adds up to samples.  Its total counts a sample with a folded row on
	 * its stack once.  How many rows were folded since start: */
	uint64_t folded_funcs, folded_lines;
	/* Beyond the stack table's cap, the stacks with fewest samples fold
	 * into "[other stacks]" (node 1); stacks of codes that went fold
	 * too.  How many stacks were folded since start (or reset): */
	uint64_t folded_stacks;

	struct snap_func *funcs;     size_t nfuncs;
	struct snap_line *lines;     size_t nlines;
	struct snap_thread *threads; size_t nthreads;
	/* by caller (file, line), then most own first; filtered like lines */
	struct snap_callee *callees; size_t ncallees;
	/* every stack with samples since start (or reset) */
	struct snap_frame *stack_frames;      size_t nstack_frames;
	struct snap_stack_node *stack_nodes;  size_t nstack_nodes;
	struct snap_stack *stacks;            size_t nstacks;
	/* What the stacks folded into "[other stacks]" were samples of: per
	 * thread (tid -PID: its process's ended threads), the counts of
	 * their functions, lines and callees (profile/folded_rows.h), so
	 * that rows counted from the stacks stay exact; has_folded_rows
	 * says the "[other stacks]" cells are all told here (a replayed
	 * recording has none: its "[other stacks]" is a row of its own). */
	struct snap_folded_row *stack_folded_rows; size_t nstack_folded_rows;
	bool has_folded_rows;

	/* -s: the followed family, in tree order (empty without -s) */
	bool following;
	/* 0 = all processes.  Else funcs and lines count only this process's
	 * samples (and samples / samples_win are its samples with a Python
	 * stack), like thread_filter. */
	pid_t process_filter;
	uint64_t processes_seen;      /* descendants found since start */
	uint64_t processes_exited;    /* ... that have exited */
	uint64_t processes_skipped;   /* not listed: too many at once */
	uint64_t processes_unsampled; /* Python, not sampled: too many at once */
	struct snap_process *processes; size_t nprocesses;

	struct snap_push push;
	struct snap_replay replay;

	char *strings; /* owned: the rows' strings (snapshot_own_strings) */
};

void snapshot_free(struct snapshot *s); /* frees the arrays and strings */

/* Copy every string the rows point at (functions, lines, callees,
 * threads, processes) into one block the snapshot owns, and point the
 * rows at the copies.  false on OOM (the rows are then left as they
 * were: the caller drops them). */
bool snapshot_own_strings(struct snapshot *s);

/* to += c, every counter (to sum rows). */
void snap_counts_add(struct snap_counts *to, const struct snap_counts *c);

/* The native callees of the Python line file:line, most own first: *n of
 * them from the one returned (NULL, *n = 0 when it has none). */
const struct snap_callee *snapshot_callees_of(const struct snapshot *s,
                                              const char *file, int line,
                                              size_t *n);

/* Order of functions and of lines in a snapshot: most own first, then
 * most total, then by name, file and line (lines: file, line, name), a
 * total order.  For qsort. */
int snapshot_func_cmp(const void *a, const void *b);
int snapshot_line_cmp(const void *a, const void *b);

/* Order of callees in a snapshot: caller file, caller line, most own
 * first, then name.  For qsort. */
int snapshot_callee_cmp(const void *a, const void *b);

/* "CPU-bound", "system-bound", "memory-bound", "waiting", "" (none). */
const char *snapshot_verdict_word(enum snap_verdict v);

/* What a view pulls snapshots from.  The engine provides one backed by the
 * live pipeline; tests provide fixed ones. */
struct snapshot_source {
	void *ctx;
	/* Drain pending samples; cheap, called often (every ~50 ms). Returns
	 * false when the target is gone and everything has been drained. */
	bool (*poll)(void *ctx);
	/* Fill *out (caller frees with snapshot_free) and start a new window. */
	void (*take)(void *ctx, struct snapshot *out);
	/* Forget all counts (the `r` key). */
	void (*reset)(void *ctx);
	/* Restrict funcs/lines of later snapshots to one thread (0 = all). */
	void (*filter_thread)(void *ctx, pid_t tid);
	/* --native: show (true) or hide the interpreter's plumbing frames from
	 * now on (counts restart).  NULL or a no-op without --native. */
	void (*show_native_all)(void *ctx, bool on);
	/* Restrict funcs/lines of later snapshots to one process (0 = all);
	 * NULL when the source has no processes. */
	void (*filter_process)(void *ctx, pid_t pid);
	/* Later snapshots count the last `seconds` only (0: since start);
	 * NULL when the source keeps no history. */
	void (*set_window)(void *ctx, double seconds);
	/* pytop replay only (NULL live).  Move the position by `refreshes`
	 * (INT_MIN / INT_MAX: to the start / end); false when it could not
	 * move (already there). */
	bool (*replay_step)(void *ctx, int refreshes);
	/* The window's from (REPLAY_MARK_FROM) or to (REPLAY_MARK_TO) at the
	 * position, or no window (REPLAY_MARK_CLEAR); false when refused
	 * (from at or after to). */
	bool (*replay_mark)(void *ctx, int which);
};

enum { REPLAY_MARK_FROM, REPLAY_MARK_TO, REPLAY_MARK_CLEAR };

#endif
