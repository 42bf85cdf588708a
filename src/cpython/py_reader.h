/* py_reader.h - read the Python stacks of a live CPython process without
 * stopping it: thread states, frame chains, code objects.  Used only by the
 * sampler thread.
 *
 * Per tick the steady-state cost is a handful of system calls for the
 * whole process: one scatter read of every thread state (the list is
 * cached and re-validated), one scatter read of every sampled thread's
 * frame data stack, and a kept-descriptor pread of each thread's
 * /proc/.../stat.  Code objects are read once and cached by address.  An
 * address can be reused by a new code object once the old one is freed, so
 * every cached code on a sampled stack is re-checked in the same tick: its
 * fingerprint (size, first line, and the pointers to its constants, names,
 * file name and line table) is read again, in the same scatter read as the
 * thread states for the codes the thread ran last tick, and compared.
 *
 * The reader runs the tick; each job is a file of its own in src/cpython/:
 *   thread_list.c        the cached thread-state list, the GIL holder
 *   frame_walker.c/.h    the frame model per version family (the one
 *                        family today: frame_walk_chunks.c, 3.11+);
 *                        frame_walker.h lists what a new family touches
 *   code_cache.c         code objects read once, fingerprints, forgetting
 *   code_index.c         the cache's address -> slot index
 *   code_check.c         re-checking cached codes every tick
 *   py_strings.c         str and bytes objects, checked
 *   py_name_text.c       a name's characters as escaped, bounded text
 *   scatter.c            one scatter read filled by all of the above
 *   tick_arena.h         the tick's scratch memory
 *   raw_fields.h         fields out of copied bytes, pointer checks
 *   py_offsets.c         the structure layouts per version, as data
 */
#ifndef PYTOP_PY_READER_H
#define PYTOP_PY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/code_cache.h"
#include "cpython/py_runtime.h"
#include "sample_errors.h"
#include "target/proc_threads.h"
#include "transport/record.h"

/* The most frames a sample holds.  A deeper stack is walked whole (up to
 * 65536 frames, 2048 of them outside the data-stack chunks) and kept as
 * its innermost frames, one REC_MORE_FRAMES marker (record.h) and its
 * outermost 512 (SAMPLE_TRUNCATED); beyond those bounds the walk stops
 * and the marker, last, counts the frames walked past the kept ones. */
#define PY_READER_MAX_FRAMES 2048

enum py_thread_status {
	PY_THREAD_SKIPPED = 0, /* not sampled this tick (idle, not --idle) */
	PY_THREAD_OK,
	PY_THREAD_ERROR,       /* torn or unreadable: counted as an error */
};

struct py_thread_sample {
	pid_t tid;
	uintptr_t tstate;
	char state;            /* /proc scheduler state letter, 0 unknown */
	uint64_t utime_ns, stime_ns; /* the thread's CPU time so far */
	uint64_t minflt, majflt;     /* its faults since the previous tick */
	bool faults_known;           /* those are a real difference */
	uint64_t rss_bytes;          /* the process's resident set */
	/* State R only: scheduler run time and run-queue delay so far
	 * (proc_thread_stat). */
	uint64_t run_ns, delay_ns;
	enum py_thread_status status;
	enum sample_error error_kind; /* why, when status is PY_THREAD_ERROR */
	uint16_t flags;        /* enum rec_sample_flags */
	uint32_t nframes;
	const struct rec_frame *frames; /* borrowed from the reader until the next tick */
	/* Per frame, 1 when it is the outermost frame one interpreter-loop
	 * invocation runs (the C stack has an eval frame for it); borrowed
	 * like frames, NULL when unknown. */
	const uint8_t *entry;
};

/* Mark the sample an error of kind k; the first cause found is the one
 * kept (a code that cannot be read also ends the frame walk). */
static inline void py_sample_fail(struct py_thread_sample *s, enum sample_error k)
{
	if (s->status != PY_THREAD_ERROR || s->error_kind == SAMPLE_ERR_NONE)
		s->error_kind = k;
	s->status = PY_THREAD_ERROR;
}

struct py_reader;

/* NULL when out of memory, or (errno EPROTONOSUPPORT) when no frame walker
 * knows rt's version. */
struct py_reader *py_reader_new(pid_t pid, const struct py_runtime *rt);
void py_reader_free(struct py_reader *r);
/* Whether to find which instructions are calls (SAMPLE_IN_CALL; costs a
 * read of each new code object's bytecode).  On by default. */
void py_reader_want_calls(struct py_reader *r, bool on);

/* Sample every Python thread once.  Threads off CPU are skipped unless
 * `idle`.  Returns the number of Python threads (entries), or -1 when the
 * target is gone or unreadable (errno: ESRCH, EPERM). */
int py_reader_sample(struct py_reader *r, struct proc_threads *pt, bool idle);

/* The target's GIL struct, [*lo, *hi): a thread blocked on a futex in it
 * is waiting for the GIL.  false while the GIL is not located. */
bool py_reader_gil_span(const struct py_reader *r, uint64_t *lo, uint64_t *hi);
const struct py_thread_sample *py_reader_thread(const struct py_reader *r, size_t i);
struct py_code *py_reader_code(struct py_reader *r, uint32_t id);

#endif
