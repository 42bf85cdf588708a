/* functions_screen.h - the main TUI screen: the function (or line) table
 * of the snapshot on display, with its sort column, filter, selection and
 * scroll position.  It draws itself into a band of rows; the header above
 * and the legend below belong to the frame (tui_draw.c).
 *
 * It borrows the snapshot the TUI state owns: call fscreen_sync with that
 * snapshot and its `shown` count before using the screen, so that a new
 * snapshot rebuilds the rows before any of them is read. */
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

void fscreen_init(struct functions_screen *fs, bool utf8);
void fscreen_free(struct functions_screen *fs);

/* Rebuild the rows when shown differs from the last call (s may be NULL
 * before the first snapshot).  The selection follows the selected row's
 * identity. */
void fscreen_sync(struct functions_screen *fs, const struct snapshot *s,
                  unsigned long shown);

void fscreen_move(struct functions_screen *fs, long delta);
void fscreen_page(struct functions_screen *fs, int dir); /* -1 up, +1 down */
void fscreen_home(struct functions_screen *fs);
void fscreen_end(struct functions_screen *fs);
void fscreen_cycle_sort(struct functions_screen *fs, int dir);
void fscreen_toggle_mode(struct functions_screen *fs);
/* F: whole names and paths (the other figure columns give way) or the
 * names fitted to the screen. */
void fscreen_toggle_full_names(struct functions_screen *fs);
/* g (--native): every library's native rows as one row, or each. */
void fscreen_toggle_libraries(struct functions_screen *fs);
void fscreen_set_filter(struct functions_screen *fs, const char *filter);

/* Draw into rows [y, y + h): a line naming what the percentages mean
 * (with status, e.g. "[paused]", at its right), the column titles, then
 * the rows. */
void fscreen_draw(struct functions_screen *fs, const struct crt *crt,
                  int y, int h, const char *status);

#endif
