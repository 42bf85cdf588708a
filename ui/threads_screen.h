/* threads_screen.h - the TUI's threads screen: every thread of the
 * snapshot on display with its state, CPU and GIL share, sortable and
 * filterable like the functions table, with a selection bar that follows
 * the selected thread.
 *
 * It borrows the snapshot the TUI state owns: its sync operation
 * rebuilds the rows from a new snapshot before any of them is read. */
#ifndef PYTOP_UI_THREADS_SCREEN_H
#define PYTOP_UI_THREADS_SCREEN_H

#include <stdbool.h>
#include <sys/types.h>

#include "crt.h"
#include "prompt.h"
#include "screen.h"
#include "profile/snapshot.h"
#include "table_view.h"
#include "thread_table.h"

struct threads_screen {
	const struct snapshot *snap; /* borrowed; NULL before the first */
	unsigned long synced;        /* the `shown` count rows were built for */
	struct thread_table table;   /* owns; its rows borrow snap */
	enum thread_col sort;
	char filter[PROMPT_MAX];     /* "" = no filter */
	bool utf8;
	struct list_pos pos;
	pid_t sel_tid;               /* the selected thread; 0 = none chosen */
};

/* Its operations (screen.h). */
extern const struct screen_ops threads_screen_ops;

/* The TID under the selection bar, 0 when the table is empty. */
pid_t tscreen_selected(const struct threads_screen *ts);

#endif
