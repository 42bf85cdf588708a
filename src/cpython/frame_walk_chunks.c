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
 * thread state shows the guess holds.
 *
 * A stack deeper than the record's limit (PY_READER_MAX_FRAMES) is walked
 * whole, up to WALK_MAX_FRAMES: its innermost KEEP_INNER frames, a marker
 * frame (REC_MORE_FRAMES) counting the frames left out, and its outermost
 * KEEP_OUTER frames, so that a deep recursion still shows <module> and
 * main under it.  The chunks such a walk needs beyond the guessed ones are
 * read next tick in one system call (prefetch), not one by one.
 *
 * A stack that spans chunks is mostly the same from tick to tick below its
 * newest chunk: the frames below that chunk's first frame can only change
 * once that frame returns, and then CPython frees the chunk (3.11-3.13:
 * munmap) and maps a new one for the next call, whose first write is a
 * page fault of the thread.  So when the thread took no page fault since
 * they were read (its /proc stat, read every tick anyway) and the newest
 * chunk's first frame still calls the same frame, those frames are taken
 * from the last walk (frame_walk_kept.h) and only the newest chunk is
 * read.  Otherwise the older chunks the last walk copied are read in one
 * more system call.  3.14 and later keep a popped chunk cached in the
 * thread state and take it back without a fault: there every tick reads
 * the whole stack. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walker.h"

#include <stdlib.h>
#include <sys/uio.h>

#include "cpython/frame_walk_kept.h"
#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

#define CHUNK_GUESS (16u << 10)    /* CPython's data-stack chunk size */
#define MAX_CHUNK (1u << 20)
#define MAX_COPIES 1024            /* data-stack chunks copied per walk */
#define MAX_EXTRA 8
#define SPECULATION_SLACK 512u     /* bytes read past last tick's top */
/* A deep stack: its innermost and outermost frames around one marker. */
#define KEEP_OUTER 512u
#define KEEP_INNER (PY_READER_MAX_FRAMES - KEEP_OUTER - 1u)
#define RING_FRAMES (PY_READER_MAX_FRAMES - KEEP_INNER) /* outer candidates */
#define WALK_MAX_FRAMES 65536u     /* Python frames walked at most */
#define MAX_SINGLE_READS PY_READER_MAX_FRAMES /* frames read one by one per walk */
#define PREFETCH_BATCH 64          /* chunks per prefetch system call */
#define KEPT_THREADS 64            /* threads whose last walk is kept */
#define LAST_UNCACHED_MINOR 13     /* newer versions cache a popped chunk */

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

/* A data-stack chunk a deep walk copied: read again, all at once, at the
 * next tick's walk of the same thread. */
struct chain_link {
	uint64_t addr, size;
};

/* The walker's state for one thread slot. */
struct chunk_thread {
	struct extra_range extra[MAX_EXTRA]; /* read this tick */
	size_t nextra;
	struct extra_range next[MAX_EXTRA];  /* needed by this tick's walk */
	size_t nnext;
	uint64_t frame_ptr;       /* the newest frame (3.11/3.12: through the cframe) */
	struct speculation spec;
	struct copy live;         /* the current chunk's live part, this tick */
	bool has_live;
	struct chain_link *chain; /* in the reader's region (NULL until a walk
	                             needs more older chunks than MAX_EXTRA):
	                             last walk's */
	size_t nchain;
	uint64_t guessed_tick;    /* the tick queue_guess last ran for this slot */
	struct kept_walk *kept;   /* in the reader's region; NULL until the
	                             thread's stack spans chunks */
	bool spans;               /* the last walk left a chunk by its first frame */
	bool live_early;          /* live came from the tick's first read */
	uint64_t clean_from;      /* the thread took no page fault at the
	                             ticks from this one to gate_tick */
	uint64_t gate_tick;
};

/* A frame of a deep stack that may be among its outermost: kept raw,
 * resolved only if it is. */
struct raw_frame {
	uint64_t code, instr;
	uint8_t entry;
};

/* The walk in progress (one thread at a time): the chunks it copied,
 * newest first, and those prefetched for it. */
struct chunk_walk_state {
	struct mem_region *mem;       /* the reader's: holds all of this */
	struct chunk_thread *threads; /* MAX_THREADS slots */
	struct copy copies[MAX_COPIES];
	size_t ncopies;
	struct copy pre[MAX_COPIES];  /* prefetched from the thread's chain */
	size_t npre;
	bool prefetched;
	size_t single_reads;
	int hit;                      /* the copy in_copies found last, or -1 */
	bool early;                   /* bytes from the tick's first read used */
	size_t nkept;                 /* threads given a kept walk */
	/* The last frame made a record (a recursion's frames are alike). */
	bool memo;
	uint64_t memo_code, memo_instr;
	struct rec_frame memo_rec;
	struct raw_frame ring[RING_FRAMES];
	struct kept_fresh fresh;      /* this walk, for the thread's kept walk */
};

static void *chunk_new_state(const struct py_offsets *o, struct mem_region *mem)
{
	struct chunk_walk_state *ws = mem_region_alloc(mem, sizeof(*ws));

	(void)o;
	if (ws == NULL)
		return NULL;
	ws->mem = mem;
	ws->threads = mem_region_alloc(mem, MAX_THREADS * sizeof(struct chunk_thread));
	return ws->threads != NULL ? ws : NULL;
}

/* ---- guesses ------------------------------------------------------------ */

static void chunk_queue_guess(const struct walk_ctx *cx, void *state, size_t slot,
                              const struct thread_slot *t, struct scatter *s)
{
	struct chunk_thread *ct = ((struct chunk_walk_state *)state)->threads + slot;
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
	uint64_t size = rd64(ct->live.buf, o->chunk_size);
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
	ct->live = (struct copy){ chunk, top, chunk, sp->buf };
	ct->has_live = true;
	ct->live_early = true;
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
			py_sample_fail(&t->out, SAMPLE_ERR_THREAD);
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
	ct->live = (struct copy){ chunk, top, chunk, buf };
	local[n] = (struct iovec){ buf, top - chunk };
	remote[n++] = (struct iovec){ (void *)chunk, top - chunk };
	ct->has_live = true;
	return n;
}

/* The reuse gate: a tick whose stat read showed a page fault of the
 * thread, or could not tell, starts the clean run again. */
static void gate_update(const struct walk_ctx *cx, struct chunk_thread *ct,
                        const struct py_thread_sample *s)
{
	if (!s->faults_known || s->minflt != 0 || s->majflt != 0 ||
	    ct->gate_tick + 1 != cx->tick)
		ct->clean_from = cx->tick + 1;
	ct->gate_tick = cx->tick;
}

static void chunk_read_stacks(const struct walk_ctx *cx, void *state,
                              struct thread_slot *slots, size_t nslots)
{
	const struct py_offsets *o = cx->o;
	struct chunk_thread *cts = ((struct chunk_walk_state *)state)->threads;
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
		ct->has_live = false;
		ct->live_early = false;
		gate_update(cx, ct, &t->out);
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

			py_sample_fail(&bad->out, SAMPLE_ERR_STACK);
			done++;
		}
	}
	for (size_t i = 0; i < nslots; i++) {
		struct chunk_thread *ct = &cts[i];

		if (slots[i].out.status == PY_THREAD_OK && ct->has_live)
			remember(o, ct, &slots[i], ct->live.chunk, ct->live.end);
	}
}

/* ---- the walk ----------------------------------------------------------- */

static void walk_begin(struct chunk_walk_state *ws, const struct chunk_thread *ct)
{
	ws->ncopies = 0;
	if (ct->has_live)
		ws->copies[ws->ncopies++] = ct->live;
	ws->npre = 0;
	ws->prefetched = false;
	ws->single_reads = 0;
	ws->hit = -1;
	ws->early = false;
	ws->memo = false;
}

/* Read the last n prefetch copies queued in local/remote; those past the
 * first unreadable range are no copies. */
static void prefetch_read(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                          const struct iovec *local, const struct iovec *remote, int n)
{
	int got = n > 0 ? remote_readv(cx->pid, local, remote, n) : 0;

	for (int k = got < 0 ? 0 : got; k < n; k++)
		ws->pre[ws->npre - (size_t)n + (size_t)k].chunk = 0;
}

/* Read, PREFETCH_BATCH chunks a system call, the older chunks last tick's
 * walk of this thread needed beyond those the first read guessed: a deep
 * stack's chain would otherwise cost one read per chunk.  A copy whose
 * header no longer gives the remembered size is left out. */
static void prefetch_chain(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                           const struct chunk_thread *ct)
{
	struct iovec local[PREFETCH_BATCH], remote[PREFETCH_BATCH];
	int n = 0;

	ws->prefetched = true;
	for (size_t i = 0; i < ct->nchain && ws->npre < MAX_COPIES; i++) {
		const struct chain_link *l = &ct->chain[i];
		uint8_t *buf;

		if (extra_lookup(ct, (uintptr_t)l->addr, (size_t)l->size) != NULL ||
		    (buf = tick_arena_alloc(cx->arena, (size_t)l->size)) == NULL)
			continue;
		if (n == PREFETCH_BATCH) {
			prefetch_read(cx, ws, local, remote, n);
			n = 0;
		}
		ws->pre[ws->npre++] = (struct copy){ (uintptr_t)l->addr,
		                                     (uintptr_t)(l->addr + l->size),
		                                     (uintptr_t)l->addr, buf };
		local[n] = (struct iovec){ buf, (size_t)l->size };
		remote[n++] = (struct iovec){ (void *)(uintptr_t)l->addr, (size_t)l->size };
	}
	prefetch_read(cx, ws, local, remote, n);
	for (size_t i = 0; i < ws->npre; i++) {
		struct copy *c = &ws->pre[i];

		if (c->chunk != 0 && rd64(c->buf, cx->o->chunk_size) != c->end - c->start)
			c->chunk = 0;
	}
}

static const struct copy *prefetched(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                                     const struct chunk_thread *ct, uintptr_t chunk)
{
	if (!ws->prefetched && ct->nchain > 0)
		prefetch_chain(cx, ws, ct);
	for (size_t i = 0; i < ws->npre; i++)
		if (ws->pre[i].chunk == chunk)
			return &ws->pre[i];
	return NULL;
}

/* Copy an older (non-current) data-stack chunk whole. */
static struct copy *copy_chunk(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                               struct chunk_thread *ct, uintptr_t chunk)
{
	const struct py_offsets *o = cx->o;
	const struct copy *pre;
	struct copy *c;
	uint64_t size;
	const uint8_t *head;
	uint8_t *buf;

	if (ws->ncopies == MAX_COPIES || !plausible_ptr(chunk))
		return NULL;
	if ((pre = prefetched(cx, ws, ct, chunk)) != NULL) {
		extra_remember(ct, chunk, (size_t)(pre->end - pre->start));
		c = &ws->copies[ws->ncopies++];
		*c = *pre;
		return c;
	}
	/* Its size is in its header: from the speculative copy, or from a
	 * first read of the usual chunk size. */
	head = extra_lookup(ct, chunk, o->chunk_data);
	ws->early |= head != NULL;
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
		ws->early = true;
	} else if (buf == NULL || size > CHUNK_GUESS) {
		buf = tick_arena_alloc(cx->arena, (size_t)size);
		if (buf == NULL || remote_read(cx->pid, chunk, buf, (size_t)size) != 0)
			return NULL;
	}
	c = &ws->copies[ws->ncopies++];
	*c = (struct copy){ chunk, chunk + (uintptr_t)size, chunk, buf };
	return c;
}

/* The copy holding frame bytes [f, f + size), or NULL.  A walk goes from
 * chunk to older chunk, so the newest copies are looked at last. */
static const uint8_t *in_copies(struct chunk_walk_state *ws, uintptr_t f, size_t size)
{
	for (size_t i = ws->ncopies; i-- > 0;) {
		const struct copy *c = &ws->copies[i];

		if (f >= c->start && f + size <= c->end) {
			ws->hit = (int)i;
			return c->buf + (f - c->start);
		}
	}
	ws->hit = -1;
	return NULL;
}

/* Find frame bytes for address f: from a copied chunk, by copying the next
 * older chunk, or (generator frames, C-stack shims) by a direct read into
 * `tmp`, at most MAX_SINGLE_READS a walk (*spent when that is why it
 * failed). */
static const uint8_t *frame_bytes(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                                  struct chunk_thread *ct, uintptr_t f, uint8_t *tmp,
                                  bool *spent)
{
	size_t size = cx->o->if_size;
	const uint8_t *fb;

	for (;;) {
		if ((fb = in_copies(ws, f, size)) != NULL)
			return fb;
		/* Is it in the chunk before the oldest one copied so far? */
		if (ws->ncopies == 0 || ws->copies[ws->ncopies - 1].chunk == 0)
			break;
		{
			const struct copy *last = &ws->copies[ws->ncopies - 1];
			uint64_t prev;

			if (last->start != last->chunk)
				break;
			prev = rd64(last->buf, 0);
			if (prev == 0 || copy_chunk(cx, ws, ct, (uintptr_t)prev) == NULL)
				break;
		}
	}
	extra_remember(ct, f, size);
	if ((fb = extra_lookup(ct, f, size)) != NULL) {
		ws->early = true;
		return fb;
	}
	if (ws->single_reads++ == MAX_SINGLE_READS) {
		*spent = true;
		return NULL;
	}
	return remote_read(cx->pid, f, tmp, size) == 0 ? tmp : NULL;
}

/* The frame's code object address and instruction pointer, checked. */
static bool frame_raw(const struct py_offsets *o, const uint8_t *fb, struct raw_frame *r)
{
	r->code = rd64(fb, o->if_code);
	r->instr = rd64(fb, o->if_instr);
	if (o->code_tagged)
		r->code &= ~(uint64_t)7;
	r->entry = o->if_is_entry && fb[o->if_is_entry] != 0;
	return plausible_ptr(r->code) && plausible_ptr(r->instr & ~(uint64_t)7);
}

/* The newest frame's instruction pointer is stored at every instruction
 * the target runs, and the kernel's copy of the stack is not atomic per
 * word: a copy that meets a store can mix the old pointer's bytes with the
 * new one's.  Seen on 3.11, in a loop that jumps back across a 256-byte
 * boundary: 0x..3b1a becoming 0x..3af8 was read as 0x..3bf8, on some 2 %
 * of ticks.  Such a pointer mostly lies outside its code: read that word
 * alone once more, at most twice, rather than refuse the sample.  A mix
 * that lands inside the code cannot be told from the truth; it names a
 * nearby instruction.  Frames below the newest wait in a call: nothing
 * stores their pointers. */
static void settle_newest_instr(const struct walk_ctx *cx, uintptr_t f, struct raw_frame *r)
{
	const struct py_offsets *o = cx->o;

	for (int again = 0; again < 2; again++) {
		/* Reads the code if it is new: the record needs it anyway. */
		struct py_code *c = code_cache_resolve(cx->codes, (uintptr_t)r->code, -2, cx->tick);
		int64_t off = (int64_t)r->instr - (int64_t)(r->code + o->co_code_adaptive);
		uint8_t word[8];

		if (c == NULL || (off >= -2 && off < c->code_bytes) ||
		    remote_read(cx->pid, f + o->if_instr, word, sizeof word) != 0)
			return;
		r->instr = rd64(word, 0);
	}
}

/* 3.14 and later clear a frame's code reference (to the tagged null) as
 * they pop it, and set the thread's newest-frame pointer only once a frame
 * is filled in: a frame read with a null code before any Python frame of
 * the walk returned between the read of that pointer and the copy of the
 * stack (a recursion unwinding pops hundreds in that time).  Its caller
 * runs now, or returned too, and the frame still names it: the walk goes
 * on there.  (A frame not yet filled in, were one ever the newest, would be
 * a call not yet begun: its caller is the right answer then too.)  On
 * deep.py's recursion, going up and down every 20 ms, this took 3.14's
 * refused ticks from 25 to 9 in 3 300 (means of 8 runs). */
static bool popped_newest(const struct py_offsets *o, const uint8_t *fb, uint32_t n)
{
	return o->code_tagged && n == 0 && (rd64(fb, o->if_code) & ~(uint64_t)7) == 0;
}

static bool raw_to_record(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                          struct thread_slot *t, const struct raw_frame *r, uint32_t at)
{
	/* The same code at the same instruction as the last frame: the same
	 * record (the code is resolved, listed and seen this tick already). */
	if (!ws->memo || ws->memo_code != r->code || ws->memo_instr != r->instr) {
		/* Both are below 2^47 here, so the difference cannot overflow. */
		if (!walk_frame_record(cx, t, (uintptr_t)r->code,
		                       (int64_t)r->instr - (int64_t)(r->code + cx->o->co_code_adaptive),
		                       &ws->memo_rec)) {
			ws->memo = false;
			return false;
		}
		ws->memo = true;
		ws->memo_code = r->code;
		ws->memo_instr = r->instr;
	}
	t->frames[at] = ws->memo_rec;
	t->entry[at] = r->entry;
	return true;
}

static struct raw_frame *ring_at(struct chunk_walk_state *ws, uint32_t n)
{
	return &ws->ring[(n - KEEP_INNER) % RING_FRAMES];
}

/* Python frame n of the walk (0 = the leaf): an innermost one becomes a
 * record now; a later one is kept raw in the ring, in case it is among
 * the outermost. */
static bool keep_frame(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                       struct thread_slot *t, const struct raw_frame *r, uint32_t n)
{
	if (n >= KEEP_INNER) {
		*ring_at(ws, n) = *r;
		return true;
	}
	if (!raw_to_record(cx, ws, t, r, n))
		return false;
	if (n == 0 && py_code_in_call(code_cache_get(cx->codes, t->frames[0].code_id),
	                              t->frames[0].instr_offset))
		t->out.flags |= SAMPLE_IN_CALL;
	return true;
}

static void mark_entry(struct chunk_walk_state *ws, struct thread_slot *t, uint32_t n)
{
	if (n < KEEP_INNER)
		t->entry[n] = 1;
	else
		ring_at(ws, n)->entry = 1;
}

/* The walk saw n Python frames (cut: and stopped before the outermost).
 * A stack that fits keeps them all; a deeper one its innermost, a marker
 * counting those left out, and (not cut) its outermost. */
static bool finish_walk(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                        struct thread_slot *t, uint32_t n, bool cut)
{
	uint32_t outer = cut ? 0 : KEEP_OUTER, kept;

	if (!cut && n <= PY_READER_MAX_FRAMES) {
		for (uint32_t p = KEEP_INNER; p < n; p++)
			if (!raw_to_record(cx, ws, t, ring_at(ws, p), p))
				return false;
		t->out.nframes = n;
		return true;
	}
	kept = n < KEEP_INNER ? n : KEEP_INNER;
	/* Cut: the frames walked past the kept ones, and more unknown. */
	t->frames[kept] = (struct rec_frame){ REC_MORE_FRAMES,
	                                      (int32_t)(n - kept - outer > 0 ? n - kept - outer : 1) };
	t->entry[kept] = 0;
	for (uint32_t j = 0; j < outer; j++)
		if (!raw_to_record(cx, ws, t, ring_at(ws, n - outer + j), kept + 1 + j))
			return false;
	t->out.nframes = kept + 1 + outer;
	t->out.flags |= SAMPLE_TRUNCATED;
	return true;
}

/* After a walk that needed more older chunks than the first read
 * guesses: remember them for next tick's prefetch. */
static void remember_chain(const struct chunk_walk_state *ws, struct chunk_thread *ct,
                           bool all)
{
	size_t from = ct->has_live ? 1 : 0;

	ct->nchain = 0;
	if (ws->ncopies - from <= (all ? 0 : MAX_EXTRA))
		return;
	if (ct->chain == NULL &&
	    (ct->chain = mem_region_alloc(ws->mem, MAX_COPIES * sizeof(*ct->chain))) == NULL)
		return;
	for (size_t i = from; i < ws->ncopies; i++) {
		const struct copy *c = &ws->copies[i];
		bool guessed = false;

		for (size_t k = 0; k < ct->nnext && !all; k++)
			guessed |= ct->next[k].addr == c->chunk;
		if (!guessed)
			ct->chain[ct->nchain++] = (struct chain_link){ c->chunk, c->end - c->start };
	}
}

/* ---- the frames below the newest chunk, from the last walk ------------- */

/* Whether the frames below the live chunk's first frame may come from the
 * last walk: the thread took no page fault from the stat read before they
 * were read to this tick's, which came after the live chunk's read (in the
 * tick's first read), so the chunk was not freed and mapped again since. */
static bool may_reuse(const struct chunk_thread *ct)
{
	return ct->kept != NULL && ct->live_early && ct->has_live && ct->kept->ok &&
	       ct->clean_from <= ct->kept->read_after + 1;
}

/* Start recording this walk, for a thread whose stack spans chunks. */
static void kept_start(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                       struct chunk_thread *ct)
{
	if (cx->o->minor > LAST_UNCACHED_MINOR || (!ct->spans && ct->kept == NULL))
		return;
	if (ct->kept == NULL && ws->nkept < KEPT_THREADS &&
	    (ct->kept = kept_walk_new(ws->mem)) != NULL)
		ws->nkept++;
	kept_fresh_begin(&ws->fresh);
}

/* A frame the walk went through, Python (r) or not (r NULL). */
static void kept_note(struct chunk_walk_state *ws, const struct chunk_thread *ct,
                      const struct raw_frame *r)
{
	if (ct->kept != NULL)
		kept_fresh_step(&ws->fresh, &(struct kept_step){
			r ? r->code : 0, r ? r->instr : 0, r ? r->entry : 0, r != NULL });
}

/* The chunk whose first frame is f (as copied this walk, with its header),
 * or 0: the root chunk has no caller chunk, and is never freed. */
static uint64_t first_frame_chunk(const struct walk_ctx *cx, const struct chunk_walk_state *ws,
                                  uint64_t f)
{
	const struct copy *c;

	if (ws->hit < 0)
		return 0;
	c = &ws->copies[ws->hit];
	if (c->chunk == 0 || c->start != c->chunk || f != c->chunk + cx->o->chunk_data ||
	    rd64(c->buf, 0) == 0)
		return 0;
	return c->chunk;
}

/* Take the kept walk's `len` outermost steps as this walk's frames n and
 * after (newest first: from len - 1 down). */
static bool replay(const struct walk_ctx *cx, struct chunk_walk_state *ws,
                   const struct chunk_thread *ct, struct thread_slot *t, uint32_t len,
                   uint32_t *n)
{
	for (size_t i = len; i-- > 0;) {
		const struct kept_step *s = &ct->kept->steps[i];

		if (s->python) {
			struct raw_frame r = { s->code, s->instr, s->entry };

			if (*n == WALK_MAX_FRAMES || !keep_frame(cx, ws, t, &r, *n))
				return false;
			(*n)++;
		} else if (*n > 0) {
			mark_entry(ws, t, *n - 1);
		}
	}
	return true;
}

/* After a walk that read its frames: what next tick reads first.  A stack
 * whose frames below the live chunk may be reused reads only the live
 * chunk (and what lies above its first frame) in the first read, and the
 * older chunks, if the reuse fails, in one read of the whole chain. */
static void remember_reads(struct chunk_walk_state *ws, struct chunk_thread *ct,
                           size_t nnext_at_live_bound)
{
	bool reusable = nnext_at_live_bound != SIZE_MAX;

	if (reusable)
		ct->nnext = nnext_at_live_bound;
	remember_chain(ws, ct, reusable);
}

static void chunk_walk(const struct walk_ctx *cx, void *state, size_t slot,
                       struct thread_slot *t)
{
	const struct py_offsets *o = cx->o;
	struct chunk_walk_state *ws = state;
	struct chunk_thread *ct = ws->threads + slot;
	uint64_t f = ct->frame_ptr;
	uint8_t tmp[PY_FRAME_READ_MAX];
	uint32_t n = 0, depth = 0, power = 1, len = 0;
	uint64_t mark = 0;
	size_t nnext_at_live_bound = SIZE_MAX;
	bool cut = false, reuse = may_reuse(ct), reused = false, keep;

	walk_begin(ws, ct);
	kept_start(cx, ws, ct);
	ct->spans = false;
	t->ncheck = 0;
	while (f != 0) {
		const uint8_t *fb;
		uint8_t owner;
		uint64_t chunk;

		if (!plausible_ptr(f) || f == mark)
			goto torn;
		if (++depth > 2 * WALK_MAX_FRAMES) {
			py_sample_fail(&t->out, SAMPLE_ERR_DEEP);
			goto torn;
		}
		if (depth == power) { /* Brent: a cycle meets its mark */
			mark = f;
			power *= 2;
		}
		fb = frame_bytes(cx, ws, ct, (uintptr_t)f, tmp, &cut);
		if (fb == NULL) {
			if (cut && n > 0)
				break;
			goto torn;
		}
		owner = fb[o->if_owner];
		if (owner < o->owner_not_python) {
			struct raw_frame r;

			if (owner > 3)
				goto torn;
			if (n == WALK_MAX_FRAMES) {
				cut = true;
				break;
			}
			if (popped_newest(o, fb, n)) {
				f = rd64(fb, o->if_previous);
				continue;
			}
			if (!frame_raw(o, fb, &r))
				goto torn;
			if (n == 0)
				settle_newest_instr(cx, (uintptr_t)f, &r);
			if (!keep_frame(cx, ws, t, &r, n))
				goto torn;
			kept_note(ws, ct, &r);
			n++;
		} else {
			if (n > 0)
				mark_entry(ws, t, n - 1); /* the shim before an invocation's frames */
			kept_note(ws, ct, NULL);
		}
		if (rd64(fb, o->if_previous) == f)
			goto torn;
		chunk = first_frame_chunk(cx, ws, f);
		f = rd64(fb, o->if_previous);
		if (chunk == 0)
			continue;
		ct->spans = true;
		if (ct->kept != NULL)
			kept_fresh_bound(&ws->fresh, chunk, f);
		if (chunk != ct->live.chunk)
			continue;
		nnext_at_live_bound = ct->nnext;
		if (reuse && kept_find(ct->kept, t->tstate, chunk, f, &len)) {
			if (!replay(cx, ws, ct, t, len, &n))
				goto torn;
			reused = true;
			break;
		}
	}
	if (!finish_walk(cx, ws, t, n, cut))
		goto torn;
	keep = ct->kept != NULL && !cut && ws->fresh.ok;
	if (keep)
		kept_commit(ct->kept, &ws->fresh, reused ? len : 0, t->tstate,
		            ws->early ? cx->tick - 1 : cx->tick);
	else if (ct->kept != NULL)
		ct->kept->ok = false;
	if (!reused)
		remember_reads(ws, ct, keep ? nnext_at_live_bound : SIZE_MAX);
	return;
torn: /* a code or string that failed said so already */
	if (ct->kept != NULL)
		ct->kept->ok = false;
	py_sample_fail(&t->out, SAMPLE_ERR_FRAME);
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
