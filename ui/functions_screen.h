/* functions_screen.h - the main TUI screen: the function (or line) table
 * of the snapshot on display, with its sort column, filter, selection and
 * scroll position.  It draws itself into a band of rows; the header above
 * and the legend below belong to the frame (tui_draw.c).
 *
 * It borrows the snapshot the TUI state owns: its sync operation
 * rebuilds the rows from a new snapshot before any of them is read, the
 * selection following the selected row's identity. */
#ifndef PYTOP_UI_FUNCTIONS_SCREEN_H
#define PYTOP_UI_FUNCTIONS_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "crt.h"
#include "profile_table.h"
#include "prompt.h"
#include "screen.h"
#include "profile/snapshot.h"
#include "table_view.h"

/* Which row is selected, by what it is rather than where it is, so the
 * selection stays on the same function while rows move around. */
struct row_id {
	char *name; /* owns a copy; NULL = nothing chosen yet */
	char *file; /* owns a copy */
	int line;
};

struct functions_screen {
	const struct snapshot *snap; /* borrowed; NULL before the first */
	unsigned long synced;        /* the `shown` count rows were built for */
	struct profile_table table;  /* owns; its rows borrow snap */
	enum profile_mode mode;
	profile_col sort;
	char filter[PROMPT_MAX];     /* "" = no filter */
	bool utf8;
	bool since_reset;            /* counts start at the last `r` */
	bool full_names;             /* F: whole names and paths */
	bool by_library;             /* g: native rows one per library */
	struct list_pos pos;         /* selected row (index into table), first
	                                row on screen, rows on screen */
	struct row_id sel_id;
};

/* Its operations (screen.h). */
extern const struct screen_ops functions_screen_ops;

/* l: line rows or function rows. */
void fscreen_toggle_mode(struct functions_screen *fs);
/* F: whole names and paths (the other figure columns give way) or the
 * names fitted to the screen. */
void fscreen_toggle_full_names(struct functions_screen *fs);
/* g (--native): every library's native rows as one row, or each. */
void fscreen_toggle_libraries(struct functions_screen *fs);

#endif
