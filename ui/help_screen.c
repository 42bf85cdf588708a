/* help_screen.c - draw the help screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "help_screen.h"

#include <stdio.h>

#include "keys.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define KEY_COLS 10 /* width of the key column */

static const char *const column_help[] = {
	"%Own       share of samples whose innermost frame is here",
	"%Total     share of samples with this anywhere on the stack",
	"OwnTime    sampled time spent here (samples x interval)",
	"TotalTime  sampled time with this on the stack",
	"Percentages are of the samples named on the line above the titles.",
};

void help_screen_draw(const struct crt *crt)
{
	size_t n;
	const struct binding *b = keys_bindings(&n);
	char line[256];
	int y = 0;

	snprintf(line, sizeof line, "pytop %s - keys", PACKAGE_VERSION);
	crt_put(crt, y++, 0, CRT_HEADER, line);
	y++;
	for (size_t i = 0; i < n && y < LINES - 1; i++, y++) {
		snprintf(line, sizeof line, "  %-*s", KEY_COLS, b[i].keys_text);
		crt_put(crt, y, 0, CRT_KEY, line);
		crt_put(crt, y, KEY_COLS + 3, CRT_NORMAL, b[i].help);
	}
	y++;
	for (size_t i = 0; i < sizeof column_help / sizeof column_help[0] &&
	                   y < LINES - 1; i++, y++) {
		snprintf(line, sizeof line, "  %s", column_help[i]);
		crt_put(crt, y, 0, CRT_NORMAL, line);
	}
	crt_put(crt, LINES - 1, 0, CRT_STATUS, "Press any key to return.");
}
