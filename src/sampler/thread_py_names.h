/* thread_py_names.h - the names a Python program gives its threads
 * (threading.Thread(name=...), `t.name = ...` later, the main thread's),
 * read on the sampler's side and sent as REC_THREAD_PY_NAME when first
 * read or changed.
 *
 * A read walks the thread's frames to its outermost one and reads the
 * Thread object's attributes (cpython/py_thread_names.h): tens of reads,
 * so the sampler asks only when it first sees a thread and at the rate it
 * re-reads OS names (about once a second), never every tick.  Sampler
 * thread only. */
#ifndef PYTOP_THREAD_PY_NAMES_H
#define PYTOP_THREAD_PY_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/py_objects.h"
#include "cpython/py_repr.h"
#include "cpython/py_runtime.h"

/* A thread's stack is walked frame by frame to its outermost frame, one
 * read each: a thread deeper than this is not named (until it is not). */
#define THREAD_PY_NAMES_MAX_WALK 1024

struct thread_py_names {
	pid_t pid;                      /* mem's context: keep in place */
	struct py_mem mem;
	struct py_object_layout layout;
	bool have_layout;               /* false: no name is ever read */
	uintptr_t threading_globals;    /* found on a Thread._bootstrap frame:
	                                   names the main thread */
};

/* For process pid running rt's interpreter (3.13+: reads its offsets). */
void thread_py_names_init(struct thread_py_names *n, pid_t pid, const struct py_runtime *rt);

/* Read thread tid's (thread state tstate) name and, when it is readable
 * and its hash differs from *hash, build its REC_THREAD_PY_NAME in buf
 * (cap bytes) and set *hash: the record's size, 0 when there is nothing
 * to send.  The caller keeps *hash only once the record is pushed. */
size_t thread_py_names_record(struct thread_py_names *n, pid_t tid, uintptr_t tstate,
                              uint64_t *hash, void *buf, size_t cap);

#endif
