/* derive_compare.h - the checks shared by the tests that hold a
 * snapshot's functions, lines and callees (counted from its stacks,
 * stack_derive.h) against the oracle's (sample_oracle.h), counted sample
 * by sample from the same records: rows in the same order, counts,
 * windows and seconds, the memory charged with them, equal to the last
 * bit but for rounding (derive_near); the time split, which the oracle
 * cannot replay, by what must hold (derive_check_oracle). */
#ifndef PYTOP_TESTS_DERIVE_COMPARE_H
#define PYTOP_TESTS_DERIVE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

#include "profile/aggregator.h"
#include "profile/snapshot.h"
#include "sample_oracle.h"

/* How a comparison reports and what it holds equal. */
struct derive_cmp {
	const char *label;    /* starts every message: "seed 3 step 17", "tid 11 pid 0" */
	bool fatal;           /* a mismatch ends the test (cr_assert), else cr_expect */
	bool first_line;      /* a function's first line (both keep the smallest
	                         across a reset; a test may not hold it) */
};

bool derive_near(double x, double y);

/* The rows the snapshot's stack frames mark folded (snap_frame.folded_func,
 * folded_line), every frame of theirs, fold in o now (oracle_fold): the
 * aggregator's fold policy decides which rows go, the oracle counts what
 * that means.  Once their codes went, the frames of folded rows are one
 * "[other]" frame that names none: a test checks between a fold and
 * then.  Returns how many rows folded in o. */
size_t derive_sync_folds(struct sample_oracle *o, const struct snapshot *s);

/* s's rows against o's under s's filter (tid, or when 0 pid): samples,
 * every function, line and callee row in order (own, total, their
 * windows and seconds, memory growth, shrink and faults, a function's
 * first line and a line's name); each row's time split adds up to its
 * own samples (window too; 0 without the split), and, unfiltered or
 * under a thread filter, the functions' own splits add up to s.split. */
void derive_check_rows(const struct derive_cmp *c, const struct snapshot *s,
                       const struct sample_oracle *o, pid_t tid, pid_t pid, bool split);

/* a's snapshot under a thread (tid) or process (pid) filter against o,
 * by derive_sync_folds and derive_check_rows, both windows closed.
 * Leaves the filters set. */
void derive_check_oracle(const struct derive_cmp *c, struct aggregator *a,
                         struct sample_oracle *o, pid_t tid, pid_t pid, bool split);

#endif
