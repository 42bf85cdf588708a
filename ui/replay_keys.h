/* replay_keys.h - the keys of pytop replay, before the live view's:
 * space (or p) plays and pauses, Left / Right or , / . step one refresh,
 * Home / End jump to the start / end, [ and ] put the window's from / to
 * at the position, c clears the window.  Keys that would act on a target
 * or on counts a recording cannot forget (r, n, w, E) are answered with
 * a status message and change nothing.  The screens' own keys (the call
 * tree's and flame graph's arrows, the source view's Left) come first. */
#ifndef PYTOP_UI_REPLAY_KEYS_H
#define PYTOP_UI_REPLAY_KEYS_H

#include <stdbool.h>

#include "tui_state.h"

/* true when key was a replay key (*react set); false: not a replay, or
 * not one of its keys. */
bool replay_keys_handle(struct tui_state *st, int key, unsigned *react);

#endif
