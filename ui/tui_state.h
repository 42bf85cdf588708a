/* tui_state.h - everything the TUI remembers between keys, in one place:
 * owned by the loop (app.c), changed by key actions (keys.c), read by the
 * drawing code. */
#ifndef PYTOP_UI_TUI_STATE_H
#define PYTOP_UI_TUI_STATE_H

#include <stdbool.h>

#include "functions_screen.h"
#include "prompt.h"

struct tui_state {
	struct functions_screen fs; /* the table on display */
	struct prompt prompt;       /* the filter prompt, when active */
	bool paused;                /* keep sampling, stop replacing fs.snap */
	bool help;                  /* the help screen covers the table */
	bool exited;                /* the target is gone: figures are final */
};

#endif
