/* replay_bar.h - pytop replay's time bar: one row under the header with
 * the recording's extent, the position and the window the figures
 * cover:
 *   ▶ 12.3 s ├━━━━━━━━━━━┃────────────┤ 0-12.3 of 30.2 s
 * (ASCII: "> 12.3 s |=====|------| ...").  Plain text, so it is tested
 * without a terminal. */
#ifndef PYTOP_UI_REPLAY_BAR_H
#define PYTOP_UI_REPLAY_BAR_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"

/* Fewer columns for the bar itself than this: no bar, the figures only. */
#define REPLAY_BAR_MIN_COLS 10

/* The row for `width` columns (it never takes more); playing: the play
 * sign, else the pause sign. */
void replay_bar_format(const struct snap_replay *r, bool playing, int width, bool utf8,
                       char *buf, size_t size);

/* The column (0 .. cols-1) of time t on a bar of cols columns for an
 * extent of `extent` seconds. */
int replay_bar_col(double t, double extent, int cols);

#endif
