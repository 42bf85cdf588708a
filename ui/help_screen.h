/* help_screen.h - the full-screen help: every key binding (read from the
 * key table, so it cannot drift from what the keys do) and what the
 * columns mean. */
#ifndef PYTOP_UI_HELP_SCREEN_H
#define PYTOP_UI_HELP_SCREEN_H

#include "crt.h"

void help_screen_draw(const struct crt *crt);

#endif
