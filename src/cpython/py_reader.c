/* py_reader.c - one tick of the stack reader: the order of the reads and
 * who fills which (py_reader.h lists the files doing each job). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/code_cache.h"
#include "cpython/code_check.h"
#include "cpython/frame_walker.h"
#include "cpython/mem_region.h"
#include "cpython/raw_fields.h"
#include "cpython/scatter.h"
#include "cpython/thread_list.h"
#include "cpython/tick_arena.h"

#define ARENA_BYTES (8u << 20)
#define SLOT_TOUCH_BYTES 4096u /* a shallow stack's frames and flags */

struct py_reader {
	pid_t pid;
	struct py_runtime rt;        /* own copy: the caller's may be a temporary */
	const struct py_offsets *o;  /* == rt.off */
	const struct py_frame_walker *walker;
	struct mem_region mem;       /* owns every table below that lives as
	                                long as the reader (mem_region.h) */
	void *walker_state;          /* in mem */
	struct thread_list threads;
	struct code_cache codes;
	struct code_checks checks;   /* this tick's first-read code checks */
	struct scatter first_read;   /* the tick's first scatter read */
	struct tick_arena arena;     /* in mem, reset every tick */
	uint64_t tick;               /* ticks sampled so far */
};

struct py_reader *py_reader_new(pid_t pid, const struct py_runtime *rt)
{
	const struct py_frame_walker *w = py_frame_walker_for(rt->off);
	struct py_reader *r;

	if (w == NULL) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->pid = pid;
	r->rt = *rt;
	r->rt.offsets = *rt->off;
	r->rt.off = &r->rt.offsets;
	r->o = r->rt.off;
	r->walker = w;
	mem_region_init(&r->mem);
	r->walker_state = w->new_state(r->o, &r->mem);
	r->arena.cap = ARENA_BYTES;
	r->arena.base = mem_region_alloc(&r->mem, r->arena.cap);
	if (r->walker_state == NULL || r->arena.base == NULL ||
	    thread_list_init(&r->threads, pid, r->o, r->rt.runtime, &r->mem) != 0 ||
	    code_cache_init(&r->codes, pid, r->o, r->rt.pycode_type) != 0 ||
	    code_checks_init(&r->checks, &r->mem) != 0 ||
	    scatter_init(&r->first_read, &r->mem, 2 + 2 * MAX_INTERPS +
	                 (1 + w->guess_reads) * MAX_THREADS + MAX_CHECKS) != 0) {
		py_reader_free(r);
		return NULL;
	}
	return r;
}

void py_reader_want_calls(struct py_reader *r, bool on)
{
	r->codes.no_calls = !on;
}

void py_reader_free(struct py_reader *r)
{
	if (r == NULL)
		return;
	code_cache_destroy(&r->codes);
	mem_region_release(&r->mem);
	free(r);
}

/* A slot's entry flags and frames in one block, the flags first, so that
 * a shallow stack touches one page of it rather than two.  That page is
 * touched here, when the slot is first seen, rather than when one of its
 * threads is first sampled running: the pages stay with the reader, and
 * pytop's RSS then reaches its level with the most threads seen, instead
 * of creeping up as later bursts happen to catch other slots running. */
_Static_assert(PY_READER_MAX_FRAMES % _Alignof(struct rec_frame) == 0,
               "the frames follow the entry flags");
_Static_assert(SLOT_TOUCH_BYTES <= PY_READER_MAX_FRAMES * (1 + sizeof(struct rec_frame)),
               "the touched part lies inside the block");

static void slot_buffers(struct py_reader *r, struct thread_slot *t)
{
	uint8_t *b = mem_region_alloc(&r->mem, PY_READER_MAX_FRAMES * (1 + sizeof(*t->frames)));

	if (b == NULL)
		return;
	t->entry = b;
	t->frames = (struct rec_frame *)(b + PY_READER_MAX_FRAMES);
	memset(b, 0, SLOT_TOUCH_BYTES);
}

static struct walk_ctx walk_ctx(struct py_reader *r)
{
	return (struct walk_ctx){ .pid = r->pid, .o = r->o, .arena = &r->arena,
	                          .codes = &r->codes, .tick = r->tick };
}

static int gone(void)
{
	return errno == ESRCH || errno == EPERM ? -1 : 0;
}

/* The tick's first scatter read: the cached thread list with, per thread,
 * the walker's guesses and the fingerprints of the codes it ran last tick.
 * Returns 1 if the cached list still holds, 0 if it changed, -1 if the
 * target is gone. */
static int refresh_threads(struct py_reader *r)
{
	const struct walk_ctx cx = walk_ctx(r);
	struct scatter *s = &r->first_read;
	size_t nlinks = thread_list_reads(&r->threads), got;

	if (nlinks == 0)
		return 0;
	scatter_reset(s);
	thread_list_queue(&r->threads, s);
	/* Guesses go last, so that one that faults (its chunk was freed)
	 * cannot hide the links before it. */
	for (size_t i = 0; i < r->threads.n; i++) {
		struct thread_slot *t = &r->threads.slots[i];

		r->walker->queue_guess(&cx, r->walker_state, i, t, s);
		/* A code's fingerprint is read after the stack naming it: a
		 * code swapped after the copy is then caught (code_check.h). */
		scatter_barrier(s);
		code_checks_queue(&r->checks, &r->codes, t, r->tick, &r->arena, s);
	}
	got = scatter_read(s, r->pid);
	code_checks_apply(&r->checks, &r->codes);
	if (got < nlinks)
		return gone();
	return thread_list_holds(&r->threads) ? 1 : 0;
}

/* Decide per thread whether to sample it; fill the per-thread header. */
static void classify(struct py_reader *r, struct proc_threads *pt, bool idle)
{
	const struct py_offsets *o = r->o;
	bool gil_known = thread_list_gil_address(&r->threads) != 0;
	struct proc_thread_stat st;

	for (size_t i = 0; i < r->threads.n; i++) {
		struct thread_slot *t = &r->threads.slots[i];
		/* In a container the thread state holds the TID inside its
		 * PID namespace: everything downstream uses the host's. */
		pid_t tid = proc_threads_host_tid(pt, (int32_t)rd64(t->buf, o->ts_native_tid));

		t->out = (struct py_thread_sample){ .tid = tid, .tstate = t->tstate,
		                                    .frames = t->frames };
		if (tid <= 0) /* never bound to an OS thread */
			continue;
		proc_threads_read(pt, tid, &st);
		t->out.state = st.state;
		t->out.utime_ns = st.utime_ns;
		t->out.stime_ns = st.stime_ns;
		t->out.minflt = st.minflt;
		t->out.majflt = st.majflt;
		t->out.faults_known = st.faults_known;
		t->out.rss_bytes = st.rss_bytes;
		t->out.run_ns = st.run_ns;
		t->out.delay_ns = st.delay_ns;
		if (st.state == 'R')
			t->out.flags |= SAMPLE_RUNNING;
		if (gil_known)
			t->out.flags |= SAMPLE_GIL_KNOWN;
		if (thread_list_has_gil(&r->threads, t))
			t->out.flags |= SAMPLE_HAS_GIL;
		if (o->ts_gil_requested && rd32(t->buf, o->ts_gil_requested) != 0)
			t->out.flags |= SAMPLE_GIL_WAIT;
		if (t->frames == NULL)
			slot_buffers(r, t);
		t->out.frames = t->frames;
		t->out.entry = t->entry;
		if (t->frames != NULL && t->entry != NULL && t->out.state != 0 && (idle || t->out.state == 'R'))
			t->out.status = PY_THREAD_OK;
	}
	proc_threads_sweep(pt);
}

int py_reader_sample(struct py_reader *r, struct proc_threads *pt, bool idle)
{
	struct walk_ctx cx;
	int rc;

	tick_arena_reset(&r->arena);
	r->tick++;
	code_cache_forget_idle(&r->codes, r->tick);
	rc = refresh_threads(r);
	if (rc < 0)
		return -1;
	if (rc == 0 && thread_list_walk(&r->threads) < 0)
		return -1;
	classify(r, pt, idle);
	cx = walk_ctx(r);
	r->walker->read_stacks(&cx, r->walker_state, r->threads.slots, r->threads.n);
	for (size_t i = 0; i < r->threads.n; i++)
		if (r->threads.slots[i].out.status == PY_THREAD_OK)
			r->walker->walk(&cx, r->walker_state, i, &r->threads.slots[i]);
	code_checks_verify(&r->codes, r->threads.slots, r->threads.n, r->tick, &r->arena);
	return (int)r->threads.n;
}

bool py_reader_gil_span(const struct py_reader *r, uint64_t *lo, uint64_t *hi)
{
	uintptr_t holder = thread_list_gil_address(&r->threads);

	if (holder < PY_GIL_HOLDER_AT)
		return false;
	*lo = holder - PY_GIL_HOLDER_AT;
	*hi = *lo + PY_GIL_SIZE;
	return true;
}

const struct py_thread_sample *py_reader_thread(const struct py_reader *r, size_t i)
{
	return i < r->threads.n ? &r->threads.slots[i].out : NULL;
}

struct py_code *py_reader_code(struct py_reader *r, uint32_t id)
{
	return code_cache_get(&r->codes, id);
}
