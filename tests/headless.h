/* headless.h - the views without a terminal, for the view tests: curses
 * runs on /dev/null as an 80x24 UTF-8 xterm, the TUI state is driven by
 * keys and drawn by the TUI's own drawing code, and the tests read the
 * screen back row by row; batch and JSON printers write into memory. */
#ifndef PYTOP_TESTS_HEADLESS_H
#define PYTOP_TESTS_HEADLESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "profile/snapshot.h"
#include "../ui/crt.h"
#include "../ui/tui_state.h"

/* A monochrome UTF-8 terminal description for the draw functions, set
 * by headless_up. */
extern struct crt headless_crt;

/* C.UTF-8, so that the views draw (and the tests compare) UTF-8. */
void headless_utf8_locale(void);

/* Start curses on /dev/null at 80x24 (and set headless_crt); stop it. */
void headless_up(void);
void headless_down(void);

/* Row y of the screen, trailing blanks removed (a static buffer, valid
 * until the next call). */
const char *headless_row(int y);

/* Run a batch or JSON printer into memory; the text (caller frees). */
char *headless_capture(int (*print)(FILE *, const struct snapshot *),
                       const struct snapshot *s);

/* The JSON printer's object for s, checked to be exactly one line
 * (caller json_decref's it). */
json_t *headless_json(const struct snapshot *s);

/* Set up st as the TUI loop does (utf8 also for headless_crt), show s
 * (taken over, *s emptied) and draw; headless_stop frees st. */
void headless_start(struct tui_state *st, struct snapshot *s, bool utf8);
void headless_stop(struct tui_state *st);

/* Erase the screen and draw what the TUI draws below its header, from
 * row 0: the screen on display with the status at its right, then the
 * prompt or the legend on the last row (ui/tui_draw.h). */
void headless_draw(struct tui_state *st);

#endif
