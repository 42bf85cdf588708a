/* replay_batch.h - pytop replay -b: every refresh of a replay source
 * printed at once, as app_run_batch printed the live session (text
 * blocks, --tree, or --json [--stacks] lines), without waiting: the
 * recording's times are in the figures, not in the printing. */
#ifndef PYTOP_UI_REPLAY_BATCH_H
#define PYTOP_UI_REPLAY_BATCH_H

#include <stdio.h>

#include "options.h"
#include "profile/snapshot.h"

/* 0, or -1 when out could not be written. */
int replay_run_batch(const struct options *o, struct snapshot_source *src, FILE *out);

#endif
