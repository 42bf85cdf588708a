/* processes_screen.h - the TUI's processes screen (-s): the followed
 * family of the snapshot on display as a tree, filterable like the other
 * tables (the tree keeps its order: nothing to sort), with a selection bar
 * that follows the selected process.
 *
 * Like the threads screen it borrows the snapshot the TUI state owns:
 * call pscreen_sync with that snapshot and its `shown` count before
 * using the screen. */
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

void pscreen_init(struct processes_screen *ps, bool utf8);
void pscreen_free(struct processes_screen *ps);

/* Rebuild the rows when shown differs from the last call (s may be NULL
 * before the first snapshot). */
void pscreen_sync(struct processes_screen *ps, const struct snapshot *s,
                  unsigned long shown);

void pscreen_move(struct processes_screen *ps, long delta);
void pscreen_page(struct processes_screen *ps, int dir);
void pscreen_home(struct processes_screen *ps);
void pscreen_end(struct processes_screen *ps);
void pscreen_set_filter(struct processes_screen *ps, const char *filter);

/* The process under the selection bar, NULL when the table is empty. */
const struct snap_process *pscreen_selected(const struct processes_screen *ps);

/* Draw into rows [y, y + h): the description (with status at its right),
 * the column titles, then the rows. */
void pscreen_draw(struct processes_screen *ps, const struct crt *crt, int y,
                  int h, const char *status);

#endif
