/* provide_curses.h - the one place that includes curses, with the
 * wide-character API switched on (get_wch for UTF-8 typing in prompts). */
#ifndef PYTOP_PROVIDE_CURSES_H
#define PYTOP_PROVIDE_CURSES_H

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#endif
