/* profile_table.h - the function / line table of one snapshot: its rows,
 * its columns (%Own %Total %Py %Nat %Sys [%Wait] Mem+ Faults MajFlt
 * OwnTime TotalTime Function, the least important dropped first on a
 * narrow line), filtering and sorting.  Shared by the TUI and the batch
 * text output so both show the same numbers formatted the same way. */
#ifndef PYTOP_UI_PROFILE_TABLE_H
#define PYTOP_UI_PROFILE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "count_columns.h"
#include "profile/snapshot.h"
#include "table.h"

enum profile_mode {
	PROFILE_FUNCTIONS, /* one row per function, at its first line */
	PROFILE_LINES,     /* one row per source line */
};

/* A column of the table: every figure column, column i being enum
 * count_col i (COUNT_OWN ...: count_columns.h declares them), then the
 * function. */
typedef int profile_col;
enum {
	PROFILE_COL_NAME = COUNT_NCOLS,
	PROFILE_NCOLS,
};
_Static_assert(PROFILE_NCOLS <= TABLE_MAX_COLS,
               "table.hidden has a bit per column");

/* The Function column keeps this much room before figure columns are
 * dropped (count_column() says in which order): at 80 columns that keeps
 * %Own to Faults, and a name beside a base name like "thread_states.py"
 * is still readable. */
#define PROFILE_NAME_MIN_COLS 33

/* One row, borrowing everything from the snapshot it was built from. */
struct profile_row {
	const char *name;
	const char *file;
	int line;
	const struct snap_counts *c;
	bool native;        /* a native function or line (--native) */
	const char *module; /* native: its module; NULL or "" for Python */
	bool other;         /* "[other]": the rarest rows, folded together */
	int members;        /* > 0: a library's native rows summed (g) */
};

/* Build with profile_table_build; do not copy the struct (table.ctx
 * points back at it). */
struct profile_table {
	struct count_ctx cc;      /* first: the figure columns' ctx;
	                             cc.samples is what 100 % means */
	struct profile_row *rows; /* owns the array; rows borrow the snapshot */
	struct snap_counts *lib_counts; /* owns: the library rows' sums (g) */
	const void **order;       /* owns: pointers into rows, filtered,
	                             sorted */
	size_t n;                 /* rows in order */
	bool idle_mode;
	pid_t thread;             /* the snapshot's thread filter, 0 = all */
	const char *thread_name;  /* its OS name, borrowed; "" if unknown */
	pid_t process;            /* the snapshot's process filter, 0 = all */
	double recent_s, recent_asked; /* the snapshot's window (w), 0 = none */
	bool replay;                   /* pytop replay: the figures cover */
	double replay_from, replay_to; /* [from, to) of the recording */
	enum profile_mode mode;
	profile_col sort;
	bool full_names;          /* the Function cell uncut: whole paths */
	struct table_column cols[PROFILE_NCOLS];
	struct table table;       /* the columns, ready for table_format_* */
};

/* Fill pt from s (which must outlive pt): rows whose name or file
 * contains filter (case-insensitive; NULL or "" = all), sorted by sort
 * (%Wait without --idle: by %Own).
 * Returns 0, or -1 when out of memory (pt is then empty but valid). */
int profile_table_build(struct profile_table *pt, const struct snapshot *s,
                        enum profile_mode mode, const char *filter,
                        profile_col sort, bool utf8);
void profile_table_free(struct profile_table *pt);

/* The same, with every library's native rows summed into one row when
 * by_library (--native; the g key).  A library row's own figures are
 * exact; its total is the largest of its own sum and its rows' totals,
 * a lower bound (a sample is counted once per function, not per
 * library). */
int profile_table_build_grouped(struct profile_table *pt,
                                const struct snapshot *s,
                                enum profile_mode mode, const char *filter,
                                profile_col sort, bool utf8, bool by_library);

/* Full names on or off, right after profile_table_build: on, the Function cell shows the whole path and
 * name, and every figure column but %Own and the sorted one gives way. */
void profile_table_full_names(struct profile_table *pt, bool on);

static inline const struct profile_row *
profile_table_row(const struct profile_table *pt, size_t i)
{
	return pt->order[i];
}

/* Short name of a sort column, as in the title row ("%Own"). */
const char *profile_col_name(profile_col col);

/* The sort column dir (+1 / -1) steps from col, wrapping, skipping
 * %Wait unless idle (it is not shown then). */
profile_col profile_col_step(profile_col col, int dir,
                                  unsigned long hidden);

/* "% of 97,004 samples of running threads", "% of 1,200 running
 * samples of thread 4250 worker", "% of 900 running samples of process
 * 4300" (a process filter, -s, without a thread filter): what 100 %
 * means. */
/* What a table's figures cover: "since start", "since reset", or in a
 * replay "in 1.0-2.5 s of the recording".  Returns buf. */
const char *profile_span(const struct snapshot *s, bool since_reset, char *buf,
                         size_t size);

void profile_percent_of(uint64_t samples, bool idle, pid_t thread,
                        const char *thread_name, pid_t process, char *buf,
                        size_t size);

/* The OS name of thread tid in s, "" if it is not listed. */
const char *profile_thread_name(const struct snapshot *s, pid_t tid);

/* "Functions since start, % of 97,004 samples of running threads, by
 * %Own" - the line that names what the percentages are of.  since_reset
 * says "since reset" instead; under a thread filter, "of 1,200 running
 * samples of thread 4250 worker"; under a process filter, "of 900
 * running samples of process 4300". */
void profile_table_describe(const struct profile_table *pt, bool since_reset,
                            char *buf, size_t size);

#endif
