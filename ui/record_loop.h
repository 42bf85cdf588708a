/* record_loop.h - `pytop record`: the loop without a view.  It polls the
 * source (which records each bucket as it drains the ring) until the
 * target is gone, --duration passes, or SIGINT/SIGTERM/SIGHUP arrives. */
#ifndef PYTOP_UI_RECORD_LOOP_H
#define PYTOP_UI_RECORD_LOOP_H

#include "options.h"
#include "profile/snapshot.h"

/* Returns when the recording should end (the caller closes the session,
 * which finishes the file). */
void record_loop_run(const struct options *o, struct snapshot_source *src);

#endif
