/* verdict.h - one word for what holds the target back over a window, with
 * its reason, from the rules of thumb an operator would apply to top's
 * figures:
 *   memory-bound  major faults at >= VERDICT_MAJFLT_RATE per second, or
 *                 RSS at >= 90% of the memory limit;
 *   waiting       the process used less than half of one CPU (mostly
 *                 sleeping, blocked on I/O or locks);
 *   system-bound  >= 35% of its CPU time was spent in the kernel;
 *   CPU-bound     otherwise: user time ~ wall time x busy threads.
 * Checked in that order: paging makes everything else slow, so it wins. */
#ifndef PYTOP_VERDICT_H
#define PYTOP_VERDICT_H

#include <stddef.h>

#include "snapshot.h"

#define VERDICT_MAJFLT_RATE 50.0
#define VERDICT_MEM_SHARE 0.90
#define VERDICT_WAITING_CPU_PCT 50.0
#define VERDICT_SYSTEM_SHARE 0.35
#define VERDICT_MIN_WINDOW_S 0.2

/* From the gauges of a window of window_s seconds; reason gets a short
 * explanation ("" for VERDICT_NONE). */
enum snap_verdict verdict_decide(const struct snap_gauges *g, double window_s,
                                 char *reason, size_t size);

#endif
