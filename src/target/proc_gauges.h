/* proc_gauges.h - whole-process memory, fault and CPU figures of the
 * target, read through libproc2 (plus the two facts it has no item for:
 * the RSS high-water mark and the memory limit).  Read on the consumer
 * side at each snapshot, never on the sampler's clock. */
#ifndef PYTOP_PROC_GAUGES_H
#define PYTOP_PROC_GAUGES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
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

/* The final figures of a reaped program from wait4's resource usage (its
 * own and its reaped descendants'): CPU, faults and the peak RSS the
 * kernel recorded (ru_maxrss), which no read of /proc can give once it has
 * exited.  The RSS stays `last`'s (the last one seen alive); the peak is
 * never below last's. */
void proc_gauges_final(const struct rusage *ru, const struct proc_gauge_read *last,
                       struct proc_gauge_read *out);

/* The memory the process may use before it is in trouble: the smallest
 * limit of its own cgroup (from /proc/PID/cgroup) and that cgroup's
 * ancestors (v2 memory.max, v1 memory.limit_in_bytes), or the machine's
 * RAM when none is set or smaller.  Read once (cgroup moves are rare). */
uint64_t proc_gauges_mem_limit(pid_t pid);

/* The CPUs the process's cgroup may use (quota / period of v2 cpu.max or
 * v1 cpu.cfs_quota_us, the tightest up to the root; 0.5 = half a CPU), 0
 * when no quota is set.  Read once, like the memory limit. */
double proc_gauges_cpu_limit(pid_t pid);

/* How long the CPU quota of the process's cgroup (or of an ancestor: the
 * most throttled) has held it back so far, in ns summed over CPUs (v2
 * cpu.stat throttled_usec, v1 throttled_time); 0 without a quota.  Reads
 * /proc/PID/cgroup each time: a process moved into a cgroup is seen. */
uint64_t proc_gauges_cpu_throttled(pid_t pid);

/* When the process started, in CLOCK_REALTIME seconds (to a clock tick:
 * /proc/PID/stat's start time after boot, plus the boot's real time); 0
 * when it is gone or unreadable.  Read once: it never changes. */
double proc_gauges_started(pid_t pid);

/* The parsers behind the reads above (for tests and fuzzing): VmHWM of a
 * /proc/PID/status text in bytes (0 when absent), and a cgroup memory
 * limit file's text (memory.max, memory.limit_in_bytes) in bytes
 * (UINT64_MAX for "max" or garbage). */
uint64_t proc_gauges_parse_hwm(FILE *status);
uint64_t proc_gauges_parse_max(const char *text);
/* A /proc/PID/stat line's start time (field 22, clock ticks after boot);
 * 0 when it has none. */
uint64_t proc_gauges_parse_start(const char *stat);
/* A cpu.stat text's throttled time in ns (0 when absent). */
uint64_t proc_gauges_parse_throttled(const char *text);

#endif
