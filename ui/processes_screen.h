/* processes_screen.h - the TUI's processes screen (-s): the followed
 * family of the snapshot on display as a tree, filterable like the other
 * tables (the tree keeps its order: nothing to sort), with a selection bar
 * that follows the selected process.
 *
 * Like the threads screen it borrows the snapshot the TUI state owns:
 * its sync operation rebuilds the rows from a new snapshot. */
#ifndef PYTOP_UI_PROCESSES_SCREEN_H
#define PYTOP_UI_PROCESSES_SCREEN_H

#include <stdbool.h>
#include <sys/types.h>

#include "crt.h"
#include "process_table.h"
#include "prompt.h"
#include "screen.h"
#include "profile/snapshot.h"
#include "table_view.h"

struct processes_screen {
	const struct snapshot *snap; /* borrowed; NULL before the first */
	unsigned long synced;        /* the `shown` count rows were built for */
	struct process_table table;  /* owns; its rows borrow snap */
	char filter[PROMPT_MAX];     /* "" = no filter */
	bool utf8;
	struct list_pos pos;
	pid_t sel_pid;               /* the selected process; 0 = none chosen */
};

/* Its operations (screen.h). */
extern const struct screen_ops processes_screen_ops;

/* The process under the selection bar, NULL when the table is empty. */
const struct snap_process *pscreen_selected(const struct processes_screen *ps);

#endif
