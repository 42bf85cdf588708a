/* thread_list.h - the target's interpreters and their thread states,
 * cached between ticks.  Each tick queues, into the tick's one scatter
 * read, the list's links, every thread state and the GIL's holder word;
 * the links as read say whether the cached list still holds.  When it
 * does not, it is walked again pointer by pointer.
 *
 * Each thread is a slot: its thread state as read this tick, what it
 * sampled (py_thread_sample), and the codes on its stack to re-check next
 * tick.  Slots are indexed 0..n-1 in list order, per-slot state kept by
 * others (the frame walker's) is indexed the same way. */
#ifndef PYTOP_THREAD_LIST_H
#define PYTOP_THREAD_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/mem_region.h"
#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "cpython/scatter.h"

#define MAX_INTERPS 16
#define MAX_THREADS 1024
#define MAX_CHECK 32   /* codes re-checked per thread per tick */

struct thread_slot {
	uintptr_t tstate;
	uint8_t buf[PY_TSTATE_READ_MAX];  /* the thread state as read this tick */
	uint32_t check_ids[MAX_CHECK];    /* codes on this tick's stack */
	size_t ncheck;
	struct py_thread_sample out;
	struct rec_frame *frames; /* in the reader's mem_region, made on first use */
	uint8_t *entry;           /* likewise, just before frames: per frame, see
	                             py_thread_sample */
};

struct thread_list {
	pid_t pid;
	const struct py_offsets *o; /* borrowed from the reader */
	uintptr_t runtime;          /* _PyRuntime in the target */
	uintptr_t interps[MAX_INTERPS];
	size_t ninterps;
	struct thread_slot *slots;  /* MAX_THREADS, in the reader's mem_region */
	size_t n;
	uint64_t gil[2];            /* last_holder, locked (low 32 bits) */
	/* the links as this tick's scatter read found them */
	uint64_t head, links[MAX_INTERPS][2];
};

/* The slots come from mem and go with it. */
int thread_list_init(struct thread_list *tl, pid_t pid, const struct py_offsets *o,
                     uintptr_t runtime, struct mem_region *mem);

/* Walk interpreters and their thread lists one pointer at a time: the
 * first tick, and whenever the cached list no longer holds.  -1 when the
 * target is gone (errno ESRCH/EPERM), else 0 (a list cut short by an
 * unreadable link ends there). */
int thread_list_walk(struct thread_list *tl);

/* Ranges the cached list adds to a scatter read (0 = nothing cached). */
size_t thread_list_reads(const struct thread_list *tl);
/* Queue them (the caller checked the scatter has room): the head of the
 * interpreter list, the GIL word, each interpreter's links and each
 * thread state. */
void thread_list_queue(struct thread_list *tl, struct scatter *s);
/* After the read: whether every link still points where it did. */
bool thread_list_holds(const struct thread_list *tl);

/* The GIL's last_holder word, 0 while no interpreter is known. */
uintptr_t thread_list_gil_address(const struct thread_list *tl);
/* Whether slot t's thread held the GIL at this tick's read. */
bool thread_list_has_gil(const struct thread_list *tl, const struct thread_slot *t);

#endif
