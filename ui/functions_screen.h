/* functions_screen.h - the main TUI screen: the function (or line) table
 * of the snapshot on display, with its sort column, filter, selection and
 * scroll position.  It draws itself into a band of rows; the header above
 * and the legend below belong to the loop (app.c). */
#ifndef PYTOP_UI_FUNCTIONS_SCREEN_H
#define PYTOP_UI_FUNCTIONS_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "crt.h"
#include "profile_table.h"
#include "prompt.h"
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
	struct snapshot snap;        /* owns: the snapshot on display */
	bool have_snap;
	struct profile_table table;  /* owns; its rows borrow snap */
	enum profile_mode mode;
	enum profile_col sort;
	char filter[PROMPT_MAX];     /* "" = no filter */
	bool utf8;
	bool since_reset;            /* counts start at the last `r` */
	struct list_pos pos;         /* selected row (index into table), first
	                                row on screen, rows on screen */
	struct row_id sel_id;
	unsigned long shown;         /* snapshots shown so far: screens that
	                                borrow snap notice a new one by it */
};

void fscreen_init(struct functions_screen *fs, bool utf8);
void fscreen_free(struct functions_screen *fs);

/* Display s, taking ownership of its arrays (*s is emptied).  The
 * selection follows the selected row's identity.  The previous snapshot
 * is freed: anything borrowing it must rebuild (see `shown`). */
void fscreen_show(struct functions_screen *fs, struct snapshot *s);

/* The snapshot on display, or NULL before the first one. */
const struct snapshot *fscreen_snapshot(const struct functions_screen *fs);

void fscreen_move(struct functions_screen *fs, long delta);
void fscreen_page(struct functions_screen *fs, int dir); /* -1 up, +1 down */
void fscreen_home(struct functions_screen *fs);
void fscreen_end(struct functions_screen *fs);
void fscreen_cycle_sort(struct functions_screen *fs, int dir);
void fscreen_toggle_mode(struct functions_screen *fs);
void fscreen_set_filter(struct functions_screen *fs, const char *filter);

/* Draw into rows [y, y + h): a line naming what the percentages mean
 * (with status, e.g. "[paused]", at its right), the column titles, then
 * the rows. */
void fscreen_draw(struct functions_screen *fs, const struct crt *crt,
                  int y, int h, const char *status);

#endif
