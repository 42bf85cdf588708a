/* proc_stat_fast.h - a process's fastest-moving figures (RSS, page
 * faults, CPU time) from one pread of /proc/PID/stat through a kept
 * descriptor.  A recording reads them every 100 ms bucket: the full
 * gauges (proc_gauges.h, libproc2) cost ~200-400 us a read, this a few. */
#ifndef PYTOP_PROC_STAT_FAST_H
#define PYTOP_PROC_STAT_FAST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_stat_fast_read {
	uint64_t rss;              /* bytes */
	uint64_t minflt, majflt;
	uint64_t utime_ns, stime_ns;
};

struct proc_stat_fast;

/* NULL when the file cannot be opened (the process is gone). */
struct proc_stat_fast *proc_stat_fast_open(pid_t pid);
void proc_stat_fast_close(struct proc_stat_fast *f);

/* false when the process is gone or the line is malformed (its comm is
 * the target's: the parser treats it as hostile). */
bool proc_stat_fast_read(struct proc_stat_fast *f, struct proc_stat_fast_read *out);

#endif
