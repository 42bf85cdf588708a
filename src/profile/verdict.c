/* verdict.c - the one-word verdict on what holds the target back, and its
 * reason (verdict.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/verdict.h"

#include <stdio.h>

enum snap_verdict verdict_decide(const struct snap_gauges *g, double active_pct,
                                 double window_s, char *reason, size_t size)
{
	double cpu = g->cpu_user_pct + g->cpu_system_pct;

	reason[0] = '\0';
	if (!g->valid || window_s < VERDICT_MIN_WINDOW_S)
		return VERDICT_NONE;
	if (g->majflt_rate >= VERDICT_MAJFLT_RATE ||
	    (g->majflt_rate >= VERDICT_MAJFLT_WAITING_RATE && active_pct < VERDICT_ACTIVE_PCT)) {
		snprintf(reason, size, "%.0f major faults/s", g->majflt_rate);
		return VERDICT_MEMORY;
	}
	if (g->mem_limit > 0 && (double)g->rss >= VERDICT_MEM_SHARE * (double)g->mem_limit) {
		snprintf(reason, size, "RSS at %.0f%% of the memory limit",
		         100.0 * (double)g->rss / (double)g->mem_limit);
		return VERDICT_MEMORY;
	}
	if (active_pct < VERDICT_ACTIVE_PCT || cpu <= 0) {
		snprintf(reason, size, "runnable at %.0f%% of ticks", active_pct);
		return VERDICT_WAITING;
	}
	if (g->cpu_system_pct >= VERDICT_SYSTEM_SHARE * cpu) {
		snprintf(reason, size, "system %.0f%% of CPU time", 100.0 * g->cpu_system_pct / cpu);
		return VERDICT_SYSTEM;
	}
	snprintf(reason, size, "user %.0f%% of CPU time, %.1f busy threads",
	         100.0 * g->cpu_user_pct / cpu, cpu / 100.0);
	return VERDICT_CPU;
}

enum snap_verdict verdict_decide_loaded(const struct snap_gauges *g, double runnable_pct,
                                        double cpu_wait_pct, double window_s, char *reason,
                                        size_t size)
{
	enum snap_verdict v = verdict_decide(g, runnable_pct, window_s, reason, size);
	double share = runnable_pct > 0 ? cpu_wait_pct / runnable_pct : 0;
	/* Runnable, yet "waiting": its CPU time was too small to see. */
	bool would_run = v == VERDICT_CPU || v == VERDICT_SYSTEM ||
	                 (v == VERDICT_WAITING && runnable_pct >= VERDICT_ACTIVE_PCT);

	if (!would_run || share < VERDICT_STARVED_SHARE)
		return v;
	if (g->cpu_throttled_pct >= VERDICT_THROTTLED_PCT) {
		snprintf(reason, size, "CPU quota: held back %.0f%% of the time, waiting %.0f%% "
		         "of runnable time", g->cpu_throttled_pct, 100.0 * share);
		return VERDICT_THROTTLED;
	}
	snprintf(reason, size, "waiting for a CPU %.0f%% of runnable time", 100.0 * share);
	return VERDICT_STARVED;
}
