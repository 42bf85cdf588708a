/* sampler_priority.c - the sampler thread real-time while it is cheap, a
 * high nice value otherwise (sampler_priority.h says why). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/sampler_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"

#define SAMPLER_NICE -10
#define RT_PRIORITY 1          /* the lowest: any real-time task goes first */
#define RT_MAX_DUTY 0.20       /* of one CPU, over a window */
#define RT_RESUME_DUTY 0.10
#define WINDOW_NS NSEC_PER_SEC
#define COSTLY_WINDOWS 2       /* in a row, before stepping back */

static bool set_fifo(bool on)
{
	struct sched_param sp = {.sched_priority = on ? RT_PRIORITY : 0};
	/* Reset on fork: nothing the sampler starts should inherit it. */
	return sched_setscheduler(0, (on ? SCHED_FIFO : SCHED_OTHER) |
	                                  SCHED_RESET_ON_FORK, &sp) == 0;
}

static void set_nice(void)
{
	/* Unprivileged this fails and nothing changes. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SAMPLER_NICE);
}

void sampler_priority_start(struct sampler_priority *p, uint64_t now_ns)
{
	*p = (struct sampler_priority){.since_ns = now_ns,
	                               .cpu0_ns = clock_thread_cpu_ns()};
	set_nice();
	p->realtime = set_fifo(true);
	p->rt_refused = !p->realtime;
}

void sampler_priority_check(struct sampler_priority *p, uint64_t now_ns)
{
	if (p->rt_refused || now_ns - p->since_ns < WINDOW_NS)
		return;
	uint64_t cpu = clock_thread_cpu_ns();
	double duty = (double)(cpu - p->cpu0_ns) / (double)(now_ns - p->since_ns);
	p->since_ns = now_ns;
	p->cpu0_ns = cpu;
	p->costly = duty > RT_MAX_DUTY ? p->costly + 1 : 0;
	if (p->realtime && p->costly >= COSTLY_WINDOWS) {
		p->realtime = !set_fifo(false);
		if (!p->realtime)
			set_nice(); /* the policy change reset it */
	} else if (!p->realtime && duty < RT_RESUME_DUTY) {
		p->realtime = set_fifo(true);
	}
}
