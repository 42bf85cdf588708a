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

static const char *const function_help[] = {
	"%Own %Total  samples with the innermost frame here / anywhere on "
	"the stack",
	"%Py %Nat %Sys %CPUw %GILw %Wait  %Own split: bytecode, native, kernel, "
	"CPU wait, GIL wait, off CPU",
	"Mem+ Faults  RSS growth and page faults while here (! some were "
	"major)",
	"OwnTime TotalTime  sampled time (samples x interval); Heat: "
	"%Total bar",
	"Percentages are of the samples named on the line above the titles.",
	NULL,
};

static const char *const thread_help[] = {
	"State      run+GIL: on a CPU running Python; run: on a CPU without",
	"           the GIL (native code); GIL wait; idle; gone",
	"CPU%       user + system CPU over the last refresh, % of one CPU",
	"GIL%       share of the thread reports (10 a second) holding the GIL",
	"Enter shows only the selected thread's functions and lines; a: all.",
	NULL,
};

static const char *const process_help[] = {
	"Python     version of a sampled process, else looking, not Python,",
	"           exited, or why it is not sampled (no access, unsupported)",
	"CPU% RSS   all its threads' CPU over the last refresh; resident memory",
	"Samples    its threads' samples; Top function: its most sampled leaf",
	"Enter shows only the selected process's functions and lines; a: all.",
	NULL,
};

/* One line per binding, a binding without help text joining the line
 * before ("Up Down"); returns the next free row. */
static int draw_bindings(const struct crt *crt, int y)
{
	size_t n;
	const struct binding *b = keys_bindings(&n);
	char keys[64], line[256];

	for (size_t i = 0; i < n && y < LINES - 1; y++) {
		const char *help = b[i].help;
		size_t len = (size_t)snprintf(keys, sizeof keys, "%s",
		                              b[i].keys_text);

		for (i++; i < n && b[i].help == NULL && len < sizeof keys; i++)
			len += (size_t)snprintf(keys + len, sizeof keys - len,
			                        " %s", b[i].keys_text);
		snprintf(line, sizeof line, "  %-*s", KEY_COLS, keys);
		crt_put(crt, y, 0, CRT_KEY, line);
		/* A longer key list pushes its help to the right. */
		crt_put(crt, y, (len > KEY_COLS ? (int)len : KEY_COLS) + 3,
		        CRT_NORMAL, help);
	}
	return y;
}

void help_screen_draw(const struct crt *crt, enum help_topic topic)
{
	const char *const *columns = topic == HELP_THREADS ? thread_help
	                             : topic == HELP_PROCESSES ? process_help
	                             : function_help;
	char line[256];
	int y = 0;

	snprintf(line, sizeof line, "pytop %s - keys", PACKAGE_VERSION);
	crt_put(crt, y++, 0, CRT_HEADER, line);
	y = draw_bindings(crt, y) + 1;
	for (size_t i = 0; columns[i] != NULL && y < LINES - 1; i++, y++) {
		snprintf(line, sizeof line, "  %s", columns[i]);
		crt_put(crt, y, 0, CRT_NORMAL, line);
	}
	crt_put(crt, LINES - 1, 0, CRT_STATUS, "Press any key to return.");
}
