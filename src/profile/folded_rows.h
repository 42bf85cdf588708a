/* folded_rows.h - the function, line and callee figures of the stacks
 * the stack table folded into "[other stacks]" (its own cap:
 * stack_table_fold), per thread, so that the rows derived from the
 * stacks (stack_derive.h) stay the rows' figures after a stack fold: the
 * "[other stacks]" cells keep the samples, this table what they were
 * samples of.
 *
 * An entry is (dimension, row, thread): a row is the aggregator's row
 * index of its dimension (function, line), renumbered with the rows when
 * they fold into "[other]" (row 0); a callee's is its pair of rows (the
 * caller's line, the native leaf's function), kept here and renumbered
 * with them, so that the aggregator needs no callee rows; tid is the thread's, or
 * -PID once the thread is gone (its cells merged the same way:
 * stack_table_merge_gone).  Counts follow the cells' rules: own for the
 * stack's own function and line (and its callee), total once per stack
 * for every distinct row on it; the split and kept-memory marks go with
 * own, and shares settled after the fold (system time, run-queue wait,
 * the memory a thread gives back) are added to the entries of the
 * sample's own rows, as they are to its cell.
 *
 * Bounded by the rows: at most one entry per row and thread, and an
 * ended thread's entries merge into its process's.  Single-threaded,
 * owned by the aggregator (consumer side). */
#ifndef PYTOP_FOLDED_ROWS_H
#define PYTOP_FOLDED_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "profile/mem_kept.h"
#include "profile/snapshot.h"

enum folded_dim { FOLDED_FUNC, FOLDED_LINE, FOLDED_CALLEE };

struct folded_counts {
	uint64_t own, total, own_win, total_win;
	uint64_t own_ns, total_ns;
	struct snap_split split, split_win; /* of the own samples */
	struct mem_kept kept;
};

struct folded_row {
	enum folded_dim dim;
	uint32_t row;
	pid_t tid, pid;
	uint64_t stamp;          /* serial of the stack that counted total */
	struct folded_counts c;
};

/* A callee entry's rows: the Python line's and the native leaf's. */
struct folded_pair {
	uint32_t line, func;
};

struct folded_rows {
	struct folded_row *rows; /* owned */
	size_t n, cap;
	struct hashmap by_key;   /* dim, row, tid -> index */
	struct folded_pair *pairs; /* owned: a callee entry's row indexes it */
	uint32_t *pair_moved;    /* owned, pairs_cap long: a renumbering's
	                            old pair -> new pair (no allocation then) */
	size_t npairs, pairs_cap;
	struct hashmap pair_by_key; /* line << 32 | func -> pair */
	uint64_t serial;         /* stacks told so far, for stamps */
};

void folded_rows_init(struct folded_rows *f);
void folded_rows_destroy(struct folded_rows *f);
void folded_rows_clear(struct folded_rows *f);

/* The entry of (dim, row, tid), made empty if need be; NULL on OOM. */
struct folded_row *folded_rows_at(struct folded_rows *f, enum folded_dim dim,
                                     uint32_t row, pid_t tid, pid_t pid);

/* The callee entry of native function row func under line row line. */
struct folded_row *folded_rows_callee_at(struct folded_rows *f, uint32_t line, uint32_t func,
                                         pid_t tid, pid_t pid);

/* A folded stack's figures: samples, its summed interval, and (own) the
 * split and kept marks of its own samples. */
void folded_counts_add(struct folded_counts *c, bool own, uint64_t samples,
                       uint64_t samples_win, uint64_t ns, const struct snap_split *split,
                       const struct snap_split *split_win, const struct mem_kept *kept);

/* A share settled later: d to the split (and the window's when win). */
void folded_counts_split(struct folded_counts *c, const struct snap_split *d, bool win);

/* Rows of dim (FOLDED_FUNC or FOLDED_LINE) renumbered: map[old row] =
 * new row, the callee pairs' rows with them; entries (and pairs) that
 * meet merge.  map must cover every row an entry or pair names. */
void folded_rows_renumber(struct folded_rows *f, enum folded_dim dim, const uint32_t *map);

/* Entries of threads gone(ctx, tid) merge into their process's (-PID). */
void folded_rows_merge_gone(struct folded_rows *f, bool (*gone)(void *ctx, pid_t tid),
                            void *ctx);

void folded_rows_close_window(struct folded_rows *f);
void folded_rows_mark_kept(struct folded_rows *f, const struct mem_kept_clock *clk);

#endif
