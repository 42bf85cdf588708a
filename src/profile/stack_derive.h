/* stack_derive.h - the functions, lines and callees tables computed from
 * a snapshot's stacks (snapshot.h: stack_frames, stack_nodes, stacks).
 *
 * The rules are the aggregator's (aggregator.h): a function is (name,
 * file), a line (file, line); own is the innermost frame's function and
 * the innermost frame that has a line (a native frame without a source
 * line has none, nor has "[N more frames]"); total counts every distinct
 * function and line of a stack once; the split and mem_kept belong to the
 * own function and line (mem_kept's marks add up like the split).  A
 * function's line is the smallest first line of its frames in the table
 * (the aggregator keeps its across a reset), a line's name the
 * function of its first frame in the table (frames are numbered in the
 * order they were first seen, leaf first within a stack, as the
 * aggregator first saw the line).  A stack whose leaf is native
 * (--native) is a callee of the line of its innermost Python frame, if
 * that has one (own = total: the stack's samples).  "[other stacks]"
 * gives one function and one line row with other = true, unless the
 * snapshot tells what its stacks were samples of (has_folded_rows: the
 * aggregator's, stack_folded_rows), whose rows are then counted in their
 * place, so that a fold of the stack table changes no row; a frame whose
 * function (line) row the aggregator folded (snap_frame.folded_func,
 * folded_line) counts in an "[other]" function (line) row, other = true,
 * whose total counts a sample once however many folded frames it
 * holds, and names or places no named row (a folded row sampled again
 * starts anew); a thread's folded "[other]" entry (stack_folded_rows,
 * other) counts at most its "[other stacks]" samples: rows that fold
 * after their stacks did add their totals up there, which rows a folded
 * stack held being no longer known (exact when every such sample holds
 * a folded row).  This is what the snapshot's rows, the call tree,
 * exports and recordings are counted from (checked against the tests'
 * own count of the same records, tests/sample_oracle.h).
 */
#ifndef PYTOP_STACK_DERIVE_H
#define PYTOP_STACK_DERIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

struct stack_derived {
	struct snap_func *funcs; size_t nfuncs;   /* owned, unsorted */
	struct snap_line *lines; size_t nlines;   /* owned, unsorted */
	struct snap_callee *callees; size_t ncallees; /* owned, unsorted */
	uint64_t samples, samples_win;            /* the stacks' samples */
	struct snap_split split;                  /* ... and their split */
};

/* From s's stacks of thread tid (0: all) of process pid (0: all).  The
 * rows' strings are s's: valid while s is.  false on OOM (*out empty). */
bool stack_derive(const struct snapshot *s, pid_t tid, pid_t pid,
                  struct stack_derived *out);
void stack_derived_free(struct stack_derived *d);

#endif
