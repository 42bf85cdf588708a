/* lines_screen.h - the lines view: one function's source, line by line,
 * with each line's figures (%Own %Total, the split %Py %Nat %Sys [%Wait],
 * Mem+, Faults, MajFlt) and a heat bar of its %Total; with --native, the
 * native functions each line called, below it (lines_callees.h).  Enter on a function
 * opens it; the figures follow each new snapshot, the source is read once
 * per opening.
 *
 * Like the threads screen it borrows the snapshot the TUI state owns:
 * call lscreen_sync with that snapshot and its `shown` count before
 * using the screen. */
#ifndef PYTOP_UI_LINES_SCREEN_H
#define PYTOP_UI_LINES_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "count_columns.h"
#include "crt.h"
#include "lines_callees.h"
#include "profile/snapshot.h"
#include "screen.h"
#include "source_file.h"
#include "source_stale.h"
#include "table.h"

#define LINES_HSCROLL_STEP 8 /* source columns per Right / Left */
#include "table_view.h"

enum lines_col {
	LINES_COL_LINE,
	/* Every figure column, column LINES_COL_FIGURES + i being enum
	 * count_col i (count_columns.h declares them); the sampled times are
	 * left out here (they repeat %Own and %Total in seconds, and the
	 * source needs the room). */
	LINES_COL_FIGURES,
	LINES_COL_HEAT = LINES_COL_FIGURES + COUNT_NCOLS,
	LINES_COL_SOURCE,
	LINES_NCOLS,
};

/* The source text keeps this much room before figures are dropped. */
#define LINES_SOURCE_MIN_COLS 30
/* Columns of the heat bar. */
#define LINES_HEAT_COLS 5

struct lines_row {
	int line;                     /* a callee row: its caller's */
	const char *text;             /* borrowed from the source (a callee
	                                 row: from callees); "" if none */
	const struct snap_counts *c;  /* borrowed from the snapshot (a callee
	                                 row: from callees); NULL: the line
	                                 has no samples */
	double heat;                  /* %Total / the hottest line's, 0..1 */
	bool callee;                  /* a native function the line called
	                                 (--native), under its line */
};

struct lines_screen {
	struct count_ctx cc;          /* first: ctx of the figure columns */
	bool open;
	char *name, *file;            /* owned: the function shown */
	int first, last;              /* its lines in the file; 0 = unknown */
	struct source_file src;       /* owned */
	enum source_stale stale;      /* src may not be what the target ran */
	double started;               /* the target's start (snapshot's) */
	const struct snapshot *snap;  /* borrowed; NULL before the first */
	unsigned long synced;         /* the `shown` count of the rows */
	struct lines_row *rows;       /* owned, by line number */
	const void **order;           /* owned: pointers to rows, in order */
	size_t nrows;
	struct lines_callee_row *callees; /* owned: the callee rows' text and
	                                     figures */
	bool callers;                 /* the rows are the Python lines that
	                                 called a native function without
	                                 source lines (callee rows, line 0) */
	char note[4480];              /* what is wrong with the source, or "" */
	bool idle_mode;
	pid_t thread;                 /* the snapshot's thread filter */
	pid_t process;                /* the snapshot's process filter */
	struct table_column cols[LINES_NCOLS];
	struct table table;
	struct list_pos pos;          /* centred on the selection when opened */
	int sel_line;                 /* the selected line number */
	bool follow_hottest;          /* until the user moves */
	bool utf8;
	int hscroll;                  /* Right / Left: source columns scrolled
	                                 out on the left */
	char source_title[32];        /* the Source column's title */
};

/* Its operations (screen.h). */
extern const struct screen_ops lines_screen_ops;

void lscreen_init(struct lines_screen *ls, bool utf8);
void lscreen_free(struct lines_screen *ls); /* closes; init again to reuse */

/* Open the function name in file (as the snapshot names them) of s,
 * shown for the `shown` count: read its source through the target's
 * /proc/PID/root, then directly.  line > 0 selects that line, else the
 * hottest.  Returns false (nothing opened) when s has no such function. */
bool lscreen_open(struct lines_screen *ls, const struct snapshot *s,
                  unsigned long shown, const char *name, const char *file,
                  int line);

/* Forget the function (Esc, Left). */
void lscreen_close(struct lines_screen *ls);

/* Rebuild the rows when shown differs from the last call. */
void lscreen_sync(struct lines_screen *ls, const struct snapshot *s,
                  unsigned long shown);

/* The row under the selection bar, NULL when there is none. */
const struct lines_row *lscreen_selected(const struct lines_screen *ls);

/* "Source of hot_a (/srv/app.py:12-30), % of 1,000 samples of running
 * threads": what the view shows and what its percentages are of, the
 * path shortened from the left to fit width columns (< 0: no limit). */
void lscreen_describe(const struct lines_screen *ls, int width, char *buf,
                      size_t size);

/* Draw into rows [y, y + h): the description (status at its right), the
 * note about the source when there is one, the titles, the rows. */
void lscreen_draw(struct lines_screen *ls, const struct crt *crt, int y,
                  int h, const char *status);

#endif
