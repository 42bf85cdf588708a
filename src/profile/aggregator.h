/* aggregator.h - turns records from the ring into per-stack counters
 * (per stack, thread and process: one way of counting) and per-thread
 * figures, and hands out snapshots whose functions, lines and callees,
 * global or of one thread or process, are counted from the stacks
 * (stack_derive.h).
 *
 * Single-threaded: the aggregator lives on the consumer side of the ring and
 * is only touched by that thread (the UI / batch loop).
 *
 * Counting rules:
 *  - A function is (qualname, filename): code objects sharing both (e.g.
 *    two lambdas in one file) share a row; its `line` is the smallest
 *    first line among those codes that were sampled.  A line is
 *    (filename, line); its `name` is the first function seen on it.
 *  - A frame's line is the line table's answer for its instruction offset,
 *    or the code's first line when the table has none.
 *  - own: the leaf frame's function and line.  total: every distinct
 *    function and every distinct line on the stack, once per sample however
 *    often it recurs.  own_s / total_s add up the samples' interval_ns.
 *  - A sample with no frames (a thread with no Python frame, e.g. idle in C)
 *    counts only in its thread's row (samples, running, top_func = "").  It
 *    is not counted in snapshot.samples: percentages are shares of samples
 *    that have a Python stack.
 *  - A sample naming a code id with no CODE_DEF is dropped whole (counted in
 *    aggregator_bad, not even in its thread's row).
 *  - Bounded memory (code churn): over 2048 function (line) rows, those not
 *    sampled for 2-4 s are folded into one "[other]" row (other = true),
 *    which keeps their counts, per thread and per process too; over 65536
 *    (131072) the fewest sampled fold at once.  A folded function seen
 *    again gets a fresh row.  The stack table's frames of a folded row
 *    are marked folded (stack_table_fold_frames): that is how the
 *    stacks count them in "[other]" from then on; when such a frame's
 *    code is dropped too, it becomes one "[other]" frame and the stacks
 *    that become equal merge (stack_table_rewrite_gone).  Beyond the
 *    stack table's own cap its rarest stacks fold into "[other stacks]";
 *    what they were samples of stays in folded_rows.h, so the stacks
 *    with it still give the rows' figures.  snapshot.folded_funcs / folded_lines count
 *    the rows folded since the last reset.  Code definitions unused for
 *    18 s are dropped (code_table_age); the stack frames of one whose
 *    rows live move to its function's code first (code_table_function).
 *  - Threads are listed by tid, ascending.  A thread row appears with its
 *    first sample, REC_THREAD or REC_THREADS; its name is the latest
 *    REC_THREAD's.
 *  - A thread's state is its entry in the latest REC_THREADS (R + GIL:
 *    running with the GIL; R without it, in a call: running without; R
 *    without it, not in a call, or off CPU waiting for it: GIL wait; idle
 *    otherwise); left out of the latest one: gone (the row
 *    stays, with its counts); not reported yet: unknown.  CPU % (of one
 *    CPU) and GIL % (share of the window's reports holding it) are per
 *    snapshot window, which starts at the previous window's last report
 *    (a thread first reported mid-window: at its first report).  A window
 *    without reports keeps the previous figures.
 *  - A thread's (process's) functions and lines are counted from its
 *    stacks by the same rules as the global ones (see
 *    aggregator_filter_thread).
 *  - The split (snap_split) belongs to the leaf's function and line.  A
 *    sample of a thread that waits for the GIL (it asked for it, or runs
 *    bytecode without it: not in a call) is GIL wait; other samples off
 *    CPU are waiting.  A runnable sample is native when its leaf frame is
 *    in a call instruction, else Python (or GIL wait); it is queued until
 *    its thread's CPU counters move, and then takes its share of the
 *    thread's run-queue delay (CPU wait) and the system share of that
 *    movement, native ones first (cpu_split.h).  Until then a snapshot
 *    counts it as its class, so every row's kinds add up to its own
 *    samples; a thread that is gone settles with its lifetime figures at
 *    the next snapshot.  Memory growth and faults are charged at once;
 *    memory given back goes to the thread's previous sample, in the
 *    window figures of the window it was given back in (the window of
 *    the sample that tells it), whichever window that sample counted in;
 *    to the sample itself when there is no previous sample since the
 *    last reset (a reset forgets it: its rows' counts went) or its
 *    function row folded since.
 *    aggregator_settle() shares out what is still queued (at the end of a
 *    run).
 *  - Stacks: every sample with a stack is counted in the stack table
 *    too (stack_table.h), per (stack, thread), with the same split
 *    (memory given back goes to the thread's previous stack), and every
 *    snapshot carries the stacks, unfiltered (snapshot.h: stack_frames,
 *    stack_nodes, stacks, folded_stacks, stack_folded_rows); its
 *    functions, lines and callees are counted from them (stack_derive.h;
 *    "[other]"'s total counts a sample once however many folded frames
 *    it holds; of "[other stacks]", at most once: stack_derive.h).  A reset forgets their counts, not the stacks.
 */
#ifndef PYTOP_AGGREGATOR_H
#define PYTOP_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

struct stack_table;

struct aggregator;

/* split false (--no-split): samples are counted but not split and no
 * memory is charged (the split fields stay 0). */
struct aggregator *aggregator_new(bool split);
void aggregator_free(struct aggregator *a);

/* Consume one whole record (record.h).  Malformed records (bad size, unknown
 * code id, unknown type) are ignored and counted in aggregator_bad(). */
void aggregator_ingest(struct aggregator *a, const void *rec, size_t len);

/* Define native function `code_id` (--native; code_table_add_native
 * says what the fields mean).  Its frames count in the function rows
 * like Python frames; in the line rows only where their source line is
 * known, and a sample's own line is then its innermost frame that has
 * one.  False on OOM or a malformed definition. */
bool aggregator_define_native(struct aggregator *a, uint32_t code_id, const char *name,
                              const char *file, int line, const char *module);

/* Fill out->funcs / lines / threads and the sample counters (samples,
 * samples_win) and close the current window.  The other snapshot fields are
 * left untouched for the caller (session) to fill.  Functions come sorted by
 * own samples, descending; lines likewise (ties: total descending, then
 * functions by name and lines by file and line).  Only rows with total > 0
 * appear.  The three arrays are freshly allocated and overwrite whatever
 * out held (free it first with snapshot_free); on OOM an array is NULL with
 * count 0. */
void aggregator_snapshot(struct aggregator *a, struct snapshot *out);

/* Restrict the funcs/lines of later snapshots to thread tid (0 = all);
 * their samples / samples_win are then that thread's samples with a
 * Python stack, so percentages stay shares of what the rows count.
 * The stacks are counted per thread from the start, so the filter
 * applies to the whole history at once. */
void aggregator_filter_thread(struct aggregator *a, pid_t tid);

/* The same for one process's samples (-s; 0 = all).  A thread filter,
 * when set, takes precedence. */
void aggregator_filter_process(struct aggregator *a, pid_t pid);

/* Forget all counts, and the threads the latest REC_THREADS did not list
 * (gone or never reported); the listed ones stay with zero counts and
 * their current state and CPU figures.  Code definitions and strings are
 * kept, and so are thread names (REC_THREAD is sent once per thread, so a
 * thread that samples again after a reset gets its name back), and the
 * thread filter.  aggregator_bad() is a health counter and is not reset. */
void aggregator_reset(struct aggregator *a);

uint64_t aggregator_bad(const struct aggregator *a);

/* The recorder's bucket (src/record/, aggregator_bucket.c): keeping the
 * stack table's per-bucket figures from now on (false on OOM); the stack
 * table, whose bkt[] holds the figures counted since the last bucket;
 * what a frame's code is (strings borrowed until the next ingest or
 * snapshot); and the bucket closed. */
bool aggregator_keep_buckets(struct aggregator *a);
const struct stack_table *aggregator_stack_table(const struct aggregator *a);
bool aggregator_describe_frame(const struct aggregator *a, uint32_t code_id, int line,
                               struct snap_frame *out);
void aggregator_close_bucket(struct aggregator *a);
/* -s: what the follower reported of process pid (borrowed strings);
 * false when nothing was. */
bool aggregator_process_info(const struct aggregator *a, pid_t pid, pid_t *ppid,
                             const char **command, const char **python);
/* A thread's OS name as REC_THREAD gave it ("" unknown; borrowed). */
const char *aggregator_thread_name(const struct aggregator *a, pid_t tid);


/* For the final figures, once the target is gone and the ring drained:
 * split the samples still queued for their system share with each
 * thread's lifetime ratio.  (The followed processes that ended with the
 * target came as exit records: the sampler's family_end.h.) */
void aggregator_settle(struct aggregator *a);

#endif
