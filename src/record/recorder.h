/* recorder.h - a recording of the session (pytop record, -w FILE): what
 * the session calls.  Opened before the target is touched (a bad path
 * fails before anything starts); started once the target is known;
 * given the chance to take a bucket after each poll of the ring; closed
 * after the last.  Everything here runs after the ring, on the consumer
 * side, and reads only the aggregator: nothing reaches the target. */
#ifndef PYTOP_RECORDER_H
#define PYTOP_RECORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "options.h"
#include "profile/aggregator.h"
#include "record/record_bucket.h"

struct recorder;

/* Create the file (record_file.h).  NULL and *err on failure. */
struct recorder *recorder_open(const char *path, bool force, struct pytop_error *err);

/* What the session knows of the target once it runs. */
struct recorder_target {
	pid_t pid;
	bool launched;
	const char *command;        /* spaces between arguments */
	const char *python_version; /* "" without Python */
	double started;             /* when sampling started, CLOCK_REALTIME s */
};

/* Write the session's metadata and start the writer thread. */
bool recorder_start(struct recorder *r, const struct options *o,
                    const struct recorder_target *t, struct pytop_error *err);

/* Is a bucket boundary passed (so that the session reads the gauges)? */
bool recorder_due(const struct recorder *r, double now);

/* After a poll: at each 100 ms boundary of `now` (seconds since sampling
 * started) the aggregator's figures since the last bucket become a
 * bucket, with the gauges g.  A full queue merges the bucket into the
 * next one (counted). */
void recorder_tick(struct recorder *r, struct aggregator *agg, double now,
                   const struct rb_gauges *g);

/* A bucket now, whatever the boundary (before the aggregator forgets
 * its counts: reset, native frames toggled; at the end).  With the
 * queue full this waits for room (up to 30 s): those counts cannot be
 * merged into a later bucket.  The sampler never waits; the ring may
 * fill meanwhile (drops counted). */
void recorder_flush(struct recorder *r, struct aggregator *agg, double now,
                    const struct rb_gauges *g);

/* A view takes a snapshot now (after the poll that fed it): the
 * figures since the last bucket become a bucket ending now, marked as a
 * refresh, so that a replay's snapshots hold exactly the live ones'
 * samples.  A full queue merges it into the next bucket (counted), which
 * then carries the mark. */
void recorder_refresh(struct recorder *r, struct aggregator *agg, double now,
                      const struct rb_gauges *g);

/* Buckets merged into later ones because the writer was behind. */
uint64_t recorder_merged(const struct recorder *r);

/* Why the recording stopped early (a write failed, out of memory), or
 * NULL. */
const char *recorder_failure(const struct recorder *r);

/* The run's end: exit status (-1 unknown). */
struct recorder_end {
	double elapsed;
	bool exited;
	int exit_status;
	uint64_t dropped;
};

/* The end's metadata (after the queued buckets; the caller flushed the
 * last one), the file closed; r freed.  false and *err when the
 * recording is incomplete. */
bool recorder_close(struct recorder *r, const struct recorder_end *end,
                    struct pytop_error *err);

/* The session failed to start: r freed, its file removed. */
void recorder_abandon(struct recorder *r);

#endif
