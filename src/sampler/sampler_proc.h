/* sampler_proc.h - what the sampler keeps for each process it samples (the
 * target, and with -s its Python descendants): the stack reader, the
 * kept /proc descriptors, the thread names already sent, and the mapping
 * of the reader's code ids to the session's.
 *
 * Every reader numbers its code objects from 0, so two processes' ids
 * would collide in the aggregator's code table: the sampler hands out
 * session-wide ids and maps each reader's to them.  Sampler thread only.
 */
#ifndef PYTOP_SAMPLER_PROC_H
#define PYTOP_SAMPLER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/native_threads.h"
#include "sampler/thread_py_names.h"
#include "target/proc_threads.h"
#include "cpython/mem_region.h"
#include "cpython/py_reader.h"
#include "cpython/py_runtime.h"

#define SAMPLER_PROC_NO_ID UINT32_MAX

struct known_thread {
	pid_t tid;
	bool named;
	char name[16];
	uint64_t py_name_hash;     /* of the Python name last sent, 0 = none */
	bool sched_seen;
	uint64_t run_ns, delay_ns; /* schedstat at its previous R sample */
	/* Its last sample that reached the ring, outermost frame first (so
	 * that a stack changing near its leaf rewrites only the end): what
	 * a REC_SAMPLE_DELTA may keep.  Owned; NULL = send whole. */
	struct rec_frame *sent;
	uint32_t nsent, sent_cap;
	uint64_t sent_ns;          /* that sample's time_ns */
};

struct sampler_proc {
	pid_t pid;
	struct py_runtime rt;         /* own copy: rt.off points into it */
	struct py_reader *reader;     /* owned; NULL for a process without
	                                 Python (--native on a C program) */
	struct native_threads *tasks; /* owned: its threads when reader is NULL */
	struct proc_threads *threads; /* owned */
	struct mem_region mem;        /* owns known (mem_region.h: a process's
	                                 tables leave with it, not on the heap) */
	struct known_thread *known;   /* in mem: names already sent */
	struct thread_py_names py_names; /* reads the program's thread names */
	size_t nknown;
	uint64_t threads_due;         /* when its next REC_THREADS is due */
	unsigned reports;             /* its REC_THREADS sent so far */
	uint64_t rss_prev;            /* its RSS at the previous tick, 0 = none */
	uint64_t start_stack;         /* its main thread's, when first read: a
	                                 change means it ran exec */
	uint64_t exec_due;            /* when to look for an exec next */
	uint32_t *ids;                /* owned: reader id -> session id + 1 */
	size_t ids_cap;
};

/* rt NULL: a process without Python, whose threads are listed from /proc
 * and have no Python frames.  want_calls: its reader tells whether each
 * leaf is in a call (py_reader_want_calls; false with --no-split).  NULL
 * on out of memory. */
struct sampler_proc *sampler_proc_new(pid_t pid, const struct py_runtime *rt, bool want_calls);
void sampler_proc_free(struct sampler_proc *p);

/* Read every thread once (py_reader_sample or native_threads_sample):
 * the number of threads, -1 when the process is gone. */
int sampler_proc_sample(struct sampler_proc *p, bool idle);
const struct py_thread_sample *sampler_proc_thread_at(const struct sampler_proc *p, size_t i);

/* The session-wide id of the reader's code `local`, handed out from
 * *next_id the first time, and afresh each time while the code's
 * definition is not sent (its slot may have held a forgotten code);
 * SAMPLER_PROC_NO_ID on out of memory. */
uint32_t sampler_proc_code_id(struct sampler_proc *p, uint32_t local, uint32_t *next_id);

/* The entry for tid, created (unnamed) when new.  The table is bounded:
 * when full it is emptied, and names are merely sent again. */
struct known_thread *sampler_proc_thread(struct sampler_proc *p, pid_t tid);

/* Free the last stacks no REC_SAMPLE_DELTA can refer to any more (sent
 * REC_DELTA_MAX_AGE_NS or longer before now): threads that ended or went
 * idle, which under thread churn would otherwise keep one each. */
void sampler_proc_forget_stacks(struct sampler_proc *p, uint64_t now);

/* Whether thread tid, off CPU, sleeps on the GIL: blocked on a futex
 * inside the interpreter's GIL struct (asking for it, or handing it
 * over).  Works on every version, where only 3.15 flags it itself. */
bool sampler_proc_gil_wait(struct sampler_proc *p, pid_t tid);

#endif
