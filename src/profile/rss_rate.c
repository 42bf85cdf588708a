/* rss_rate.c - see rss_rate.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/rss_rate.h"

double rss_rate_update(struct rss_rate *r, uint64_t t_ns, uint64_t rss)
{
	unsigned oldest = (r->head + RSS_RATE_STEPS + 1 - r->n) % RSS_RATE_STEPS;
	double rate = 0;

	if (r->n > 0 && t_ns > r->t_ns[oldest])
		rate = ((double)rss - (double)r->rss[oldest]) * 60e9 /
		       (double)(t_ns - r->t_ns[oldest]);
	/* Keep a read per step, not per refresh: the minute stays a minute
	 * at any refresh interval. */
	if (r->n == 0 || t_ns >= r->t_ns[r->head] + RSS_RATE_STEP_NS) {
		r->head = r->n == 0 ? 0 : (r->head + 1) % RSS_RATE_STEPS;
		r->t_ns[r->head] = t_ns;
		r->rss[r->head] = rss;
		if (r->n < RSS_RATE_STEPS)
			r->n++;
	}
	return rate;
}
