/* frame_walk_chunks.c - the frame walker of CPython 3.11 and later:
 * _PyInterpreterFrame records live in per-thread data-stack chunks
 * (_PyStackChunk, linked to older ones), the thread state points at the
 * newest frame (through _PyCFrame on 3.11/3.12), each frame at its
 * caller.  Frames outside the chunks (generators, 3.12+ shim frames on the
 * C stack) are read one by one.
 *
 * A tick reads every sampled thread's live chunk in one scatter read; what
 * last tick's walk needed (the chunk up to a little past its top, the
 * cframe word, older chunks, frames outside) is guessed into the tick's
 * first scatter read, with the thread states, and used when the fresh
 * thread state shows the guess holds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walker.h"

#include <stdlib.h>
#include <sys/uio.h>

#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

#define CHUNK_GUESS (16u << 10)    /* CPython's data-stack chunk size */
#define MAX_CHUNK (1u << 20)
#define MAX_COPIES 16              /* data-stack chunks copied per thread */
#define MAX_EXTRA 8
#define SPECULATION_SLACK 512u     /* bytes read past last tick's top */

/* A region of target memory copied into pytop for this thread's walk. */
struct copy {
	uintptr_t start, end; /* target addresses [start, end) */
	uintptr_t chunk;      /* the data-stack chunk it belongs to, or 0 */
	uint8_t *buf;         /* in the tick arena */
};

/* What a thread's stack looked like last tick.  The next tick reads the
 * same cframe word and chunk range in the same system call as the thread
 * state; if the fresh thread state shows they are still the right ones,
 * the separate stack read is saved. */
struct speculation {
	uintptr_t tstate;         /* the thread the guess is for */
	uint64_t cframe, chunk;   /* as of last tick; 0 = no guess */
	uint64_t len;             /* bytes of the chunk to read */
	uint64_t frame_ptr;       /* read this tick through the old cframe */
	uint8_t *buf;             /* this tick's copy, in the arena */
	bool read;                /* both ranges arrived this tick */
};

/* A range outside the current chunk that the last walk needed (an older
 * chunk, a generator frame, a 3.12+ shim frame on the C stack): read again
 * speculatively with the thread state, since the next walk will likely need
 * it too. */
struct extra_range {
	uintptr_t addr;
	size_t len;
	uint8_t *buf;  /* this tick's copy, in the arena */
	bool ok;       /* arrived this tick */
};

/* The walker's state for one thread slot. */
struct chunk_thread {
	struct extra_range extra[MAX_EXTRA]; /* read this tick */
	size_t nextra;
	struct extra_range next[MAX_EXTRA];  /* needed by this tick's walk */
	size_t nnext;
	uint64_t frame_ptr;       /* the newest frame (3.11/3.12: through the cframe) */
	struct speculation spec;
	struct copy copies[MAX_COPIES];
	size_t ncopies;
	uint64_t guessed_tick;    /* the tick queue_guess last ran for this slot */
};

static void *chunk_new_state(const struct py_offsets *o, struct mem_region *mem)
{
	(void)o;
	return mem_region_alloc(mem, MAX_THREADS * sizeof(struct chunk_thread));
}

/* ---- guesses ------------------------------------------------------------ */

static void chunk_queue_guess(const struct walk_ctx *cx, void *state, size_t slot,
                              const struct thread_slot *t, struct scatter *s)
{
	struct chunk_thread *ct = (struct chunk_thread *)state + slot;
	struct speculation *sp = &ct->spec;

	ct->guessed_tick = cx->tick;
	sp->read = false;
	ct->nextra = 0;
	if (sp->chunk == 0 || sp->tstate != t->tstate ||
	    (sp->buf = tick_arena_alloc(cx->arena, (size_t)sp->len)) == NULL) {
		ct->nnext = 0;
		return;
	}
	if (cx->o->ts_cframe)
		scatter_add(s, &sp->frame_ptr, sp->cframe + cx->o->cf_current_frame, 8, &sp->read);
	scatter_add(s, sp->buf, sp->chunk, (size_t)sp->len, &sp->read);
	for (size_t i = 0; i < ct->nnext; i++) {
		struct extra_range *e = &ct->extra[ct->nextra];

		*e = ct->next[i];
		e->buf = tick_arena_alloc(cx->arena, e->len);
		if (e->buf == NULL)
			break;
		scatter_add(s, e->buf, e->addr, e->len, &e->ok);
		ct->nextra++;
	}
	ct->nnext = 0;
}

/* This tick's speculative copy of [addr, addr + len), or NULL. */
static const uint8_t *extra_lookup(const struct chunk_thread *ct, uintptr_t addr, size_t len)
{
	for (size_t i = 0; i < ct->nextra; i++) {
		const struct extra_range *e = &ct->extra[i];

		if (e->ok && addr >= e->addr && addr + len <= e->addr + e->len)
			return e->buf + (addr - e->addr);
	}
	return NULL;
}

static void extra_remember(struct chunk_thread *ct, uintptr_t addr, size_t len)
{
	if (ct->nnext < MAX_EXTRA)
		ct->next[ct->nnext++] = (struct extra_range){ .addr = addr, .len = len };
}

/* Guess for next tick: the same cframe and chunk, read a little past the
 * current top so that a slightly deeper stack still fits. */
static void remember(const struct py_offsets *o, struct chunk_thread *ct,
                     const struct thread_slot *t, uint64_t chunk, uint64_t top)
{
	uint64_t size = rd64(ct->copies[0].buf, o->chunk_size);
	uint64_t len = top - chunk + SPECULATION_SLACK;

	if (size >= o->chunk_data && size <= MAX_CHUNK && len > size)
		len = size;
	ct->spec.cframe = o->ts_cframe ? rd64(t->buf, o->ts_cframe) : 0;
	ct->spec.tstate = t->tstate;
	ct->spec.chunk = chunk;
	ct->spec.len = len;
}

/* If last tick's guess holds (same cframe and chunk, the live top within
 * what was read), use the speculative copy. */
static bool use_speculation(const struct py_offsets *o, struct chunk_thread *ct,
                            const struct thread_slot *t, uint64_t chunk, uint64_t top)
{
	struct speculation *sp = &ct->spec;

	if (!sp->read || sp->tstate != t->tstate || sp->chunk != chunk ||
	    top > chunk + sp->len ||
	    (o->ts_cframe && rd64(t->buf, o->ts_cframe) != sp->cframe))
		return false;
	if (o->ts_cframe)
		ct->frame_ptr = sp->frame_ptr;
	ct->copies[0] = (struct copy){ chunk, top, chunk, sp->buf };
	ct->ncopies = 1;
	return true;
}

/* ---- the live chunks ------------------------------------------------- */

/* Queue the reads of one sampled thread's current frame pointer (through
 * the cframe on 3.11/3.12) and the live part of its current chunk, unless
 * the guess holds.  Returns how many ranges it queued. */
static int queue_stack(const struct walk_ctx *cx, struct chunk_thread *ct,
                       struct thread_slot *t, struct iovec *local,
                       struct iovec *remote)
{
	const struct py_offsets *o = cx->o;
	uint64_t chunk = rd64(t->buf, o->ts_datastack_chunk);
	uint64_t top = rd64(t->buf, o->ts_datastack_top);
	uint8_t *buf;
	int n = 0;

	if (o->ts_cframe) {
		uint64_t cframe = rd64(t->buf, o->ts_cframe);

		if (!plausible_ptr(cframe)) {
			t->out.status = PY_THREAD_ERROR;
			return 0;
		}
		if (use_speculation(o, ct, t, chunk, top))
			return 0;
		local[n] = (struct iovec){ &ct->frame_ptr, 8 };
		remote[n++] = (struct iovec){ (void *)(cframe + o->cf_current_frame), 8 };
	}
	if (!plausible_ptr(chunk) || top <= chunk || top - chunk > MAX_CHUNK) {
		ct->spec.chunk = 0;
		return n; /* no usable chunk: frames are read one by one */
	}
	if (use_speculation(o, ct, t, chunk, top))
		return n;
	if ((buf = tick_arena_alloc(cx->arena, (size_t)(top - chunk))) == NULL)
		return n;
	ct->copies[0] = (struct copy){ chunk, top, chunk, buf };
	local[n] = (struct iovec){ buf, top - chunk };
	remote[n++] = (struct iovec){ (void *)chunk, top - chunk };
	ct->ncopies = 1;
	return n;
}

static void chunk_read_stacks(const struct walk_ctx *cx, void *state,
                              struct thread_slot *slots, size_t nslots)
{
	const struct py_offsets *o = cx->o;
	struct chunk_thread *cts = state;
	struct iovec local[2 * MAX_THREADS], remote[2 * MAX_THREADS];
	struct thread_slot *owner[2 * MAX_THREADS];
	int n = 0, done = 0;

	for (size_t i = 0; i < nslots; i++) {
		struct thread_slot *t = &slots[i];
		struct chunk_thread *ct = &cts[i];
		int k;

		if (ct->guessed_tick != cx->tick) {
			/* A slot the list gained when it was walked again: what
			 * its guess read lies in memory later ticks reused,
			 * and may describe a thread that has exited since. */
			ct->spec.read = false;
			ct->nextra = 0;
			ct->nnext = 0;
		}
		ct->ncopies = 0;
		ct->frame_ptr = o->ts_current_frame ? rd64(t->buf, o->ts_current_frame) : 0;
		if (t->out.status != PY_THREAD_OK) {
			ct->spec.chunk = 0; /* guess only for threads being sampled */
			continue;
		}
		k = queue_stack(cx, ct, t, local + n, remote + n);
		while (k-- > 0)
			owner[n++] = t;
	}
	/* The kernel stops at the first unreadable range: mark it and go on
	 * with the rest. */
	while (done < n) {
		int got = remote_readv(cx->pid, local + done, remote + done, n - done);

		if (got < 0)
			got = 0;
		done += got;
		if (done < n) {
			struct thread_slot *bad = owner[done];

			bad->out.status = PY_THREAD_ERROR;
			done++;
		}
	}
	for (size_t i = 0; i < nslots; i++) {
		struct chunk_thread *ct = &cts[i];

		if (slots[i].out.status == PY_THREAD_OK && ct->ncopies == 1)
			remember(o, ct, &slots[i], ct->copies[0].chunk, ct->copies[0].end);
	}
}

/* ---- the walk ----------------------------------------------------------- */

/* Copy an older (non-current) data-stack chunk whole. */
static struct copy *copy_chunk(const struct walk_ctx *cx, struct chunk_thread *ct,
                               uintptr_t chunk)
{
	const struct py_offsets *o = cx->o;
	struct copy *c;
	uint64_t size;
	const uint8_t *head;
	uint8_t *buf;

	if (ct->ncopies == MAX_COPIES || !plausible_ptr(chunk))
		return NULL;
	/* Its size is in its header: from the speculative copy, or from a
	 * first read of the usual chunk size. */
	head = extra_lookup(ct, chunk, o->chunk_data);
	buf = NULL;
	if (head == NULL) {
		buf = tick_arena_alloc(cx->arena, CHUNK_GUESS);
		if (buf == NULL || remote_read(cx->pid, chunk, buf, CHUNK_GUESS) != 0)
			return NULL;
		head = buf;
	}
	size = rd64(head, o->chunk_size);
	if (size < o->chunk_data || size > MAX_CHUNK)
		return NULL;
	extra_remember(ct, chunk, (size_t)size);
	if ((head = extra_lookup(ct, chunk, (size_t)size)) != NULL) {
		buf = (uint8_t *)head;
	} else if (buf == NULL || size > CHUNK_GUESS) {
		buf = tick_arena_alloc(cx->arena, (size_t)size);
		if (buf == NULL || remote_read(cx->pid, chunk, buf, (size_t)size) != 0)
			return NULL;
	}
	c = &ct->copies[ct->ncopies++];
	*c = (struct copy){ chunk, chunk + (uintptr_t)size, chunk, buf };
	return c;
}

/* Find frame bytes for address f: from a copied chunk, by copying the next
 * older chunk, or (generator frames, C-stack shims) by a direct read into
 * `tmp`. */
static const uint8_t *frame_bytes(const struct walk_ctx *cx, struct chunk_thread *ct,
                                  uintptr_t f, uint8_t *tmp)
{
	size_t size = cx->o->if_size;
	const uint8_t *fb;

	for (;;) {
		for (size_t i = 0; i < ct->ncopies; i++) {
			const struct copy *c = &ct->copies[i];

			if (f >= c->start && f + size <= c->end)
				return c->buf + (f - c->start);
		}
		/* Is it in the chunk before the oldest one copied so far? */
		if (ct->ncopies == 0 || ct->copies[ct->ncopies - 1].chunk == 0)
			break;
		{
			const struct copy *last = &ct->copies[ct->ncopies - 1];
			uint64_t prev;

			if (last->start != last->chunk)
				break;
			prev = rd64(last->buf, 0);
			if (prev == 0 || copy_chunk(cx, ct, (uintptr_t)prev) == NULL)
				break;
		}
	}
	extra_remember(ct, f, size);
	if ((fb = extra_lookup(ct, f, size)) != NULL)
		return fb;
	return remote_read(cx->pid, f, tmp, size) == 0 ? tmp : NULL;
}

static bool frame_to_record(const struct walk_ctx *cx, struct thread_slot *t,
                            const uint8_t *fb, struct rec_frame *out)
{
	const struct py_offsets *o = cx->o;
	uint64_t code_addr = rd64(fb, o->if_code);
	uint64_t instr = rd64(fb, o->if_instr);

	if (o->code_tagged)
		code_addr &= ~(uint64_t)7;
	if (!plausible_ptr(code_addr) || !plausible_ptr(instr & ~(uint64_t)7))
		return false;
	/* Both are below 2^47 here, so the difference cannot overflow. */
	return walk_frame_record(cx, t, (uintptr_t)code_addr,
	                         (int64_t)instr - (int64_t)(code_addr + o->co_code_adaptive),
	                         out);
}

static void chunk_walk(const struct walk_ctx *cx, void *state, size_t slot,
                       struct thread_slot *t)
{
	const struct py_offsets *o = cx->o;
	struct chunk_thread *ct = (struct chunk_thread *)state + slot;
	uint64_t f = ct->frame_ptr;
	uint8_t tmp[PY_FRAME_READ_MAX];
	uint32_t n = 0, depth = 0, power = 1;
	uint64_t mark = 0;

	t->ncheck = 0;
	while (f != 0) {
		const uint8_t *fb;
		uint8_t owner;

		if (!plausible_ptr(f) || ++depth > 4 * PY_READER_MAX_FRAMES || f == mark)
			goto torn;
		if (depth == power) { /* Brent: a cycle meets its mark */
			mark = f;
			power *= 2;
		}
		fb = frame_bytes(cx, ct, (uintptr_t)f, tmp);
		if (fb == NULL)
			goto torn;
		owner = fb[o->if_owner];
		if (owner < o->owner_not_python) {
			if (owner > 3)
				goto torn;
			if (n == PY_READER_MAX_FRAMES) {
				t->out.flags |= SAMPLE_TRUNCATED;
				break;
			}
			if (!frame_to_record(cx, t, fb, &t->frames[n]))
				goto torn;
			t->entry[n] = o->if_is_entry && fb[o->if_is_entry] != 0;
			if (n == 0 && py_code_in_call(code_cache_get(cx->codes, t->frames[0].code_id),
			                              t->frames[0].instr_offset))
				t->out.flags |= SAMPLE_IN_CALL;
			n++;
		} else if (n > 0) {
			t->entry[n - 1] = 1; /* the shim before an invocation's frames */
		}
		if (rd64(fb, o->if_previous) == f)
			goto torn;
		f = rd64(fb, o->if_previous);
	}
	t->out.nframes = n;
	return;
torn:
	t->out.status = PY_THREAD_ERROR;
	t->out.nframes = 0;
}

const struct py_frame_walker chunk_frame_walker = {
	.family = "3.11+ data-stack chunks",
	.first_minor = 11,
	.last_minor = 0,
	.guess_reads = 2 + MAX_EXTRA,
	.new_state = chunk_new_state,
	.queue_guess = chunk_queue_guess,
	.read_stacks = chunk_read_stacks,
	.walk = chunk_walk,
};
