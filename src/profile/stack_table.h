/* stack_table.h - every distinct stack interned once, and samples counted
 * per (stack, thread).
 *
 * A frame is (code id, line): a Python code object and the line its
 * instruction offset falls on, or a native function (--native, code ids
 * from 0x80000000) and its source line (0 unknown).  Frames are interned
 * to frame ids, numbered in the order they were first seen (leaf first
 * within a stack; a fold keeps the order).  A stack is a node of a prefix tree: node = (parent node,
 * frame), node 0 the root (the empty stack), so a stack of any depth is
 * one node id and stacks sharing their outer frames share those nodes.
 * Node 1 is "[other stacks]" (frame STACK_FRAME_OTHER, parent the root):
 * the stacks folded away.
 *
 * A cell counts the samples whose whole stack is one node, of one thread
 * (its process is the one of its first sample: a TID names one thread of
 * one process at a time), or of the threads of process P that are gone
 * (tid = -P: stack_table_merge_gone); cells are what the call tree, the
 * flame graph and exports read.  Their figures are the own samples of the node's leaf:
 * a node's total is the sum over the cells at or under it.
 *
 * Identical consecutive stacks of a thread (a thread busy in one place)
 * are not interned frame by frame again: a memo holds the thread's last
 * raw frames (code id, instruction offset) and the node of each of its
 * suffixes, so one memcmp answers an unchanged stack, and a stack that
 * shares its outer frames with the last one hashes only the others.
 *
 * Bounded: beyond STACK_MAX_CELLS cells or STACK_MAX_NODES nodes,
 * stack_table_fold keeps the cells with most samples (three quarters of
 * the cap) and folds the others into their thread's "[other stacks]"
 * cell, so every sum stays right; nodes and frames no kept cell uses go.
 * Stacks holding a code the code table dropped (code churn, code ids are
 * never reused) fold at the same time (the aggregator first moves the
 * frames of a code about to go to its function's code:
 * stack_table_recode, so only OOM leaves such frames).  The aggregator's row fold is done
 * in frame space (stack_table_fold_frames): the frames of a function or
 * line whose row went to "[other]" are marked, not moved, so every stack
 * still derives the rows' figures (stack_derive.h); once their codes
 * go, those folded whole become one "[other]" frame and the stacks on
 * them merge (stack_table_rewrite_gone) instead of folding away.  Folding renumbers cells, nodes
 * and frames; it bumps `gen`, which invalidates every memo.
 *
 * Single-threaded, consumer side only (like the aggregator that owns it).
 */
#ifndef PYTOP_STACK_TABLE_H
#define PYTOP_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hashmap.h"
#include "profile/mem_kept.h"
#include "profile/snapshot.h"
#include "transport/record.h"

#define STACK_ROOT 0u           /* the empty stack */
#define STACK_OTHER 1u          /* "[other stacks]" */
#define STACK_FRAME_OTHER 0u    /* the frame id of "[other stacks]" */
#define STACK_NO_CELL UINT32_MAX

/* A frame whose function (line) row the aggregator folded into "[other]"
 * (aggregator.h: bounded memory): its samples count there from then on. */
#define STACK_FOLD_FUNC 1u
#define STACK_FOLD_LINE 2u
/* The frame has no line row (a native frame without a source line,
 * "[N more frames]"): with STACK_FOLD_FUNC it is folded whole. */
#define STACK_FOLD_NO_LINE 4u
/* The code of the "[other]" frames that the frames of folded rows whose
 * codes went became (stack_table_rewrite_gone); never a real code's id. */
#define STACK_CODE_OTHER 0xfffffffeu

/* Caps (see above).  A cell costs about 300 bytes (256 of its own, 48 of
 * them its kept-memory marks), a node about 40. */
#define STACK_MAX_CELLS 65536
#define STACK_MAX_NODES 262144

struct stack_frame {
	uint32_t code_id;
	int32_t line;
};

struct stack_node {
	uint32_t parent; /* STACK_ROOT for an outermost frame */
	uint32_t frame;  /* frame id */
	uint32_t depth;  /* frames from the root: 1 = outermost */
};

struct stack_cell {
	uint32_t node;
	pid_t tid, pid;
	uint64_t samples, samples_win;
	uint64_t ns;           /* summed sampling intervals */
	uint64_t stamp;        /* the table's serial at its last sample */
	struct snap_split split, split_win;
	struct mem_kept kept;  /* split's net growth at the last boundaries:
	                          marks add up, so a row's kept memory is
	                          its own cells' */
};

/* A cell's figures since the recorder's last bucket (src/record/): kept
 * apart from the window, which the views close at their own pace, and
 * only while recording (stack_table_keep_buckets). */
struct stack_bucket {
	uint64_t samples, ns;
	struct snap_split split;
};

/* A thread's last stack, as the sampler sent it, and the node of each of
 * its suffixes (owned by the caller, zero-initialised; freed with
 * stack_memo_free). */
struct stack_memo {
	struct rec_frame *raw; /* owned: raw[i], leaf first */
	uint32_t *path;        /* owned: path[i] = node of raw[i..n) */
	size_t n, cap;
	uint64_t gen;          /* the table's gen when it was set */
	bool valid;
};

struct stack_table {
	struct stack_frame *frames; size_t nframes, frames_cap;
	struct hashmap frame_by_key;  /* code_id << 32 | (uint32)line -> id */
	struct stack_node *nodes; size_t nnodes, nodes_cap;
	struct hashmap node_by_key;   /* parent << 32 | frame -> node */
	struct stack_cell *cells; size_t ncells, cells_cap;
	struct stack_bucket *bkt;     /* NULL, or bkt[i] for cells[i] (owned;
	                                 bkt_cap entries) */
	size_t bkt_cap;
	struct hashmap cell_by_key;   /* node << 32 | (uint32)tid -> cell */
	uint64_t gen;                 /* folds and resets so far */
	uint64_t serial;              /* samples counted so far */
	uint64_t folded;              /* stacks (cells) folded since the reset */
	uint64_t hashed;              /* frames interned by hashing (the memo
	                                 skips them): for tests and benches */
	uint8_t *fold;                /* owned: STACK_FOLD_* of frames[0..nfold)
	                                 (frames after them: none) */
	size_t nfold;
};

/* false on OOM (t is then empty but usable for stack_table_destroy). */
bool stack_table_init(struct stack_table *t);
void stack_table_destroy(struct stack_table *t);

/* Forget every count (the `r` key): the stacks stay interned, so nodes
 * and memos stay right; the next fold drops those no cell uses. */
void stack_table_reset(struct stack_table *t);

/* The node of frames[0..n) (leaf first, as records carry them);
 * STACK_ROOT for n = 0, STACK_NO_CELL on OOM. */
uint32_t stack_table_intern(struct stack_table *t, const struct stack_frame *frames,
                            size_t n);

/* true and *node when raw[0..n) (n struct rec_frame as the record
 * carries them, maybe unaligned) is the thread's last stack exactly: one
 * memcmp, no frame resolved or hashed. */
bool stack_memo_same(const struct stack_memo *m, const struct stack_table *t,
                     const void *raw, size_t n, uint32_t *node);

/* The node of frames[0..n) (raw[0..n) resolved) as stack_table_intern,
 * but through the thread's memo: the outer frames this stack shares with
 * the thread's last one are not hashed again, so a stack whose leaf moved
 * costs one or two lookups however deep it is.  The memo then holds this
 * stack. */
uint32_t stack_table_intern_memo(struct stack_table *t, struct stack_memo *m,
                                 const void *raw, const struct stack_frame *frames,
                                 size_t n);
void stack_memo_free(struct stack_memo *m);

/* The cell of (node, tid), created without samples if need be (memory
 * given back is charged to a thread's previous stack); STACK_NO_CELL on
 * OOM. */
uint32_t stack_table_cell(struct stack_table *t, uint32_t node, pid_t tid, pid_t pid);

/* Count one sample of weight w_ns of thread tid (process pid) on node:
 * the cell's index, STACK_NO_CELL on OOM. */
uint32_t stack_table_count(struct stack_table *t, uint32_t node, pid_t tid,
                           pid_t pid, uint64_t w_ns);

/* Add d to a cell's split (and its window's when win). */
void stack_table_split(struct stack_table *t, uint32_t cell,
                       const struct snap_split *d, bool win);

/* A kept-memory boundary passed (mem_kept_due): every cell records its
 * net growth. */
void stack_table_mark_kept(struct stack_table *t, const struct mem_kept_clock *clk);

/* A snapshot closed the window. */
void stack_table_close_window(struct stack_table *t);

/* From now on count each cell's bucket figures too (bkt; folds and
 * merges carry them like the cells').  false on OOM. */
bool stack_table_keep_buckets(struct stack_table *t);

/* The recorder wrote the cells' bucket figures: zero them. */
void stack_table_close_bucket(struct stack_table *t);

/* Over a cap (or dead codes to drop)?  Callers fold only then. */
bool stack_table_over_cap(const struct stack_table *t);

/* Is the thread gone for good (aged out of the thread table)? */
typedef bool (*stack_tid_gone)(void *ctx, pid_t tid);

/* The cells of threads `gone` names merge, stack by stack, into cells of
 * their process's gone threads (tid = -pid): a thread per request must
 * not grow the table, and their samples stay in every sum.  Nodes do not
 * move (memos stay right).  Returns the old cell -> new cell map (owned
 * by the caller), or NULL when nothing went or on OOM (nothing changed
 * then). */
uint32_t *stack_table_merge_gone(struct stack_table *t, stack_tid_gone gone, void *ctx);

/* Is the code gone?  (The code table's answer.) */
typedef bool (*stack_code_dead)(void *ctx, uint32_t code_id);

/* Fold as the header says: the cells with most samples (then most
 * recently counted) stay, at most `keep` of them, and none whose stack
 * holds a code `dead` names (dead may be NULL).  Returns the old cell ->
 * new cell map (ncells_before entries, owned by the caller), or NULL on
 * OOM (nothing changed then). */
uint32_t *stack_table_fold(struct stack_table *t, size_t keep,
                           stack_code_dead dead, void *ctx);

/* A cell about to fold into "[other stacks]", the table still whole:
 * what the caller keeps of it (folded_rows.h). */
typedef void (*stack_cell_folds)(void *ctx, const struct stack_table *t,
                                 const struct stack_cell *c);

/* stack_table_fold, telling `each` of every cell that folds (never of an
 * "[other stacks]" cell), once the fold cannot fail any more. */
uint32_t *stack_table_fold_each(struct stack_table *t, size_t keep,
                                stack_code_dead dead, void *ctx,
                                stack_cell_folds each, void *ectx);

/* Which of a frame's rows fold now: STACK_FOLD_* bits (the caller's
 * answer for (code id, line)). */
typedef unsigned (*stack_frame_folds)(void *ctx, uint32_t code_id, int32_t line);

/* Fold in frame space: every frame `folds` names is marked (its bits
 * added to those it had) and keeps its code id, so the nodes, cells and
 * memory marks on it stay and count into "[other]" where the frame's
 * row would have (stack_derive.h).  A marked frame is interned no more:
 * the same (code, line) sampled again is a new frame, under new nodes,
 * as a folded row seen again is a new row.  Bumps `gen` when a frame was
 * marked.  false on OOM (nothing marked then). */
bool stack_table_fold_frames(struct stack_table *t, stack_frame_folds folds, void *ctx);

/* The code table dropped codes: every frame of a gone code that is
 * folded whole (STACK_FOLD_FUNC and STACK_FOLD_LINE or _NO_LINE)
 * becomes one "[other]" frame (code STACK_CODE_OTHER, line 0, its marks
 * kept), and the nodes and cells that thereby become equal merge, as
 * stack_table_merge_gone merges threads: every sum stays, the table
 * shrinks.  The other frames of gone codes are left to stack_table_fold.
 * Returns the old cell -> new cell map (owned by the caller), or NULL
 * when nothing changed or on OOM (nothing changed then). */
uint32_t *stack_table_rewrite_gone(struct stack_table *t, stack_code_dead dead, void *ctx);

/* What a frame's code becomes (code_id itself: unchanged); fold: the
 * frame's STACK_FOLD_* bits. */
typedef uint32_t (*stack_frame_recode)(void *ctx, uint32_t code_id, unsigned fold);

/* Every frame's code through `recode`, in place: frames keep their ids,
 * lines and marks, nodes and cells stay (a code about to go leaves its
 * frames to its function's code, code_table_function).  Bumps gen when
 * a code changed. */
void stack_table_recode(struct stack_table *t, stack_frame_recode recode, void *ctx);

/* STACK_FOLD_* bits of frame id f. */
static inline unsigned stack_table_frame_fold(const struct stack_table *t, uint32_t f)
{
	return f < t->nfold ? t->fold[f] : 0;
}

#endif
