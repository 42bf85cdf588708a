/* test_sampler_priority.c - the sampler thread runs real-time while it is
 * cheap and steps back to a normal policy when it is not
 * (src/sampler/sampler_priority.h).  Each case runs on a thread of its own,
 * as the sampler does, since the policy is per thread. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sampler/sampler_priority.h"

struct outcome {
	bool allowed;        /* start() got real-time */
	int policy_start;    /* the thread's policy after start() */
	int policy_busy;     /* after two seconds at 40 % of a CPU */
	int policy_idle;     /* after a quiet second */
	bool rt_one_busy, rt_busy, rt_idle;
};

static int policy_now(void)
{
	return sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
}

/* A little over a window at about 40 % of a CPU (busy: twice the bound,
 * yet leaving the core to the tests beside this one) or about nothing,
 * then check. */
static void spend_window(struct sampler_priority *p, bool busy)
{
	const uint64_t ms = NSEC_PER_SEC / 1000;
	uint64_t end = clock_now_ns() + NSEC_PER_SEC + NSEC_PER_SEC / 10;
	while (clock_now_ns() < end) {
		uint64_t spin_end = clock_now_ns() + (busy ? 4 * ms : 0);
		while (clock_now_ns() < spin_end)
			;
		clock_sleep_until(clock_now_ns() + 6 * ms);
	}
	sampler_priority_check(p, clock_now_ns());
}

static void *run(void *arg)
{
	struct outcome *o = arg;
	struct sampler_priority p;
	sampler_priority_start(&p, clock_now_ns());
	o->allowed = p.realtime;
	o->policy_start = policy_now();
	/* One costly second is start-up; two in a row are not. */
	spend_window(&p, true);
	o->rt_one_busy = p.realtime;
	spend_window(&p, true);
	o->rt_busy = p.realtime;
	o->policy_busy = policy_now();
	spend_window(&p, false);
	o->rt_idle = p.realtime;
	o->policy_idle = policy_now();
	return NULL;
}

Test(sampler_priority, realtime_while_cheap_normal_when_busy)
{
	struct outcome o = {0};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, run, &o), 0);
	pthread_join(t, NULL);
	if (!o.allowed) {
		/* Unprivileged, or a cgroup without real-time time: the
		 * thread must simply stay as it was. */
		cr_assert_eq(o.policy_start, SCHED_OTHER);
		cr_assert_eq(o.policy_busy, SCHED_OTHER);
		cr_skip_test("real-time scheduling refused here (uid %d)",
		             (int)geteuid());
	}
	cr_assert_eq(o.policy_start, SCHED_FIFO, "policy %d after start",
	             o.policy_start);
	cr_assert(o.rt_one_busy, "a single costly second stepped back");
	cr_assert_not(o.rt_busy, "still real-time after two seconds at 40%%");
	cr_assert_eq(o.policy_busy, SCHED_OTHER, "policy %d after a busy "
	             "second", o.policy_busy);
	cr_assert(o.rt_idle, "not real-time again after a quiet second");
	cr_assert_eq(o.policy_idle, SCHED_FIFO, "policy %d after a quiet "
	             "second", o.policy_idle);
}
