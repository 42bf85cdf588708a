/* tui_state.h - everything the TUI remembers between keys, in one place:
 * owned by the loop (app.c), changed by key actions (keys.c), read by the
 * drawing code. */
#ifndef PYTOP_UI_TUI_STATE_H
#define PYTOP_UI_TUI_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "functions_screen.h"
#include "header.h"
#include "lines_screen.h"
#include "processes_screen.h"
#include "prompt.h"
#include "threads_screen.h"

enum tui_view {
	VIEW_PROFILE, /* the function or line table */
	VIEW_THREADS, /* the threads table */
	VIEW_LINES,   /* one function's source with its lines' figures */
	VIEW_PROCESSES, /* the followed processes (-s), as a tree */
};

struct tui_state {
	struct functions_screen fs; /* owns the snapshot on display */
	struct threads_screen ts;   /* borrows fs's snapshot (tscreen_sync) */
	struct gauge_history gauges; /* the header's sparklines: one value per
	                                snapshot shown */
	struct lines_screen ls;     /* borrows fs's snapshot (lscreen_sync) */
	struct processes_screen ps; /* borrows fs's snapshot (pscreen_sync) */
	enum tui_view view;
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
	bool paused;                /* keep sampling, stop replacing fs.snap */
	bool native_all;            /* --native: interpreter frames shown (n) */
	bool help;                  /* the help screen covers the table */
	bool exited;                /* the target is gone: figures are final */
};

#endif
