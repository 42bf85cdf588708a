/* rss_rate.h - how fast the target's RSS grows: bytes per minute over the
 * last minute of gauge reads (since the first read while there is less),
 * for the header's "+12M/min".  Keeps one read per RSS_RATE_STEP_NS, the
 * last RSS_RATE_STEPS of them; fed on the consumer side at each snapshot. */
#ifndef PYTOP_RSS_RATE_H
#define PYTOP_RSS_RATE_H

#include <stdint.h>

#define RSS_RATE_STEPS 6
#define RSS_RATE_STEP_NS 10000000000ull /* 6 x 10 s: the last minute */

struct rss_rate {
	uint64_t t_ns[RSS_RATE_STEPS];
	uint64_t rss[RSS_RATE_STEPS];
	unsigned n, head; /* reads kept; the slot of the newest */
};

/* Note the RSS read at t_ns (monotonic), and return the growth rate in
 * bytes per minute from the oldest kept read to this one (negative when
 * it shrank; 0 with no earlier read). */
double rss_rate_update(struct rss_rate *r, uint64_t t_ns, uint64_t rss);

#endif
