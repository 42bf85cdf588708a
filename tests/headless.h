/* headless.h - the views without a terminal, for the view tests: curses
 * runs on /dev/null as an 80x24 UTF-8 xterm and the tests read the screen
 * back row by row; batch and JSON printers write into memory. */
#ifndef PYTOP_TESTS_HEADLESS_H
#define PYTOP_TESTS_HEADLESS_H

#include <stdio.h>

#include "profile/snapshot.h"
#include "../ui/crt.h"

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

#endif
