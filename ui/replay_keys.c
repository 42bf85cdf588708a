/* replay_keys.c - pytop replay's keys (replay_keys.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "replay_keys.h"

#include <limits.h>

#include "crt.h"
#include "keys.h"

#define K(k) CRT_KEYCODE(k)

static unsigned step(struct tui_state *st, int by)
{
	st->replay_step = by;
	st->replay_mark = -1;
	return REACT_REPLAY | REACT_REDRAW;
}

static unsigned mark(struct tui_state *st, int which)
{
	st->replay_step = 0;
	st->replay_mark = which;
	return REACT_REPLAY | REACT_REDRAW;
}

static unsigned refuse(struct tui_state *st, const char *why)
{
	st->note = why;
	return REACT_REDRAW;
}

/* The key's reaction; REACT_NONE for a key that is not the replay's. */
static unsigned replay_key(struct tui_state *st, int key)
{
	switch (key) {
	case ' ':
	case 'p':
		st->playing = !st->playing;
		return REACT_REDRAW;
	case ',':
	case K(KEY_LEFT):
		return step(st, -1);
	case '.':
	case K(KEY_RIGHT):
		return step(st, 1);
	case K(KEY_HOME):
		return step(st, INT_MIN);
	case K(KEY_END):
		return step(st, INT_MAX);
	case '[':
		return mark(st, REPLAY_MARK_FROM);
	case ']':
		return mark(st, REPLAY_MARK_TO);
	case 'c':
		return mark(st, REPLAY_MARK_CLEAR);
	case 'r':
		return refuse(st, "[replay: a recording's counts stay; choose a window with [ ]]");
	case 'w':
		return refuse(st, "[replay: choose the window with [ and ], c clears it]");
	case 'n':
		return refuse(st, "[replay: native frames are shown as recorded]");
	case 'E':
		return refuse(st, "[replay: export with pytop export FILE --from T --to T]");
	default:
		return REACT_NONE;
	}
}

bool replay_keys_handle(struct tui_state *st, int key, unsigned *react)
{
	if (!st->replay)
		return false;
	/* In a function's source Left goes back, as live. */
	if (key == K(KEY_LEFT) && st->view->left_is_back)
		return false;
	*react = replay_key(st, key);
	return *react != REACT_NONE;
}
