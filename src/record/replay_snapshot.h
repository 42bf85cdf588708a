/* replay_snapshot.h - one snapshot of a recording: the figures of the
 * buckets in [from, at), their window [prev, at), the gauges at `at`,
 * the threads and processes that lived by then, as the live view's
 * snapshot at that refresh had them (replay_source.h says what is left
 * unknown). */
#ifndef PYTOP_REPLAY_SNAPSHOT_H
#define PYTOP_REPLAY_SNAPSHOT_H

#include <sys/types.h>

#include "errors.h"
#include "profile/snapshot.h"
#include "record/record_read.h"

struct replay_span {
	double from, prev, at;  /* from <= prev <= at, seconds from the start */
	pid_t tid, pid;         /* the funcs and lines of one thread / process
	                           (0: all) */
};

/* Fill *out (zeroed first; free with snapshot_free).  from == at gives
 * a snapshot with no samples (the start).  -1 and *err on a read
 * failure. */
int replay_snapshot_build(struct record_reader *r, const struct replay_span *sp,
                          struct snapshot *out, struct pytop_error *err);

/* The process's gauges at `at` (its last reading by then) and their
 * rates since `prev`; valid false when none was read by then. */
void replay_gauges(struct record_reader *r, double prev, double at, struct snap_gauges *g);

#endif
