/* mem_kept.h - the "kept" memory of a profile row: its net RSS growth
 * (growth minus shrink charged to it) over the last minute, what grew
 * there and did not come back.
 *
 * Each row remembers its net growth at the last MEM_KEPT_SLOTS boundaries
 * of a clock that ticks every MEM_KEPT_SLOT_NS of sample time; kept is the
 * net now minus the net at the oldest boundary, so the window is between
 * (MEM_KEPT_SLOTS - 1) and MEM_KEPT_SLOTS slots long and moves in slot
 * steps.  Before the first full window it is the row's net since start.
 * A row fed only while it grows and shrinks within a slot or two (a
 * function that allocates and frees) keeps about nothing; a leak keeps its
 * growth rate times the window. */
#ifndef PYTOP_MEM_KEPT_H
#define PYTOP_MEM_KEPT_H

#include <stdbool.h>
#include <stdint.h>

#define MEM_KEPT_SLOTS 6
#define MEM_KEPT_SLOT_NS 10000000000ull /* 6 x 10 s: the last minute */

/* One row's net growth at each recorded boundary (bytes). */
struct mem_kept {
	int64_t net_at[MEM_KEPT_SLOTS];
};

/* The boundaries, shared by every row of a profile. */
struct mem_kept_clock {
	uint64_t next_ns; /* sample time of the next boundary, 0 = not started */
	unsigned slot;    /* the boundary recorded last */
};

/* Net growth of split-like figures: growth minus shrink, signed. */
int64_t mem_net(uint64_t growth, uint64_t shrink);

/* true when sample time now_ns has passed a boundary: the caller then
 * records every row with mem_kept_mark (once per call that says true).
 * The first call only starts the clock. */
bool mem_kept_due(struct mem_kept_clock *clk, uint64_t now_ns);

/* Record the row's net growth at the boundary mem_kept_due just passed. */
void mem_kept_mark(struct mem_kept *k, const struct mem_kept_clock *clk, int64_t net_now);

/* The row's net growth since the oldest boundary it remembers. */
int64_t mem_kept_value(const struct mem_kept *k, const struct mem_kept_clock *clk,
                       int64_t net_now);

/* Rows folded together: their marks add as their nets do. */
void mem_kept_add(struct mem_kept *to, const struct mem_kept *k);

#endif
