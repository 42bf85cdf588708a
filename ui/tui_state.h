/* tui_state.h - everything the TUI remembers between keys, in one place:
 * owned by the loop (app.c), changed by key actions (keys.c) and the
 * screens' operations (screen.h), read by the drawing code.  It owns the
 * snapshot on display; every screen borrows it. */
#ifndef PYTOP_UI_TUI_STATE_H
#define PYTOP_UI_TUI_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "flame_screen.h"
#include "functions_screen.h"
#include "header.h"
#include "lines_screen.h"
#include "processes_screen.h"
#include "prompt.h"
#include "profile/snapshot.h"
#include "screen.h"
#include "threads_screen.h"
#include "tree_screen.h"

struct tui_state {
	struct snapshot snap;       /* owns: the snapshot on display */
	bool have_snap;
	unsigned long shown;        /* snapshots shown so far: the screens
	                               notice a new one by it */
	struct functions_screen fs; /* the screens' own state; each borrows */
	struct threads_screen ts;   /* snap (screen.h: sync) */
	struct lines_screen ls;
	struct processes_screen ps;
	struct tree_screen tr;
	struct flame_screen fg;
	struct gauge_history gauges; /* the header's sparklines: one value per
	                                snapshot shown */
	const struct screen_ops *view;      /* the screen on display */
	const struct screen_ops *help_from; /* the screen the help covers */
	const struct screen_ops *lines_from; /* the screen Esc goes back to
	                                        from the lines view; NULL:
	                                        the functions table */
	pid_t thread_filter;        /* the functions and lines of this thread
	                               only; 0 = all (what the source was last
	                               asked for) */
	pid_t process_filter;       /* the functions and lines of this process
	                               only (-s); 0 = all (what the source was
	                               last asked for) */
	const char *note;           /* a key's answer for the status line
	                               until the next key (static text);
	                               NULL = none */
	struct prompt prompt;       /* the filter prompt, when active */
	bool paused;                /* keep sampling, stop replacing snap */
	bool native_all;            /* --native: interpreter frames shown (n) */
	bool exited;                /* the target is gone: figures are final */
	double window_s;            /* w: the tables count the last window_s
	                               seconds; 0 = since start */
	/* pytop replay (replay_keys.h): set once a replay's snapshot shows */
	bool replay;
	bool playing;               /* space: one refresh per recorded one */
	int replay_step;            /* REACT_REPLAY: refreshes to move by
	                               (INT_MIN / INT_MAX: start / end) */
	int replay_mark;            /* ... or the window end to set
	                               (REPLAY_MARK_*), -1 none */
};

/* Zero st, set up every screen (tui_screens), show the functions
 * screen. */
void tui_state_init(struct tui_state *st, bool utf8);
void tui_state_free(struct tui_state *st);

/* Display s, taking ownership of its arrays (*s is emptied); the previous
 * snapshot is freed and every screen rebuilt from the new one. */
void tui_show(struct tui_state *st, struct snapshot *s);

/* The snapshot on display, or NULL before the first one. */
const struct snapshot *tui_snapshot(const struct tui_state *st);

/* Rebuild every screen that borrowed an older snapshot. */
void tui_sync(struct tui_state *st);

/* Show screen (the one on display lets go first: its leave op). */
void tui_switch(struct tui_state *st, const struct screen_ops *screen);

/* -s: the snapshot on display lists the followed family. */
bool tui_following(const struct tui_state *st);

/* Ask the source for one thread's (process's) functions, 0 = all; a
 * thread filter would win over a process filter in the engine, so
 * choosing a process drops it.  Return enum reaction flags. */
unsigned tui_filter_thread(struct tui_state *st, pid_t tid);
unsigned tui_filter_process(struct tui_state *st, pid_t pid);

#endif
