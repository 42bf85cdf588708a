/* help_screen.h - the full-screen help: every key binding (read from the
 * key table, so it cannot drift from what the keys do) and what the
 * columns mean. */
#ifndef PYTOP_UI_HELP_SCREEN_H
#define PYTOP_UI_HELP_SCREEN_H

#include <stdbool.h>

#include "crt.h"

/* Which screen's columns the help explains. */
enum help_topic {
	HELP_FUNCTIONS = 0, /* the function and line tables (and source) */
	HELP_THREADS = 1,
	HELP_PROCESSES,
};

void help_screen_draw(const struct crt *crt, enum help_topic topic);

#endif
