/* mem_kept.c - see mem_kept.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/mem_kept.h"

int64_t mem_net(uint64_t growth, uint64_t shrink)
{
	return growth >= shrink ? (int64_t)(growth - shrink) : -(int64_t)(shrink - growth);
}

bool mem_kept_due(struct mem_kept_clock *clk, uint64_t now_ns)
{
	if (clk->next_ns == 0) {
		clk->next_ns = now_ns + MEM_KEPT_SLOT_NS;
		return false;
	}
	if (now_ns < clk->next_ns)
		return false;
	clk->slot = (clk->slot + 1) % MEM_KEPT_SLOTS;
	/* A pause longer than a slot (pytop stopped, the target idle)
	 * starts the steps afresh from now rather than catching up. */
	clk->next_ns = now_ns - clk->next_ns >= MEM_KEPT_SLOT_NS ? now_ns + MEM_KEPT_SLOT_NS
	                                                         : clk->next_ns + MEM_KEPT_SLOT_NS;
	return true;
}

void mem_kept_mark(struct mem_kept *k, const struct mem_kept_clock *clk, int64_t net_now)
{
	k->net_at[clk->slot] = net_now;
}

int64_t mem_kept_value(const struct mem_kept *k, const struct mem_kept_clock *clk,
                       int64_t net_now)
{
	/* The slot after the last recorded one holds the oldest mark (0 for
	 * a boundary not yet passed, or passed before the row existed). */
	return net_now - k->net_at[(clk->slot + 1) % MEM_KEPT_SLOTS];
}

void mem_kept_add(struct mem_kept *to, const struct mem_kept *k)
{
	for (int i = 0; i < MEM_KEPT_SLOTS; i++)
		to->net_at[i] += k->net_at[i];
}
