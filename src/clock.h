/* clock.h - monotonic time and absolute-deadline sleeping. */
#ifndef PYTOP_CLOCK_H
#define PYTOP_CLOCK_H

#define NSEC_PER_SEC 1000000000ull /* every ns <-> s conversion */

#include <stdint.h>

uint64_t clock_now_ns(void);          /* CLOCK_MONOTONIC */
uint64_t clock_unix_ns(void);         /* CLOCK_REALTIME: only to stamp output */
uint64_t clock_thread_cpu_ns(void);   /* CPU time of the calling thread */
uint64_t clock_process_cpu_ns(void);  /* CPU time of the whole pytop process */
/* Sleep until the absolute CLOCK_MONOTONIC time `deadline_ns` (restarts on
 * EINTR; returns at once if the deadline has passed). */
void clock_sleep_until(uint64_t deadline_ns);

#endif
