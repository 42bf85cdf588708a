/* aggregator.h - turns records from the ring into per-function, per-line
 * and per-thread counters, and hands out snapshots of them.
 *
 * Single-threaded: the aggregator lives on the consumer side of the ring and
 * is only touched by that thread (the UI / batch loop).
 */
#ifndef PYTOP_AGGREGATOR_H
#define PYTOP_AGGREGATOR_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

struct aggregator;

struct aggregator *aggregator_new(void);
void aggregator_free(struct aggregator *a);

/* Consume one whole record (record.h).  Malformed records (bad size, unknown
 * code id, unknown type) are ignored and counted in aggregator_bad(). */
void aggregator_ingest(struct aggregator *a, const void *rec, size_t len);

/* Fill out->funcs / lines / threads and the sample counters (samples,
 * samples_win) and close the current window.  The other snapshot fields are
 * left untouched for the caller (session) to fill.  Functions come sorted by
 * own samples, descending; lines likewise. */
void aggregator_snapshot(struct aggregator *a, struct snapshot *out);

/* Forget all counts and threads; code definitions and strings are kept. */
void aggregator_reset(struct aggregator *a);

uint64_t aggregator_bad(const struct aggregator *a);

#endif
