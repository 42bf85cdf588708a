/* aggregator_priv.h - what the aggregator's files share (aggregator.h
 * is the interface): its rows, threads and state, and the few functions
 * one file calls in the other.  aggregator.c ingests records and counts
 * their stacks; aggregator_split.c splits their time and charges their
 * memory; aggregator_sweep.c keeps the tables bounded;
 * aggregator_threads.c keeps the threads (rows, names, state, ageing);
 * aggregator_snapshot.c turns the counts into a snapshot and closes the
 * window; aggregator_folded.c keeps the rows of the stacks the stack
 * table folds (folded_rows.h); aggregator_bucket.c is the recorder's
 * side.  Nothing outside them (and the tests) includes this header. */
#ifndef PYTOP_AGGREGATOR_PRIV_H
#define PYTOP_AGGREGATOR_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "profile/aggregator.h"
#include "profile/code_table.h"
#include "profile/cpu_split.h"
#include "profile/folded_rows.h"
#include "profile/mem_kept.h"
#include "profile/proc_table.h"
#include "profile/snapshot.h"
#include "profile/stack_table.h"
#include "profile/strtab.h"

struct rec_sample;

/* What the fold policy ranks a function or line row by (agg_fold):
 * how many samples it was on since the last reset (once per sample),
 * and how lately.  The figures a snapshot shows are counted from the
 * stacks (stack_derive.h), not here. */
struct agg_use {
	uint64_t total;
	uint64_t stamp; /* serial of the last sample that counted it */
};

struct agg_func {
	uint64_t key;            /* in func_by_key; 0 for row 0, "[other]" */
	const char *name, *file; /* interned */
	const char *module;      /* interned; "" for Python */
	bool native;
	int line;                /* smallest first line of its codes */
	struct agg_use use;
};

struct agg_line {
	uint64_t key;            /* in line_by_key; 0 for row 0, "[other]" */
	const char *name, *file; /* name: first function seen on this line */
	const char *module;      /* interned; "" for Python */
	bool native;
	int line;
	struct agg_use use;
};

/* A thread's CPU and GIL figures over the current window. */
struct agg_cpu {
	bool has_base;
	uint64_t base_utime, base_stime; /* at the window's start, or at the
	                                    thread's first report in it */
	uint64_t utime, stime;           /* at its latest report */
	uint32_t gil_win;                /* reports in the window in which it
	                                    held the GIL */
	double user_pct, sys_pct, gil_pct; /* of the last window with reports */
};

/* Where a thread's previous sample was: its RSS shrink is charged there
 * (agg_charge_shrink), to its cell, and to its rows' entries once the
 * cell folded into "[other stacks]" (folded_rows.h).  Rows by key (row
 * indices move when rows fold; a row folded since then is not found, and
 * the shrink goes to the sample that saw it). */
struct agg_prev_rows {
	bool valid, has_line, has_caller;
	uint32_t cell;                /* its stack cell (renumbered by folds) */
	uint64_t fkey, lkey;          /* function and own line rows */
	uint64_t caller_lkey;         /* a native leaf's Python line */
};

/* A resolved frame: the rows it feeds. */
struct agg_frame {
	uint32_t func, line;
};

struct agg_thread {
	pid_t tid;
	pid_t pid;            /* its process, from its latest REC_THREADS */
	const char *name;     /* interned, "" if unknown */
	const char *py_name;  /* interned: the program's name for it, "" if
	                         unknown (REC_THREAD_PY_NAME) */
	uint64_t samples, samples_win;       /* all its samples */
	uint64_t py_samples, py_samples_win; /* those with a Python stack */
	bool running;
	const char *top_func; /* interned or "" */
	uint64_t report;      /* serial of the latest REC_THREADS listing it,
	                         0 = never listed */
	uint64_t seen_serial; /* REC_THREADS ingested when it was last sampled:
	                         a thread that lived between two reports is
	                         gone once its process reports again */
	char os_state;        /* at that report */
	uint8_t flags;        /* rec_thread_state.flags, likewise */
	struct agg_cpu cpu;
	struct split_queue queue;           /* running samples awaiting their
	                                       system share (cpu_split.h) */
	struct snap_split split, split_win; /* of its samples with a stack */
	struct agg_prev_rows prev;          /* of its latest sample */
	struct stack_memo memo;             /* its latest stack, interned */
	struct agg_frame *rows;             /* owned: that stack's frames
	                                       resolved, nrows of them */
	size_t nrows, rows_cap;
	uint64_t rows_gen;                  /* a->rows_gen when resolved */
};

/* A native frame without a known source line feeds no line row. */
#define AGG_NO_LINE UINT32_MAX
/* No row of that kind (a sample that has no native callee). */
#define AGG_NO_ROW UINT32_MAX


/* A growable array of rows; elem is the row size. */
struct agg_vec {
	void *items;
	size_t n, cap;
};

struct aggregator {
	struct strtab *strings;   /* owned; replaced by a fresh one when
	                             rows or codes went (agg_rehome) */
	struct strtab *pstrings;  /* owned: the process table's, never swept */
	struct strtab **retired;  /* owned: tables a failed rehome could not
	                             free, kept until aggregator_free */
	size_t nretired;
	size_t threads_dropped;   /* aged out since the last rehome: their
	                             names are still in strings */
	struct code_table *codes; /* owned */
	const char *empty;        /* interned "" */
	const char *other;        /* interned "[other]" */
	uint64_t folded_funcs, folded_lines; /* rows folded into row 0 */
	uint64_t next_sweep_ns;   /* when codes are next aged */
	uint64_t sweep_serial;    /* a->serial at the last sweep */
	uint64_t idle_serial;     /* ... at the one before: rows not sampled
	                             since are idle */
	uint64_t next_age_serial; /* a->serial at which aged rows are next
	                             looked for (agg_sweep) */
	uint32_t since_clock;     /* records since the clock was last read */

	struct agg_vec funcs;     /* struct agg_func */
	struct hashmap func_by_key;   /* qualname_sid << 32 | filename_sid */
	struct agg_vec lines;     /* struct agg_line */
	struct hashmap line_by_key;   /* filename_sid << 32 | (uint32)line */
	struct hashmap frame_cache;   /* code_id << 32 | (uint32)offset ->
	                                 func << 32 | line */
	uint64_t rows_gen;        /* bumped when frame_cache is cleared: the
	                             threads' resolved frames (agg_thread.rows)
	                             from before may be stale */
	uint64_t frames_resolved; /* frames resolved one by one (a stack that
	                             changed, or came after a sweep): what an
	                             unchanged stack is spared */
	struct agg_vec threads;   /* struct agg_thread */
	struct hashmap thread_by_tid; /* (uint32)tid -> index */
	struct hashmap thread_names;  /* (uint32)tid -> interned name;
	                                 survives resets */
	struct hashmap thread_py_names; /* likewise, the Python names */
	pid_t filter;             /* 0 = all threads */
	bool no_split;            /* aggregator_new(false): --no-split */

	/* -s: processes */
	struct proc_table *procs; /* owned */
	struct hashmap report_by_pid; /* pid -> serial of its latest REC_THREADS */
	struct hashmap reports_win_by_pid; /* pid -> its REC_THREADS this window */
	pid_t pfilter;            /* 0 = all processes */

	uint64_t report_serial;   /* REC_THREADS ingested so far */
	uint64_t win_start_ns;    /* time of the window's first report: the
	                             previous window's last one */
	uint64_t win_last_ns;     /* time of the latest report */
	uint32_t win_reports;     /* reports in this window */

	struct agg_frame *scratch; /* owned; resolved frames of one sample */
	struct stack_frame *sframes; /* owned; the same as stack frames */
	size_t scratch_cap;
	struct stack_table stacks; /* every stack, counted per thread */
	struct folded_rows folded; /* the rows of the stacks folded into
	                              "[other stacks]" (aggregator_folded.c) */

	uint64_t serial;          /* samples counted so far, for stamps */
	uint64_t samples, samples_win;
	struct snap_split split, split_win; /* of every sample with a stack */
	struct mem_kept_clock kept_clock; /* the cells' kept-memory boundaries */
	uint32_t win;             /* snapshots taken: the window's number */
	uint64_t bad;
};

static inline struct agg_func *agg_funcs(const struct aggregator *a)
{
	return a->funcs.items;
}

static inline struct agg_line *agg_lines(const struct aggregator *a)
{
	return a->lines.items;
}

static inline struct agg_thread *agg_threads(const struct aggregator *a)
{
	return a->threads.items;
}

static inline uint64_t agg_pair_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* A sweep every 2 s (aggregator_sweep.c): idle = not sampled since the
 * sweep before. */
#define AGG_SWEEP_NS 2000000000ull

/* aggregator.c, for the other files: */
/* Room for one more item; false on OOM. */
bool agg_vec_reserve(struct agg_vec *v, size_t elem);
/* Codes went, rows moved or strings were rehomed: resolve frames anew. */
void agg_forget_frames(struct aggregator *a);

/* aggregator_split.c: */
/* Charge a sample's memory and classify its time (queued if runnable). */
void agg_split_sample(struct aggregator *a, struct agg_thread *t, const struct rec_sample *s,
                      struct split_item it);
/* Count queued samples as their class (sign +1) or take that back (-1). */
void agg_provisional(struct aggregator *a, double sign);
/* Settle a thread's queue with its lifetime ratios. */
void agg_settle_lifetime(struct aggregator *a, struct agg_thread *t);

/* aggregator_sweep.c: */
/* Fold, age codes and rehome strings when due (every AGG_SWEEP_NS). */
void agg_sweep(struct aggregator *a);
/* Threads went (agg_age_threads): their stack cells merge into their
 * process's. */
void agg_threads_dropped(struct aggregator *a);

/* aggregator_threads.c: */
/* The thread row for tid, created on first use; NULL on OOM. */
struct agg_thread *agg_thread_row(struct aggregator *a, int32_t tid);
/* The thread records (record.h), of the size their header says. */
void agg_ingest_thread(struct aggregator *a, const uint8_t *rec, size_t size);
void agg_ingest_thread_py_name(struct aggregator *a, const uint8_t *rec, size_t size);
void agg_ingest_threads(struct aggregator *a, const uint8_t *rec, size_t size);
void agg_ingest_process(struct aggregator *a, const uint8_t *rec, size_t size);
enum snap_thread_state agg_thread_state(const struct aggregator *a,
                                        const struct agg_thread *t);
/* Drop the gone threads beyond the most recent AGG_KEEP_GONE_THREADS. */
void agg_age_threads(struct aggregator *a);
/* A reset: keep the threads the latest report listed, zeroed. */
void agg_reset_threads(struct aggregator *a);
/* A thread row's memory (its queue, memo, resolved frames). */
void agg_thread_free(struct agg_thread *t);

/* aggregator_folded.c: */
/* A stack frame's rows (its line AGG_NO_LINE for none; row 0 where the
 * frame was folded into "[other]"); false when it has none (a code gone
 * without its stacks folding first: only on OOM). */
struct agg_frame_rows {
	uint32_t func, line;
	bool native;
};
bool agg_frame_rows(const struct aggregator *a, const struct stack_table *t, uint32_t frame,
                    struct agg_frame_rows *out);
/* A cell folds into "[other stacks]" (stack_cell_folds): its rows'
 * figures go to a->folded. */
void agg_cell_folds(void *ctx, const struct stack_table *t, const struct stack_cell *c);
/* A share settled for a sample whose cell folded: to its rows there. */
void agg_folded_split(struct aggregator *a, const struct split_item *it,
                      const struct snap_split *d, bool win);
/* a->folded into the snapshot (has_folded_rows, stack_folded_rows). */
void agg_snap_folded_rows(struct aggregator *a, struct snapshot *out);

#endif
