/* headless.h - the TUI's views drawn without a terminal, for the view
 * tests: curses runs on /dev/null as an 80x24 UTF-8 xterm and the tests
 * read the screen back row by row. */
#ifndef PYTOP_TESTS_HEADLESS_H
#define PYTOP_TESTS_HEADLESS_H

#include "../ui/crt.h"

/* C.UTF-8, so that the views draw (and the tests compare) UTF-8. */
void headless_utf8_locale(void);

/* Start curses on /dev/null at 80x24; *crt becomes a monochrome UTF-8
 * terminal description for the draw functions. */
void headless_up(struct crt *crt);
void headless_down(void);

/* Row y of the screen, trailing blanks removed (a static buffer, valid
 * until the next call). */
const char *headless_row(int y);

#endif
