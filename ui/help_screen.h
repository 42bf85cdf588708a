/* help_screen.h - the full-screen help: every key binding (read from the
 * key table, so it cannot drift from what the keys do) and what the
 * columns mean. */
#ifndef PYTOP_UI_HELP_SCREEN_H
#define PYTOP_UI_HELP_SCREEN_H

#include <stdbool.h>

#include "crt.h"

/* threads: explain the threads screen's columns instead of the function
 * table's. */
void help_screen_draw(const struct crt *crt, bool threads);

#endif
