/* sampler_priority.h - how urgently the sampler thread is scheduled. */
#ifndef PYTOP_SAMPLER_PRIORITY_H
#define PYTOP_SAMPLER_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>

/* On a busy machine a normal thread, even at a high nice value, waits for
 * whole time slices of other processes (the kernel shares the CPU between
 * sessions before it looks at nice), and the sampler misses its ticks.  So,
 * when allowed (root or CAP_SYS_NICE), the sampler runs real-time at the
 * lowest priority, but only while that is cheap: above RT_MAX_DUTY of a CPU
 * (10 kHz with deep stacks, --native) it would take a core from the
 * target, and it steps back to a high nice value until its cost falls below
 * RT_RESUME_DUTY again.  One costly window is not enough to step back: the
 * first second reads every code object once. */
struct sampler_priority {
	bool realtime;      /* SCHED_FIFO now */
	bool rt_refused;    /* the kernel said no: do not ask again */
	int costly;         /* consecutive windows above RT_MAX_DUTY */
	uint64_t since_ns;  /* start of the current measuring window */
	uint64_t cpu0_ns;   /* the thread's CPU time then */
};

/* Call on the sampler thread before its first tick. */
void sampler_priority_start(struct sampler_priority *p, uint64_t now_ns);
/* Call once per tick (cheap: it reads the thread's CPU clock about once a
 * second); switches policy when the cost crosses the bounds. */
void sampler_priority_check(struct sampler_priority *p, uint64_t now_ns);

#endif
