/* verdict.h - one word for what holds the target back over a window, with
 * its reason, from the rules of thumb an operator would apply to top's
 * figures:
 *   memory-bound  major faults at >= VERDICT_MAJFLT_RATE per second, or
 *                 at >= VERDICT_MAJFLT_WAITING_RATE while the threads
 *                 are mostly off CPU (what they wait for is the disk
 *                 paging their memory in), or RSS at >= 90% of the
 *                 memory limit;
 *   waiting       at most ticks no Python thread was runnable (all
 *                 sleeping, blocked on I/O or locks).  Runnable threads
 *                 that wait for a CPU the machine cannot give them are
 *                 not "waiting": the program would run if it could;
 *   throttled     as starved (below), while the cgroup's CPU quota held
 *                 it back for at least VERDICT_THROTTLED_PCT of the
 *                 window (verdict_decide_loaded);
 *   starved       runnable, but at least VERDICT_STARVED_SHARE of that
 *                 time in the run queue, waiting for a CPU the machine
 *                 does not give it (verdict_decide_loaded);
 *   system-bound  >= 35% of its CPU time was spent in the kernel;
 *   CPU-bound     otherwise: user time ~ wall time x busy threads.
 * Checked in that order: paging makes everything else slow, so it wins. */
#ifndef PYTOP_VERDICT_H
#define PYTOP_VERDICT_H

#include <stddef.h>

#include "profile/snapshot.h"

#define VERDICT_MAJFLT_RATE 50.0
#define VERDICT_MAJFLT_WAITING_RATE 5.0
#define VERDICT_MEM_SHARE 0.90
#define VERDICT_ACTIVE_PCT 50.0
#define VERDICT_SYSTEM_SHARE 0.35
#define VERDICT_MIN_WINDOW_S 0.2
#define VERDICT_STARVED_SHARE 0.5
#define VERDICT_THROTTLED_PCT 10.0

/* From the gauges of a window of window_s seconds and the share of its
 * ticks at which some Python thread was runnable (active_pct); reason gets
 * a short explanation ("" for VERDICT_NONE). */
enum snap_verdict verdict_decide(const struct snap_gauges *g, double active_pct,
                                 double window_s, char *reason, size_t size);

/* verdict_decide with the runnable share split: a process that would be
 * CPU- or system-bound is starved when cpu_wait_pct (ticks some thread
 * waited in the run queue) is at least VERDICT_STARVED_SHARE of
 * runnable_pct, and throttled when besides its cgroup's quota held it
 * back (g->cpu_throttled_pct). */
enum snap_verdict verdict_decide_loaded(const struct snap_gauges *g, double runnable_pct,
                                        double cpu_wait_pct, double window_s, char *reason,
                                        size_t size);

#endif
