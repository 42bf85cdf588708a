/* help_screen.h - the full-screen help: every key binding (read from the
 * key table, so it cannot drift from what the keys do) and what the
 * columns of the screen it covers mean. */
#ifndef PYTOP_UI_HELP_SCREEN_H
#define PYTOP_UI_HELP_SCREEN_H

#include <stdbool.h>

#include "crt.h"
#include "screen.h"

/* The bindings, then columns: what the covered screen's columns mean
 * (its column_help, NULL-terminated). */
void help_screen_draw(const struct crt *crt, const char *const *columns);

/* Its operations (screen.h): a full screen over the one in
 * tui_state.help_from. */
extern const struct screen_ops help_screen_ops;

#endif
