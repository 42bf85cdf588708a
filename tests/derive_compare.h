/* derive_compare.h - the checks shared by the tests that hold a
 * snapshot's row counters (agg_snapshot_counted) against what is counted
 * from its stacks (stack_derive.h), or one snapshot's rows against
 * another's: counts, seconds, the whole split and kept memory, equal to
 * the last bit but for rounding (derive_near). */
#ifndef PYTOP_TESTS_DERIVE_COMPARE_H
#define PYTOP_TESTS_DERIVE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

#include "profile/aggregator.h"
#include "profile/snapshot.h"
#include "profile/stack_derive.h"

/* How a comparison reports and what it holds equal. */
struct derive_cmp {
	const char *label;    /* starts every message: "seed 3 step 17", "tid 11 pid 0" */
	const char *theirs;   /* what y is called in messages: "derived", "counters" */
	bool fatal;           /* a mismatch ends the test (cr_assert), else cr_expect */
	bool exact_other;     /* "[other]" rows' totals too (equal only when no
	                         sample had two folded frames) */
	bool first_line;      /* a function's first line (a reset keeps the
	                         row's smallest, the stacks start again) */
};

bool derive_near(double x, double y);

void derive_expect_split(const struct derive_cmp *c, const char *what, const char *name,
                         const struct snap_split *x, const struct snap_split *y);

/* Own, window and seconds, kept memory, the split and its window; the
 * totals when total. */
void derive_expect_counts(const struct derive_cmp *c, const char *what, const char *name,
                          bool total, const struct snap_counts *x,
                          const struct snap_counts *y);

size_t derive_live_funcs(const struct stack_derived *d);
size_t derive_live_lines(const struct stack_derived *d);

const struct snap_func *derive_find_func(const struct stack_derived *d,
                                         const struct snap_func *f);
const struct snap_line *derive_find_line(const struct stack_derived *d,
                                         const struct snap_line *l);

/* Every function, line and callee row of s against d's, and their counts. */
void derive_check_rows(const struct derive_cmp *c, const struct snapshot *s,
                       const struct stack_derived *d);

/* a's row counters under a thread (tid) or process (pid) filter against
 * what its stacks derive, by derive_check_rows ("tid T pid P" in every
 * message, a mismatch not fatal); "[other]"'s total only when
 * exact_other.  Leaves the filters set. */
void derive_check_aggregator(struct aggregator *a, pid_t tid, pid_t pid, bool exact_other);

#endif
