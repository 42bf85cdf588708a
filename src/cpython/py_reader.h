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
 */
#ifndef PYTOP_PY_READER_H
#define PYTOP_PY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/proc_threads.h"
#include "cpython/py_runtime.h"
#include "transport/record.h"

#define PY_READER_MAX_FRAMES 2048
/* A code object not seen on any stack for this long is forgotten (code
 * churn: exec'd and compiled code comes and goes); seen again, it is read
 * afresh and gets a new slot, whose `sent` is false, so the sampler
 * defines it again under a new session id (code_table.h says why the
 * aggregator may then drop the old one). */
#define PY_READER_CODE_IDLE_S 10
#define PY_CODE_FP_WORDS 8

/* A code object as read once from the target.  Owned by the reader. */
struct py_code {
	uintptr_t addr;
	uint32_t id;           /* index into the reader; a forgotten code's
	                          slot is reused (with sent = false) */
	bool sent;             /* its REC_CODE_DEF reached the ring */
	bool valid;            /* false once superseded at the same address */
	int firstlineno;
	int32_t code_bytes;    /* size of the bytecode, for offset checks */
	uint64_t fp[PY_CODE_FP_WORDS]; /* fingerprint, see code_fingerprint() */
	uint64_t verified_tick;        /* tick of the last check queued */
	uint64_t listed_tick;          /* tick it was last listed for a check */
	uint64_t seen_tick;            /* tick it was last on any stack */
	char *qualname;        /* owned, UTF-8 */
	char *filename;        /* owned, UTF-8 */
	uint8_t *linetable;    /* owned */
	uint32_t linetable_len;
	uint8_t *call_bits;    /* owned: bit i set = code unit i (byte offset
	                          2i) is a call instruction; NULL = unknown */
};

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
	uint64_t rss_bytes;          /* the process's resident set */
	/* State R only: scheduler run time and run-queue delay so far
	 * (proc_thread_stat). */
	uint64_t run_ns, delay_ns;
	enum py_thread_status status;
	uint16_t flags;        /* enum rec_sample_flags */
	uint32_t nframes;
	const struct rec_frame *frames; /* borrowed from the reader until the next tick */
	/* Per frame, 1 when it is the outermost frame one interpreter-loop
	 * invocation runs (the C stack has an eval frame for it); borrowed
	 * like frames, NULL when unknown. */
	const uint8_t *entry;
};

struct py_reader;

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
