/* process_table.h - the followed processes of one snapshot (-s) as a
 * table in tree order, like htop's tree view: PID, Python (version, or why
 * the process is not sampled), CPU% usr/sys, RSS, Samples, Top function,
 * and the command line indented under its parent.  Shared by the TUI's
 * processes screen and the batch text output. */
#ifndef PYTOP_UI_PROCESS_TABLE_H
#define PYTOP_UI_PROCESS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"
#include "table.h"

enum process_col {
	PROCESS_COL_PID,
	PROCESS_COL_PYTHON,
	PROCESS_COL_CPU,
	PROCESS_COL_USR_SYS,
	PROCESS_COL_RSS,
	PROCESS_COL_SAMPLES,
	PROCESS_COL_TOP,
	PROCESS_COL_COMMAND,
	PROCESS_NCOLS,
};

/* Build with process_table_build; do not copy (table.ctx points back). */
struct process_table {
	const void **order;  /* owned array of the snapshot's snap_process,
	                        filtered, in tree order */
	size_t n;
	struct table table;
};

/* Fill pt from s (which must outlive it): processes whose command, top
 * function or Python column contains filter (case-insensitive), or whose
 * PID starts with it (NULL or "" = all).  0, or -1 when out of memory (pt
 * is then empty but valid). */
int process_table_build(struct process_table *pt, const struct snapshot *s,
                        const char *filter, bool utf8);
void process_table_free(struct process_table *pt);

static inline const struct snap_process *
process_table_row(const struct process_table *pt, size_t i)
{
	return pt->order[i];
}

/* "Processes: 3 (1 exited), 12 seen, CPU % over the last 1.0 s". */
void process_table_describe(const struct snapshot *s, char *buf, size_t size);

#endif
