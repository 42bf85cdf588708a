/* process_table.h - the followed processes of one snapshot (-s) as a
 * table in tree order, like htop's tree view: PID, Python (version, or its
 * state when not sampled: looking, not Python, why unreadable, exited),
 * CPU% usr/sys, RSS, Samples, Top function, and the command line under
 * its parent with tree branches (ASCII without UTF-8).  Shared by the
 * TUI's processes screen and the batch text output, so both show the same
 * figures the same way.  At 80 columns usr/sys, then RSS, then Samples
 * give way to the command. */
#ifndef PYTOP_UI_PROCESS_TABLE_H
#define PYTOP_UI_PROCESS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"
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

/* Tree levels drawn; deeper processes are drawn at this depth. */
#define PROCESS_TREE_MAX_DEPTH 16

/* One row: a process and the branches drawn before its command. */
struct process_row {
	const struct snap_process *p; /* borrowed from the snapshot */
	int depth;                    /* p->depth, at most the maximum */
	unsigned long more;           /* bit d: a later row at depth d
	                                 before any shallower one (the
	                                 branch of level d goes on below) */
};

/* Build with process_table_build; do not copy (table.ctx points back). */
struct process_table {
	struct process_row *rows; /* owns: every process, tree order */
	const void **order;  /* owns: pointers into rows, filtered */
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
	return ((const struct process_row *)pt->order[i])->p;
}

/* "├─ " / "│  └─ " (ASCII "|- " / "|  `- "): the branches before the
 * command of row r; "" at depth 0. */
void process_tree_prefix(const struct process_row *r, bool utf8, char *buf,
                         size_t size);

/* What the Python column shows: the version of a sampled process, else
 * "looking", "exited", or why it is not sampled ("not Python", "no
 * access", ...). */
const char *process_state_label(const struct snap_process *p);

/* "Processes: 3 (1 exited), 12 seen, CPU % over the last 1.0 s". */
void process_table_describe(const struct snapshot *s, char *buf, size_t size);

#endif
