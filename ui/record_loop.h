/* record_loop.h - `pytop record`: the loop without a view.  It polls the
 * source (which records each bucket as it drains the ring) until the
 * target is gone, --duration passes, or SIGINT/SIGTERM/SIGHUP arrives.
 * The exports of a view work here too (--format FMT -o FILE at the end,
 * SIGUSR1, --export-every), and so does --push, whose periods end at the
 * snapshots this loop then takes once a second. */
#ifndef PYTOP_UI_RECORD_LOOP_H
#define PYTOP_UI_RECORD_LOOP_H

#include <stdbool.h>

#include "export_live.h"
#include "options.h"
#include "profile/snapshot.h"

/* Returns when the recording should end (the caller closes the session,
 * which finishes the file): 0, or -1 when an export could not be
 * written.  take_each_second: take a snapshot every second (--push). */
int record_loop_run(const struct options *o, struct snapshot_source *src,
                    struct export_live *el, bool take_each_second);

#endif
