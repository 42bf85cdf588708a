/* screen.h - what a TUI screen is to the loop and the keys: one const
 * table of operations per screen, in the screen's own file (as htop's
 * panel classes or tig's view ops).  The loop draws, and the keys move,
 * sort, filter and choose, through the table of the screen on display
 * (tui_state.view) instead of asking which screen it is.
 *
 * A screen keeps its state in struct tui_state and borrows the snapshot
 * on display from it (tui_snapshot); `sync` rebuilds its rows when a new
 * snapshot was shown since.  Adding a screen: its file with its table,
 * its state in struct tui_state, and one line in tui_screens (screens.c)
 * so that it is set up, synced and freed with the others. */
#ifndef PYTOP_UI_SCREEN_H
#define PYTOP_UI_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

struct crt;
struct legend_item;
struct list_pos;
struct tui_state;

struct screen_ops {
	const char *name; /* "functions", for messages and tests */
	/* Set up and release the screen's state in st (NULL: it has
	 * none). */
	void (*init)(struct tui_state *st, bool utf8);
	void (*free)(struct tui_state *st);
	/* Rebuild what the screen borrows from the snapshot on display if
	 * another one was shown since (NULL: it borrows nothing). */
	void (*sync)(struct tui_state *st);
	/* Draw into rows [y, y + h), status (e.g. "[paused]") at the right
	 * of its first row.  A full screen (help) draws every row itself:
	 * no header, no legend. */
	void (*draw)(struct tui_state *st, const struct crt *crt, int y,
	             int h, const char *status);
	bool full_screen;
	/* A key before the key table sees it; returns true when taken and
	 * sets *react (enum reaction).  NULL: the key table has every key. */
	bool (*key)(struct tui_state *st, int key, unsigned *react);
	/* A list screen's selection bar over its rows (table_view.h): the
	 * table keys move every list the same way (keys.c), then call moved
	 * (NULL: nothing to do) for the screen to remember the row the bar
	 * is on.  NULL list: the screen moves its selection itself, through
	 * the four below. */
	struct list_pos *(*list)(struct tui_state *st, size_t *nrows);
	void (*moved)(struct tui_state *st);
	/* The selection of a screen that is no list (the flame graph's
	 * blocks): by delta rows, a page (dir -1 / +1), first, last.  NULL:
	 * nothing to move over. */
	void (*move_by)(struct tui_state *st, long delta);
	void (*page)(struct tui_state *st, int dir);
	void (*home)(struct tui_state *st);
	void (*end)(struct tui_state *st);
	/* The next (dir +1) or previous sort column; NULL: the rows keep
	 * their own order (a file's, a tree's). */
	void (*sort)(struct tui_state *st, int dir);
	/* Enter on the selected row; returns enum reaction flags.  NULL:
	 * nothing to choose. */
	unsigned (*select)(struct tui_state *st);
	/* The filter on display ("" = none), and setting it.  NULL: the
	 * screen cannot be filtered. */
	const char *(*filter)(const struct tui_state *st);
	void (*set_filter)(struct tui_state *st, const char *text);
	/* Leaving the screen for another (NULL: nothing to let go). */
	void (*leave)(struct tui_state *st);
	/* Left goes back, as Esc does (a screen opened from a row). */
	bool left_is_back;
	/* The screen's own entries of the bottom legend, between F1 Help and
	 * the entries every screen has; returns how many (at most max). */
	size_t (*legend)(const struct tui_state *st, struct legend_item *out,
	                 size_t max);
	/* The legend has room for r Reset beside this screen's entries. */
	bool legend_reset;
	/* What the help screen says about this screen's columns: lines,
	 * NULL-terminated. */
	const char *const *column_help;
};

/* Every screen, in no particular order: the loop sets them up, syncs
 * and frees them together. */
extern const struct screen_ops *const tui_screens[];
extern const size_t tui_nscreens;

#endif
