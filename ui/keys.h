/* keys.h - what each key does.  Actions change the TUI state and return
 * reaction flags; the loop (app.c) alone decides when to redraw, take a
 * new snapshot, reset or quit (htop's Htop_Reaction idea). */
#ifndef PYTOP_UI_KEYS_H
#define PYTOP_UI_KEYS_H

#include <stddef.h>

#include "tui_state.h"

enum reaction {
	REACT_NONE = 0,
	REACT_REDRAW = 1 << 0,  /* draw the screen again */
	REACT_CLEAR = 1 << 1,   /* repaint every cell (resize, Ctrl-L) */
	REACT_RESET = 1 << 2,   /* forget all counts */
	REACT_REFRESH = 1 << 3, /* take and show a snapshot now */
	REACT_QUIT = 1 << 4,
	REACT_THREAD_FILTER = 1 << 5, /* ask the source for st->thread_filter's
	                                 functions, then take a snapshot */
	REACT_NATIVE_ALL = 1 << 6, /* --native: tell the source st->native_all */
	REACT_PROCESS_FILTER = 1 << 7, /* -s: ask the source for
	                                  st->process_filter's functions, then
	                                  take a snapshot */
	REACT_WINDOW = 1 << 8, /* ask the source for st->window_s's counts,
	                          then take a snapshot */
	REACT_EXPORT = 1 << 9, /* write the profile now (-o: export_live.h) */
	REACT_REPLAY = 1 << 10, /* replay: move by st->replay_step or set the
	                           window's st->replay_mark, then take a
	                           snapshot */
};

#define KEYS_PER_BINDING 4

struct binding {
	int keys[KEYS_PER_BINDING]; /* crt_read_key values; 0 ends the list */
	const char *keys_text;      /* how the help screen names them */
	const char *help;           /* what the action does; NULL: shown on
	                               the line of the binding before */
	unsigned (*action)(struct tui_state *st);
};

/* The binding table, for the help screen. */
const struct binding *keys_bindings(size_t *n);

/* Handle one key (crt_read_key value); returns enum reaction flags. */
unsigned keys_handle(struct tui_state *st, int key);

/* One entry of the bottom legend ("F1" "Help"). */
struct legend_item {
	const char *key;
	const char *label;
};

/* Copy up to max of items' n entries to out; returns how many. */
size_t legend_copy(struct legend_item *out, size_t max,
                   const struct legend_item *items, size_t n);

/* Fill the legend for the current state; returns the entry count. */
size_t keys_legend(const struct tui_state *st, struct legend_item *out,
                   size_t max);

/* The status half of the line above a table: a key's note (st->note),
 * "[paused]", the exit note; "" when there is nothing to say. */
void keys_status(const struct tui_state *st, char *buf, size_t size);

#endif
