/* thread_table.h - the threads of one snapshot as a table: its rows, its
 * columns (TID Name State CPU% usr/sys GIL% Samples Top function),
 * filtering and sorting.  Shared by the TUI's threads screen and the
 * batch text output, so both show the same figures the same way. */
#ifndef PYTOP_UI_THREAD_TABLE_H
#define PYTOP_UI_THREAD_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"
#include "table.h"

enum thread_col {
	THREAD_COL_TID,
	THREAD_COL_NAME,
	THREAD_COL_STATE,
	THREAD_COL_CPU,     /* user + system */
	THREAD_COL_USR_SYS, /* not sortable */
	THREAD_COL_GIL,
	THREAD_COL_SAMPLES,
	THREAD_COL_TOP,
	THREAD_NCOLS,
};

/* The widest the Name column grows for the names programs give threads
 * (the OS's have at most 15 bytes); longer ones are cut with an ellipsis. */
#define THREAD_NAME_MAX_COLS 24

/* Build with thread_table_build; do not copy the struct (table.ctx
 * points back at it). */
struct thread_table {
	const void **order;  /* owns the array; entries borrow the snapshot's
	                        struct snap_thread, filtered, sorted */
	struct table_column cols[THREAD_NCOLS]; /* the Name column fits the
	                                           names shown */
	size_t n;
	enum thread_col sort;
	struct table table;  /* the columns, ready for table_format_* */
};

/* Fill tt from s (which must outlive tt): threads whose name (OS or
 * Python; the Name column shows the Python one when known) or top
 * function contains filter (case-insensitive), or whose TID starts with
 * it (NULL or "" = all), sorted by sort.  Returns 0, or -1 when out of
 * memory (tt is then empty but valid). */
int thread_table_build(struct thread_table *tt, const struct snapshot *s,
                       const char *filter, enum thread_col sort, bool utf8);
void thread_table_free(struct thread_table *tt);

static inline const struct snap_thread *
thread_table_row(const struct thread_table *tt, size_t i)
{
	return tt->order[i];
}

/* The next (dir 1) or previous (dir -1) sortable column after col. */
enum thread_col thread_col_step(enum thread_col col, int dir);

/* Short name of a column, as in the title row ("CPU%"). */
const char *thread_col_name(enum thread_col col);

/* How the State column shows a state: "run+GIL", "run", "GIL wait",
 * "idle", "gone", "?". */
const char *thread_state_label(enum snap_thread_state st);

/* "Threads: 5, CPU and GIL % over the last 1.0 s, by CPU%": the line
 * that says what the figures are. */
void thread_table_describe(const struct thread_table *tt,
                           const struct snapshot *s, char *buf, size_t size);

#endif
