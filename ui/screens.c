/* screens.c - the list of every TUI screen: adding a screen is one line
 * here (see screen.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "screen.h"

#include "flame_screen.h"
#include "functions_screen.h"
#include "help_screen.h"
#include "lines_screen.h"
#include "processes_screen.h"
#include "threads_screen.h"
#include "tree_screen.h"

const struct screen_ops *const tui_screens[] = {
	&functions_screen_ops,
	&threads_screen_ops,
	&lines_screen_ops,
	&processes_screen_ops,
	&tree_screen_ops,
	&flame_screen_ops,
	&help_screen_ops,
};

const size_t tui_nscreens = sizeof tui_screens / sizeof tui_screens[0];
