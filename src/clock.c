/* clock.c - monotonic time and absolute-deadline sleeping (clock.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "clock.h"

#include <errno.h>
#include <time.h>

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t clock_now_ns(void) { return read_clock(CLOCK_MONOTONIC); }
uint64_t clock_unix_ns(void) { return read_clock(CLOCK_REALTIME); }
uint64_t clock_thread_cpu_ns(void) { return read_clock(CLOCK_THREAD_CPUTIME_ID); }
uint64_t clock_process_cpu_ns(void) { return read_clock(CLOCK_PROCESS_CPUTIME_ID); }

void clock_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(deadline_ns % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}
