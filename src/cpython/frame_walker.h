/* frame_walker.h - how one family of CPython versions keeps a thread's
 * Python frames, behind one small table of operations, chosen per version
 * by py_frame_walker_for().  The reader does the rest (thread list, code
 * cache and checks, strings) the same way for every family.
 *
 * Families today: frame_walk_chunks.c, 3.11 and later: _PyInterpreterFrame
 * records in per-thread data-stack chunks, reached through the thread
 * state (via _PyCFrame on 3.11/3.12).
 *
 * Adding a version with another frame model, e.g. 3.10 and older, whose
 * frames are heap PyFrameObjects linked by f_back, with f_lasti counting
 * code units and co_code a separate bytes object, and whose line table is
 * co_lnotab (3.9) or the 3.10 co_linetable:
 *   - src/cpython/frame_walk_heap.c (new): a walker reading
 *     tstate->frame and following f_back, one line for it in the walkers[]
 *     table of frame_walker.c;
 *   - src/cpython/py_offsets.c/.h: the version's table, with the fields its
 *     walker reads (tstate->frame, f_back, f_code, f_lasti, co_code);
 *   - src/cpython/code_cache.c: code_read() takes the bytecode size and
 *     the call bitmap's bytes inline at co_code_adaptive (3.11+); for 3.10
 *     it must follow co_code when the table sets it;
 *   - a line-table decoder for that format beside src/cpython/linetable.c,
 *     chosen by version where the aggregator decodes (src/profile/
 *     code_table.c), which then needs the version in REC_CODE_DEF
 *     (src/transport/record.h);
 *   - src/cpython/py_runtime.c: fill_version() reads Py_Version, which
 *     exists from 3.11 on; an older runtime's version must come from
 *     elsewhere (the library's name, as its error message does already).
 * The thread list (thread_list.c), code checks (code_check.c), strings
 * (py_strings.c) and the reader itself (py_reader.c) stay as they are. */
#ifndef PYTOP_FRAME_WALKER_H
#define PYTOP_FRAME_WALKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/code_cache.h"
#include "cpython/code_check.h"
#include "cpython/mem_region.h"
#include "cpython/py_offsets.h"
#include "cpython/scatter.h"
#include "cpython/thread_list.h"
#include "cpython/tick_arena.h"
#include "transport/record.h"

/* What a walker works with during one tick; all borrowed from the reader. */
struct walk_ctx {
	pid_t pid;
	const struct py_offsets *o;
	struct tick_arena *arena;
	struct code_cache *codes;
	uint64_t tick;
};

struct py_frame_walker {
	const char *family;            /* "3.11+ data-stack chunks" */
	unsigned first_minor;          /* handles 3.<first_minor> .. */
	unsigned last_minor;           /* .. 3.<last_minor>; 0 = and later */
	size_t guess_reads;            /* ranges queue_guess adds per thread, at most */

	/* Per-thread-slot state (MAX_THREADS slots), zeroed, from mem (the
	 * reader's: it goes with the reader); NULL = out of memory. */
	void *(*new_state)(const struct py_offsets *o, struct mem_region *mem);

	/* Queue into the tick's first scatter read what slot t's walk will
	 * likely need, guessed from its last walk (may queue nothing). */
	void (*queue_guess)(const struct walk_ctx *cx, void *state, size_t slot,
	                    const struct thread_slot *t, struct scatter *s);
	/* For every slot whose out.status is PY_THREAD_OK, get what its walk
	 * needs (as few reads as it can); a slot it cannot read becomes
	 * PY_THREAD_ERROR (py_sample_fail, with the kind of failure). */
	void (*read_stacks)(const struct walk_ctx *cx, void *state,
	                    struct thread_slot *slots, size_t n);
	/* Fill t->frames (leaf first), t->entry, t->out.nframes and the
	 * SAMPLE_TRUNCATED and SAMPLE_IN_CALL flags; a stack deeper than
	 * PY_READER_MAX_FRAMES as its innermost and outermost frames around
	 * a REC_MORE_FRAMES marker (py_reader.h); a torn chain makes
	 * t->out.status PY_THREAD_ERROR with no frames (py_sample_fail: a
	 * torn frame, or what walk_frame_record found wrong). */
	void (*walk)(const struct walk_ctx *cx, void *state, size_t slot,
	             struct thread_slot *t);
};

/* The families (one file each). */
extern const struct py_frame_walker chunk_frame_walker; /* frame_walk_chunks.c */

/* The walker for o's version, or NULL when none knows its frames. */
const struct py_frame_walker *py_frame_walker_for(const struct py_offsets *o);

/* For walkers: a frame running the code object at code_addr, `off` bytes
 * into its bytecode, as a record frame.  Reads the code if it is new,
 * lists it on t for next tick's check.  false when it is not a readable
 * code object or `off` lies outside it; then t's sample has failed with
 * the code's or its name's kind. */
static inline bool walk_frame_record(const struct walk_ctx *cx, struct thread_slot *t,
                                     uintptr_t code_addr, int64_t off,
                                     struct rec_frame *out)
{
	struct py_code *c = code_cache_resolve(cx->codes, code_addr, off, cx->tick);

	if (c == NULL) {
		py_sample_fail(&t->out, cx->codes->why);
		return false;
	}
	code_checks_list(t, c, cx->tick);
	out->code_id = c->id;
	out->instr_offset = (int32_t)off;
	return true;
}

#endif
