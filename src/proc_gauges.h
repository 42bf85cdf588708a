/* proc_gauges.h - whole-process memory, fault and CPU figures of the
 * target, read through libproc2 (plus the two facts it has no item for:
 * the RSS high-water mark and the memory limit).  Read on the consumer
 * side at each snapshot, never on the sampler's clock. */
#ifndef PYTOP_PROC_GAUGES_H
#define PYTOP_PROC_GAUGES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct proc_gauges;

/* Cumulative figures at one moment. */
struct proc_gauge_read {
	uint64_t rss, rss_peak;      /* bytes */
	uint64_t minflt, majflt;
	uint64_t utime_ns, stime_ns;
	int threads;
};

/* NULL when libproc2 cannot be set up (out of memory). */
struct proc_gauges *proc_gauges_new(pid_t pid);
void proc_gauges_free(struct proc_gauges *g);

/* false when the process is gone or unreadable. */
bool proc_gauges_read(struct proc_gauges *g, struct proc_gauge_read *out);

/* The memory the process may use before it is in trouble: the smallest
 * memory.max of its cgroup v2 and that cgroup's ancestors, or the
 * machine's RAM when none is set.  Read once (cgroup moves are rare). */
uint64_t proc_gauges_mem_limit(pid_t pid);

/* The parsers behind the two reads above, on any stream (for tests and
 * fuzzing): VmHWM of a /proc/PID/status text in bytes (0 when absent), and
 * a cgroup memory.max text in bytes (UINT64_MAX for "max" or garbage). */
uint64_t proc_gauges_parse_hwm(FILE *status);
uint64_t proc_gauges_parse_max(FILE *memory_max);

#endif
