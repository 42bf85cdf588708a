/* help_screen.c - the help screen: drawing it, and any key closing it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "help_screen.h"

#include <stdio.h>

#include "keys.h"
#include "tui_state.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define KEY_COLS 10 /* width of the key column */

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

void help_screen_draw(const struct crt *crt, const char *const *columns)
{
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

/* ---- as a screen (screen.h) -------------------------------------------- */

/* pytop replay: its own keys (replay_keys.h) in place of the columns'
 * help, which man pytop and the live help have. */
static const char *const replay_help[] = {
	"Replay: Space/p play or pause (at the recorded refresh interval);",
	"Left/Right or , . one refresh back/forward (tree, flame: , .);",
	"Home/End the start/end; [ ] the window's from/to here; c no window.",
	"Every figure covers the window shown in the header and the time bar;",
	"? = not in a recording.  r w n E change nothing in a replay.",
	NULL,
};

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	(void)y, (void)h, (void)status;
	help_screen_draw(crt, st->replay ? replay_help : st->help_from->column_help);
}

/* Any key closes it (as in htop), back to the screen it covered. */
static bool op_key(struct tui_state *st, int key, unsigned *react)
{
	(void)key;
	st->view = st->help_from;
	*react = REACT_REDRAW;
	return true;
}

const struct screen_ops help_screen_ops = {
	.name = "help",
	.draw = op_draw,
	.full_screen = true,
	.key = op_key,
};
