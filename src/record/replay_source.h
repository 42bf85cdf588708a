/* replay_source.h - pytop replay: a recording as a snapshot_source, so
 * that the batch printer and the TUI show it as they showed the live
 * session.
 *
 * The live view's refreshes are in the recording (record_timeline.h: a
 * bucket ends at each snapshot), so the replay's snapshot k holds the
 * samples of exactly the buckets before live snapshot k: the same
 * figures, summed by record_read.c and counted into functions and lines
 * by stack_derive.c.  What a recording does not keep (pytop's own CPU,
 * the threads' states and CPU, the GIL and run-queue shares, the
 * verdict, memory kept, ...) stays 0 and snapshot.replay.on tells the
 * views to show it as unknown.  The user's file is never written (read
 * from record_read's private copy). */
#ifndef PYTOP_REPLAY_SOURCE_H
#define PYTOP_REPLAY_SOURCE_H

#include <stdbool.h>

#include "errors.h"
#include "profile/snapshot.h"

struct replay;

/* Open `path` and check the range [from, to) (seconds from the
 * recording's start; from < 0: its start; to < 0: its last refresh):
 * inside the recording, holding samples.  batch: each take gives the
 * next refresh of the range, and poll says whether one is left (else:
 * take gives the position, moved with replay_step / replay_mark).  NULL
 * and *err (one line naming the problem and the fix) otherwise. */
struct replay *replay_open(const char *path, double from, double to, bool batch,
                           struct pytop_error *err);

/* Its snapshot_source (valid while r is). */
struct snapshot_source replay_source(struct replay *r);

/* A read that failed midway (the copy became unreadable): its line, or
 * NULL. */
const char *replay_failure(const struct replay *r);

void replay_close(struct replay *r);

#endif
