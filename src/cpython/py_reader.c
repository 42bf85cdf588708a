#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "target/remote_mem.h"

#define MAX_INTERPS 16
#define MAX_THREADS 1024
#define MAX_NAME_CHARS 1024        /* longer names are torn or hostile */
#define MAX_LINETABLE (256u << 10) /* bigger tables are left undecoded */
#define CHUNK_GUESS (16u << 10)    /* CPython's data-stack chunk size */
#define MAX_CHUNK (1u << 20)
#define MAX_COPIES 16              /* data-stack chunks copied per thread */
#define MAX_EXTRA 8
#define MAX_CHECK 32   /* codes re-checked per thread per tick */
#define MAX_CHECKS 4096
#define SPECULATION_SLACK 512u  /* bytes read past last tick's top */

/* A region of target memory copied into pytop for this thread's walk. */
struct copy {
	uintptr_t start, end; /* target addresses [start, end) */
	uintptr_t chunk;      /* the data-stack chunk it belongs to, or 0 */
	uint8_t *buf;         /* owned by the reader's arena */
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

struct thread_slot {
	uintptr_t tstate;
	struct extra_range extra[MAX_EXTRA]; /* read this tick */
	size_t nextra;
	struct extra_range next[MAX_EXTRA];  /* needed by this tick's walk */
	size_t nnext;
	uint32_t check_ids[MAX_CHECK];       /* codes on this tick's stack */
	size_t ncheck;
	uint8_t buf[PY_TSTATE_READ_MAX];  /* the thread state as read this tick */
	uint64_t frame_ptr;       /* 3.11/3.12: read through the cframe */
	struct speculation spec;
	struct py_thread_sample out;
	struct rec_frame *frames; /* owned */
	uint8_t *entry;           /* owned: per frame, see py_thread_sample */
	struct copy copies[MAX_COPIES];
	size_t ncopies;
};

/* A cached code object re-checked in this tick's first scatter read. */
struct code_check {
	uint32_t id;
	uint8_t *buf; /* fp_len() bytes, in the arena */
	bool ok;      /* arrived */
};

/* Idle codes are looked for this often (code cache, below). */
#define CODE_FORGET_PERIOD_S 2

struct code_map_slot {
	uintptr_t addr;  /* 0 = empty */
	uint32_t id;
};

struct py_reader {
	pid_t pid;
	struct py_runtime rt;
	const struct py_offsets *o;

	/* thread states from the last tick, re-validated by one scatter read */
	uintptr_t interps[MAX_INTERPS];
	size_t ninterps;
	struct thread_slot *threads; /* owned, MAX_THREADS */
	size_t nthreads;

	/* code objects: vector by id, open-addressing map by address */
	struct py_code *codes;
	size_t ncodes, codes_cap;
	struct code_map_slot *map;
	size_t map_cap; /* power of two */
	uint32_t *free_ids;          /* owned: slots of forgotten codes */
	size_t nfree, free_cap;
	uint64_t next_forget_ns;     /* when to look for idle codes next */
	uint64_t forget_ticks[PY_READER_CODE_IDLE_S / CODE_FORGET_PERIOD_S];
	size_t forget_pos;           /* r->tick at the last few looks, oldest
	                                at forget_pos */

	uint64_t tick;               /* ticks sampled so far */
	uint64_t gil[2];             /* last_holder, locked (low 32 bits) */
	bool no_calls;               /* skip the call bitmaps */
	struct code_check *checks;   /* owned, MAX_CHECKS: this tick's code checks */
	size_t nchecks;

	/* scratch for copied data-stack chunks, reset every tick */
	uint8_t *arena;
	size_t arena_used, arena_cap;
};

static uint64_t rd64(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p, uint32_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static bool plausible_ptr(uint64_t p)
{
	return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
}

/* ---- code cache ----------------------------------------------------- */

static size_t map_index(const struct py_reader *r, uintptr_t addr)
{
	uint64_t h = (uint64_t)addr * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> 20) & (r->map_cap - 1);
}

static struct py_code *code_lookup(struct py_reader *r, uintptr_t addr)
{
	for (size_t i = map_index(r, addr);; i = (i + 1) & (r->map_cap - 1)) {
		if (r->map[i].addr == 0)
			return NULL;
		if (r->map[i].addr == addr)
			return &r->codes[r->map[i].id];
	}
}

static int map_grow(struct py_reader *r)
{
	size_t old_cap = r->map_cap;
	struct code_map_slot *old = r->map;

	r->map_cap = old_cap ? old_cap * 2 : 1024;
	r->map = calloc(r->map_cap, sizeof(*r->map));
	if (r->map == NULL) {
		r->map = old;
		r->map_cap = old_cap;
		return -1;
	}
	for (size_t i = 0; i < old_cap; i++) {
		size_t j;

		if (old[i].addr == 0)
			continue;
		for (j = map_index(r, old[i].addr); r->map[j].addr != 0; j = (j + 1) & (r->map_cap - 1))
			;
		r->map[j] = old[i];
	}
	free(old);
	return 0;
}

/* Point addr at code id, replacing an older entry for the same address. */
static int map_put(struct py_reader *r, uintptr_t addr, uint32_t id)
{
	size_t i;

	if ((r->ncodes + 1) * 2 > r->map_cap && map_grow(r) != 0)
		return -1;
	for (i = map_index(r, addr); r->map[i].addr != 0 && r->map[i].addr != addr;
	     i = (i + 1) & (r->map_cap - 1))
		;
	r->map[i].addr = addr;
	r->map[i].id = id;
	return 0;
}

static void code_release(struct py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	free(c->call_bits);
	c->qualname = c->filename = NULL;
	c->linetable = NULL;
	c->call_bits = NULL;
	c->valid = false;
}

/* Under code churn (exec, templates) new code objects come for ever, and
 * most are freed by the target soon after.  A code not listed on any
 * stack for PY_READER_CODE_IDLE_S is forgotten: its memory freed, its
 * slot (and id) reused.  Only codes idle that long go, so no thread's
 * check list or this tick's frames can name one. */
static void code_forget_idle(struct py_reader *r)
{
	const size_t nlooks = sizeof(r->forget_ticks) / sizeof(r->forget_ticks[0]);
	uint64_t now = clock_now_ns(), before;

	if (now < r->next_forget_ns)
		return;
	r->next_forget_ns = now + CODE_FORGET_PERIOD_S * 1000000000ull;
	before = r->forget_ticks[r->forget_pos]; /* the tick nlooks looks ago */
	r->forget_ticks[r->forget_pos] = r->tick;
	r->forget_pos = (r->forget_pos + 1) % nlooks;
	if (before == 0 || r->map_cap == 0)
		return;
	if (r->free_cap < r->ncodes) {
		uint32_t *nf = realloc(r->free_ids, r->ncodes * sizeof(*nf));

		if (nf == NULL)
			return;
		r->free_ids = nf;
		r->free_cap = r->ncodes;
	}
	memset(r->map, 0, r->map_cap * sizeof(*r->map));
	r->nfree = 0;
	for (size_t i = 0; i < r->ncodes; i++) {
		struct py_code *c = &r->codes[i];

		if (c->addr != 0 && c->seen_tick < before) {
			code_release(c); /* also frees what a superseded code kept */
			c->addr = 0;
		}
		if (c->addr == 0) {
			r->free_ids[r->nfree++] = c->id;
			continue;
		}
		if (c->qualname != NULL) /* the code at its address now */
			(void)map_put(r, c->addr, c->id); /* cap holds them all */
	}
}

/* ---- reading strings and bytes ---------------------------------------- */

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Convert n code units of the given kind to UTF-8.  Rejects control
 * characters, surrogates and out-of-range code points: a name containing
 * them was torn or is not a name. */
static char *decode_units(const uint8_t *data, size_t n, unsigned kind)
{
	char *s = malloc(n * 4 + 1);
	size_t len = 0;

	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1)
			cp = data[i];
		else if (kind == 2)
			cp = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&cp, data + 4 * i, 4);
		if (cp < 0x20 || cp == 0x7F || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
			free(s);
			return NULL;
		}
		len += put_utf8(s + len, cp);
	}
	s[len] = '\0';
	return s;
}

/* Read a str object into a fresh UTF-8 string, or NULL. */
static char *read_str(struct py_reader *r, uintptr_t addr)
{
	const struct py_offsets *o = r->o;
	uint8_t head[PY_STR_HEAD_MAX];
	uint8_t *data;
	uint64_t length;
	uint32_t state;
	unsigned kind;
	bool compact, ascii;
	size_t off, bytes;
	char *s;

	if (!plausible_ptr(addr) || remote_read(r->pid, addr, head, o->str_compact_data) != 0)
		return NULL;
	length = rd64(head, o->str_length);
	state = rd32(head, o->str_state);
	kind = (state >> 2) & 7;
	compact = (state >> 5) & 1;
	ascii = (state >> 6) & 1;
	if (length > MAX_NAME_CHARS || !compact ||
	    (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	if (length == 0) /* compile(src, "", "exec") */
		return strdup("");
	off = ascii ? o->str_ascii_data : o->str_compact_data;
	bytes = (size_t)length * kind;
	data = malloc(bytes);
	if (data == NULL)
		return NULL;
	s = remote_read(r->pid, addr + off, data, bytes) == 0
		? decode_units(data, (size_t)length, kind) : NULL;
	free(data);
	return s;
}

/* Read a bytes object's contents (the line table). */
static uint8_t *read_bytes(struct py_reader *r, uintptr_t addr, uint32_t *len)
{
	uint8_t head[PY_BYTES_HEAD_MAX];
	uint64_t size;
	uint8_t *data;

	*len = 0;
	if (!plausible_ptr(addr) || remote_read(r->pid, addr, head, sizeof(head)) != 0)
		return NULL;
	size = rd64(head, r->o->bytes_size);
	if (size == 0 || size > MAX_LINETABLE)
		return NULL;
	data = malloc((size_t)size);
	if (data == NULL)
		return NULL;
	if (remote_read(r->pid, addr + r->o->bytes_data, data, (size_t)size) != 0) {
		free(data);
		return NULL;
	}
	*len = (uint32_t)size;
	return data;
}

/* ---- code objects ---------------------------------------------------- */

/* Bytes from FP_START that hold every fingerprint field (py_offsets_fit
 * keeps every code field at or after it). */
#define FP_START PY_OBJECT_HEAD
static size_t fp_len(const struct py_offsets *o)
{
	return o->co_linetable + 8 - FP_START;
}

/* What identifies a code object beyond its address: its size, first line
 * and the objects it points to.  `region` holds fp_len() bytes read at
 * code + FP_START.  Fields that change while the code runs (warm-up
 * counters, flags) are left out. */
static void code_fingerprint(const struct py_offsets *o, const uint8_t *region,
                             uint64_t fp[PY_CODE_FP_WORDS])
{
	fp[0] = rd64(region, 16 - FP_START);              /* ob_size */
	fp[1] = rd32(region, o->co_firstlineno - FP_START);
	fp[2] = rd64(region, 24 - FP_START);              /* co_consts */
	fp[3] = rd64(region, 32 - FP_START);              /* co_names */
	fp[4] = rd64(region, o->co_filename - FP_START);
	fp[5] = rd64(region, o->co_name - FP_START);
	fp[6] = rd64(region, o->co_qualname - FP_START);
	fp[7] = rd64(region, o->co_linetable - FP_START);
}

/* A slot for a new code: a forgotten code's, else a new one at the end. */
static struct py_code *code_append(struct py_reader *r)
{
	if (r->nfree > 0) {
		uint32_t id = r->free_ids[--r->nfree];

		memset(&r->codes[id], 0, sizeof(r->codes[0]));
		r->codes[id].id = id;
		return &r->codes[id];
	}
	if (r->ncodes == r->codes_cap) {
		size_t ncap = r->codes_cap ? r->codes_cap * 2 : 256;
		struct py_code *nv = realloc(r->codes, ncap * sizeof(*nv));

		if (nv == NULL)
			return NULL;
		r->codes = nv;
		r->codes_cap = ncap;
	}
	memset(&r->codes[r->ncodes], 0, sizeof(r->codes[0]));
	r->codes[r->ncodes].id = (uint32_t)r->ncodes;
	return &r->codes[r->ncodes++];
}

/* Bytecode read together with a new code object's header, speculatively:
 * most functions are shorter, so one read serves both. */
#define CODE_SPEC_BYTES 1024
#define MAX_BYTECODE (1u << 20)

/* Which code units are call instructions.  The target specialises its
 * bytecode as it runs, but only within an instruction's family, so a copy
 * taken once stays right.  `have` bytes of bytecode are at `bytes`; a
 * longer code is read whole. */
static uint8_t *call_bitmap(struct py_reader *r, uintptr_t addr, const uint8_t *bytes,
                            size_t have, int32_t code_bytes)
{
	size_t units = (size_t)code_bytes / 2;
	uint8_t *bits, *whole = NULL;

	if (r->no_calls || r->o->ncall_ops == 0 || (size_t)code_bytes > MAX_BYTECODE)
		return NULL;
	if ((size_t)code_bytes > have) {
		whole = malloc((size_t)code_bytes);
		if (whole == NULL ||
		    remote_read(r->pid, addr + r->o->co_code_adaptive, whole, (size_t)code_bytes) != 0) {
			free(whole);
			return NULL;
		}
		bytes = whole;
	}
	bits = calloc((units + 7) / 8, 1);
	for (size_t i = 0; bits != NULL && i < units; i++)
		if (py_offsets_is_call(r->o, bytes[2 * i]))
			bits[i / 8] |= (uint8_t)(1u << (i % 8));
	free(whole);
	return bits;
}

/* Read a code object never seen at this address (or whose old entry failed
 * its check).  NULL if it is not a readable code object. */
static struct py_code *code_read(struct py_reader *r, uintptr_t addr)
{
	const struct py_offsets *o = r->o;
	uint8_t head[PY_CODE_HEAD_MAX + CODE_SPEC_BYTES];
	struct py_code tmp = { .addr = addr, .valid = true, .verified_tick = r->tick };
	struct py_code *c, *old;
	int64_t units, old_id;
	/* A small code object near the end of a mapping cannot be read with
	 * the speculative tail: then the header alone. */
	size_t have = CODE_SPEC_BYTES;

	if (remote_read(r->pid, addr, head, o->co_code_adaptive + have) != 0) {
		have = 0;
		if (remote_read(r->pid, addr, head, o->co_code_adaptive) != 0)
			return NULL;
	}
	if (r->rt.pycode_type != 0 && rd64(head, 8) != r->rt.pycode_type)
		return NULL;
	units = (int64_t)rd64(head, 16);
	if (units <= 0 || units > (1 << 24))
		return NULL;
	tmp.code_bytes = (int32_t)(units * 2);
	tmp.firstlineno = (int)rd32(head, o->co_firstlineno);
	code_fingerprint(o, head + FP_START, tmp.fp);
	tmp.qualname = read_str(r, tmp.fp[6]);
	tmp.filename = read_str(r, tmp.fp[4]);
	if (tmp.qualname == NULL || tmp.filename == NULL || tmp.firstlineno < 0) {
		code_release(&tmp);
		return NULL;
	}
	old = code_lookup(r, addr);
	if (old != NULL && old->code_bytes == tmp.code_bytes &&
	    old->firstlineno == tmp.firstlineno &&
	    memcmp(old->fp, tmp.fp, sizeof(tmp.fp)) == 0) {
		code_release(&tmp);
		old->valid = true;
		old->verified_tick = r->tick;
		return old;
	}
	tmp.linetable = read_bytes(r, tmp.fp[7], &tmp.linetable_len);
	tmp.call_bits = call_bitmap(r, addr, head + o->co_code_adaptive, have, tmp.code_bytes);
	old_id = old != NULL ? (int64_t)old->id : -1;
	c = code_append(r); /* may move r->codes: use ids, not pointers, across it */
	if (c == NULL || map_put(r, addr, c->id) != 0) {
		if (c != NULL && c->id + 1 == r->ncodes)
			r->ncodes--;
		else if (c != NULL) /* popped from free_ids, which has room */
			r->free_ids[r->nfree++] = c->id;
		code_release(&tmp);
		return NULL;
	}
	if (old_id >= 0)
		code_release(&r->codes[old_id]);
	tmp.id = c->id;
	*c = tmp;
	return c;
}

/* ---- thread states ----------------------------------------------------- */

static uint8_t *arena_alloc(struct py_reader *r, size_t len)
{
	uint8_t *p;

	len = (len + 15) & ~(size_t)15;
	if (r->arena_used + len > r->arena_cap)
		return NULL;
	p = r->arena + r->arena_used;
	r->arena_used += len;
	return p;
}


static int gone(void)
{
	return errno == ESRCH || errno == EPERM ? -1 : 0;
}

static uintptr_t gil_address(const struct py_reader *r)
{
	uintptr_t base = r->o->gil_in_runtime ? r->rt.runtime : r->interps[0];

	return r->ninterps > 0 ? base + r->o->gil_holder : 0;
}

bool py_reader_gil_span(const struct py_reader *r, uint64_t *lo, uint64_t *hi)
{
	uintptr_t holder = gil_address(r);

	if (holder < PY_GIL_HOLDER_AT)
		return false;
	*lo = holder - PY_GIL_HOLDER_AT;
	*hi = *lo + PY_GIL_SIZE;
	return true;
}

/* Walk interpreters and their thread lists one pointer at a time.  Used on
 * the first tick and whenever the cached list no longer matches. */
static int walk_threads(struct py_reader *r)
{
	const struct py_offsets *o = r->o;
	uint64_t interp = 0;

	r->ninterps = 0;
	r->nthreads = 0;
	if (remote_read(r->pid, r->rt.runtime + o->rt_interp_head, &interp, 8) != 0)
		return gone() ? -1 : 0;
	while (plausible_ptr(interp) && r->ninterps < MAX_INTERPS) {
		uint64_t ts = 0, next = 0;

		r->interps[r->ninterps++] = interp;
		if (remote_read(r->pid, interp + o->is_threads_head, &ts, 8) != 0 ||
		    remote_read(r->pid, interp + o->is_next, &next, 8) != 0)
			return gone() ? -1 : 0;
		size_t first = r->nthreads;

		while (plausible_ptr(ts) && r->nthreads < MAX_THREADS) {
			struct thread_slot *t = &r->threads[r->nthreads];
			size_t seen = first;

			/* a list that loops back ends where it does */
			while (seen < r->nthreads && r->threads[seen].tstate != ts)
				seen++;
			if (seen < r->nthreads)
				break;

			if (remote_read(r->pid, ts, t->buf, o->ts_read_size) != 0)
				return gone() ? -1 : 0;
			t->tstate = ts;
			r->nthreads++;
			ts = rd64(t->buf, o->ts_next);
		}
		interp = next;
	}
	if (remote_read(r->pid, gil_address(r), r->gil, sizeof(r->gil)) != 0)
		memset(r->gil, 0, sizeof(r->gil));
	return 0;
}

static size_t add_checks(struct py_reader *r, struct thread_slot *t,
                         struct iovec *local, struct iovec *remote, bool **owner);

/* Queue the speculative reads for one thread: returns how many iovecs. */
static size_t add_speculation(struct py_reader *r, struct thread_slot *t,
                              struct iovec *local, struct iovec *remote,
                              bool **owner)
{
	struct speculation *sp = &t->spec;
	size_t n = 0;

	sp->read = false;
	t->nextra = 0;
	if (sp->chunk == 0 || sp->tstate != t->tstate ||
	    (sp->buf = arena_alloc(r, (size_t)sp->len)) == NULL) {
		t->nnext = 0;
		return add_checks(r, t, local, remote, owner);
	}
	sp->read = true;
	if (r->o->ts_cframe) {
		local[n] = (struct iovec){ &sp->frame_ptr, 8 };
		remote[n] = (struct iovec){ (void *)(sp->cframe + r->o->cf_current_frame), 8 };
		owner[n++] = &sp->read;
	}
	local[n] = (struct iovec){ sp->buf, (size_t)sp->len };
	remote[n] = (struct iovec){ (void *)sp->chunk, (size_t)sp->len };
	owner[n++] = &sp->read;
	for (size_t i = 0; i < t->nnext; i++) {
		struct extra_range *e = &t->extra[t->nextra];

		*e = t->next[i];
		e->buf = arena_alloc(r, e->len);
		if (e->buf == NULL)
			break;
		e->ok = true;
		local[n] = (struct iovec){ e->buf, e->len };
		remote[n] = (struct iovec){ (void *)e->addr, e->len };
		owner[n++] = &e->ok;
		t->nextra++;
	}
	t->nnext = 0;
	return n + add_checks(r, t, local + n, remote + n, owner + n);
}

/* Queue the fingerprint reads of the codes the thread ran last tick. */
static size_t add_checks(struct py_reader *r, struct thread_slot *t,
                         struct iovec *local, struct iovec *remote, bool **owner)
{
	size_t n = 0;

	for (size_t i = 0; i < t->ncheck && r->nchecks < MAX_CHECKS; i++) {
		struct py_code *c = &r->codes[t->check_ids[i]];
		struct code_check *k = &r->checks[r->nchecks];

		if (!c->valid || c->verified_tick == r->tick)
			continue;
		k->buf = arena_alloc(r, fp_len(r->o));
		if (k->buf == NULL)
			break;
		k->id = c->id;
		k->ok = true;
		c->verified_tick = r->tick; /* queued: do not queue twice */
		local[n] = (struct iovec){ k->buf, fp_len(r->o) };
		remote[n] = (struct iovec){ (void *)(c->addr + FP_START), fp_len(r->o) };
		owner[n++] = &k->ok;
		r->nchecks++;
	}
	t->ncheck = 0;
	return n;
}

/* Compare the fingerprints read for this tick's checks; a code whose
 * fingerprint changed (or could not be read) was replaced at its address
 * and will be read afresh when next seen. */
static void apply_checks(struct py_reader *r)
{
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct code_check *k = &r->checks[i];
		struct py_code *c = &r->codes[k->id];
		uint64_t fp[PY_CODE_FP_WORDS];

		if (!k->ok) { /* unknown: verify_codes checks it again */
			c->verified_tick = 0;
			continue;
		}
		code_fingerprint(r->o, k->buf, fp);
		if (memcmp(fp, c->fp, sizeof(fp)) != 0) {
			c->valid = false;
			c->verified_tick = 0;
		}
	}
	r->nchecks = 0;
}

/* Re-read the cached list with one scatter read and check that every link
 * still points where it did.  Returns 1 if valid, 0 if the list changed,
 * -1 if the target is gone. */
static int refresh_threads(struct py_reader *r)
{
	const struct py_offsets *o = r->o;
	enum { MAXV = 2 + 2 * MAX_INTERPS + (3 + MAX_EXTRA) * MAX_THREADS + MAX_CHECKS };
	struct iovec local[MAXV], remote[MAXV];
	bool *spec_of[MAXV];
	bool spec_arrived[MAXV] = { false };
	uint64_t head, links[MAX_INTERPS][2];
	size_t n = 0, t = 0, nlinks;
	int got;

	if (r->ninterps == 0)
		return 0;
	local[n] = (struct iovec){ &head, 8 };
	remote[n++] = (struct iovec){ (void *)(r->rt.runtime + o->rt_interp_head), 8 };
	local[n] = (struct iovec){ r->gil, sizeof(r->gil) };
	remote[n++] = (struct iovec){ (void *)gil_address(r), sizeof(r->gil) };
	for (size_t i = 0; i < r->ninterps; i++) {
		local[n] = (struct iovec){ &links[i][0], 8 };
		remote[n++] = (struct iovec){ (void *)(r->interps[i] + o->is_threads_head), 8 };
		local[n] = (struct iovec){ &links[i][1], 8 };
		remote[n++] = (struct iovec){ (void *)(r->interps[i] + o->is_next), 8 };
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		local[n] = (struct iovec){ r->threads[i].buf, o->ts_read_size };
		remote[n++] = (struct iovec){ (void *)r->threads[i].tstate, o->ts_read_size };
	}
	nlinks = n;
	/* Speculative ranges go last, so that one that faults (its chunk was
	 * freed) cannot hide the links before it. */
	for (size_t i = 0; i < r->nthreads; i++)
		n += add_speculation(r, &r->threads[i], local + n, remote + n, spec_of + n);
	got = remote_readv(r->pid, local, remote, (int)n);
	if (got < 0)
		got = 0;
	for (size_t k = nlinks; k < (size_t)got; k++)
		spec_arrived[k] = true;
	for (size_t k = nlinks; k < n; k++)
		if (!spec_arrived[k])
			*spec_of[k] = false;
	apply_checks(r);
	if ((size_t)got < nlinks)
		return gone() ? -1 : 0;
	if (head != r->interps[0])
		return 0;
	for (size_t i = 0; i < r->ninterps; i++) {
		uint64_t want_next = i + 1 < r->ninterps ? r->interps[i + 1] : 0;
		uint64_t ts = links[i][0];

		if (links[i][1] != want_next)
			return 0;
		/* The threads of interpreter i are the next run of slots. */
		for (; plausible_ptr(ts); t++) {
			if (t >= r->nthreads || r->threads[t].tstate != ts)
				return 0;
			ts = rd64(r->threads[t].buf, o->ts_next);
			if (rd64(r->threads[t].buf, o->ts_interp) != r->interps[i])
				return 0;
		}
		if (ts != 0)
			return 0;
	}
	return t == r->nthreads;
}

/* ---- data stacks -------------------------------------------------------- */


/* This tick's speculative copy of [addr, addr + len), or NULL. */
static const uint8_t *extra_lookup(const struct thread_slot *t, uintptr_t addr, size_t len)
{
	for (size_t i = 0; i < t->nextra; i++) {
		const struct extra_range *e = &t->extra[i];

		if (e->ok && addr >= e->addr && addr + len <= e->addr + e->len)
			return e->buf + (addr - e->addr);
	}
	return NULL;
}

static void extra_remember(struct thread_slot *t, uintptr_t addr, size_t len)
{
	if (t->nnext < MAX_EXTRA)
		t->next[t->nnext++] = (struct extra_range){ .addr = addr, .len = len };
}

/* Copy an older (non-current) data-stack chunk whole. */
static struct copy *copy_chunk(struct py_reader *r, struct thread_slot *t, uintptr_t chunk)
{
	struct copy *c;
	uint64_t size;
	const uint8_t *head;
	uint8_t *buf;

	if (t->ncopies == MAX_COPIES || !plausible_ptr(chunk))
		return NULL;
	/* Its size is in its header: from the speculative copy, or from a
	 * first read of the usual chunk size. */
	head = extra_lookup(t, chunk, r->o->chunk_data);
	buf = NULL;
	if (head == NULL) {
		buf = arena_alloc(r, CHUNK_GUESS);
		if (buf == NULL || remote_read(r->pid, chunk, buf, CHUNK_GUESS) != 0)
			return NULL;
		head = buf;
	}
	size = rd64(head, r->o->chunk_size);
	if (size < r->o->chunk_data || size > MAX_CHUNK)
		return NULL;
	extra_remember(t, chunk, (size_t)size);
	if ((head = extra_lookup(t, chunk, (size_t)size)) != NULL) {
		buf = (uint8_t *)head;
	} else if (buf == NULL || size > CHUNK_GUESS) {
		buf = arena_alloc(r, (size_t)size);
		if (buf == NULL || remote_read(r->pid, chunk, buf, (size_t)size) != 0)
			return NULL;
	}
	c = &t->copies[t->ncopies++];
	*c = (struct copy){ chunk, chunk + (uintptr_t)size, chunk, buf };
	return c;
}

/* Find frame bytes for address f: from a copied chunk, by copying the next
 * older chunk, or (generator frames, C-stack shims) by a direct read into
 * `tmp`. */
static const uint8_t *frame_bytes(struct py_reader *r, struct thread_slot *t,
                                  uintptr_t f, uint8_t *tmp)
{
	size_t size = r->o->if_size;
	const uint8_t *fb;

	for (;;) {
		for (size_t i = 0; i < t->ncopies; i++) {
			const struct copy *c = &t->copies[i];

			if (f >= c->start && f + size <= c->end)
				return c->buf + (f - c->start);
		}
		/* Is it in the chunk before the oldest one copied so far? */
		if (t->ncopies == 0 || t->copies[t->ncopies - 1].chunk == 0)
			break;
		{
			const struct copy *last = &t->copies[t->ncopies - 1];
			uint64_t prev;

			if (last->start != last->chunk)
				break;
			prev = rd64(last->buf, 0);
			if (prev == 0 || copy_chunk(r, t, (uintptr_t)prev) == NULL)
				break;
		}
	}
	extra_remember(t, f, size);
	if ((fb = extra_lookup(t, f, size)) != NULL)
		return fb;
	return remote_read(r->pid, f, tmp, size) == 0 ? tmp : NULL;
}

/* Guess for next tick: the same cframe and chunk, read a little past the
 * current top so that a slightly deeper stack still fits. */
static void remember(const struct py_offsets *o, struct thread_slot *t,
                     uint64_t chunk, uint64_t top)
{
	uint64_t size = rd64(t->copies[0].buf, o->chunk_size);
	uint64_t len = top - chunk + SPECULATION_SLACK;

	if (size >= o->chunk_data && size <= MAX_CHUNK && len > size)
		len = size;
	t->spec.cframe = o->ts_cframe ? rd64(t->buf, o->ts_cframe) : 0;
	t->spec.tstate = t->tstate;
	t->spec.chunk = chunk;
	t->spec.len = len;
}

/* If last tick's guess holds (same cframe and chunk, the live top within
 * what was read), use the speculative copy. */
static bool use_speculation(const struct py_offsets *o, struct thread_slot *t,
                            uint64_t chunk, uint64_t top)
{
	struct speculation *sp = &t->spec;

	if (!sp->read || sp->tstate != t->tstate || sp->chunk != chunk ||
	    top > chunk + sp->len ||
	    (o->ts_cframe && rd64(t->buf, o->ts_cframe) != sp->cframe))
		return false;
	if (o->ts_cframe)
		t->frame_ptr = sp->frame_ptr;
	t->copies[0] = (struct copy){ chunk, top, chunk, sp->buf };
	t->ncopies = 1;
	return true;
}

/* Read, for every thread to sample, its current frame pointer (through the
 * cframe on 3.11/3.12) and the live part of its current data-stack chunk,
 * all in one scatter read. */
static void read_stacks(struct py_reader *r)
{
	const struct py_offsets *o = r->o;
	struct iovec local[2 * MAX_THREADS], remote[2 * MAX_THREADS];
	struct thread_slot *owner[2 * MAX_THREADS];
	int n = 0, done = 0;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_slot *t = &r->threads[i];
		uint64_t chunk = rd64(t->buf, o->ts_datastack_chunk);
		uint64_t top = rd64(t->buf, o->ts_datastack_top);
		uint8_t *buf;

		t->ncopies = 0;
		t->frame_ptr = o->ts_current_frame ? rd64(t->buf, o->ts_current_frame) : 0;
		if (t->out.status != PY_THREAD_OK) {
			t->spec.chunk = 0; /* guess only for threads being sampled */
			continue;
		}
		if (o->ts_cframe) {
			uint64_t cframe = rd64(t->buf, o->ts_cframe);

			if (!plausible_ptr(cframe)) {
				t->out.status = PY_THREAD_ERROR;
				continue;
			}
			if (use_speculation(o, t, chunk, top))
				continue;
			local[n] = (struct iovec){ &t->frame_ptr, 8 };
			remote[n] = (struct iovec){ (void *)(cframe + o->cf_current_frame), 8 };
			owner[n++] = t;
		}
		if (!plausible_ptr(chunk) || top <= chunk || top - chunk > MAX_CHUNK) {
			t->spec.chunk = 0;
			continue; /* no usable chunk: frames are read one by one */
		}
		if (use_speculation(o, t, chunk, top))
			continue;
		if ((buf = arena_alloc(r, (size_t)(top - chunk))) == NULL)
			continue;
		t->copies[0] = (struct copy){ chunk, top, chunk, buf };
		local[n] = (struct iovec){ buf, top - chunk };
		remote[n] = (struct iovec){ (void *)chunk, top - chunk };
		owner[n++] = t;
		t->ncopies = 1;
	}
	/* The kernel stops at the first unreadable range: mark it and go on
	 * with the rest. */
	while (done < n) {
		int got = remote_readv(r->pid, local + done, remote + done, n - done);

		if (got < 0)
			got = 0;
		done += got;
		if (done < n) {
			struct thread_slot *bad = owner[done];

			bad->out.status = PY_THREAD_ERROR;
			done++;
		}
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_slot *t = &r->threads[i];

		if (t->out.status == PY_THREAD_OK && t->ncopies == 1)
			remember(o, t, t->copies[0].chunk, t->copies[0].end);
	}
}

/* ---- frame walk --------------------------------------------------------- */

static bool frame_to_record(struct py_reader *r, struct thread_slot *t,
                            const uint8_t *fb, struct rec_frame *out)
{
	const struct py_offsets *o = r->o;
	uint64_t code_addr = rd64(fb, o->if_code);
	uint64_t instr = rd64(fb, o->if_instr);
	int64_t off;
	struct py_code *c;

	if (o->code_tagged)
		code_addr &= ~(uint64_t)7;
	if (!plausible_ptr(code_addr) || !plausible_ptr(instr & ~(uint64_t)7))
		return false;
	/* Both are below 2^47 here, so the difference cannot overflow. */
	off = (int64_t)instr - (int64_t)(code_addr + o->co_code_adaptive);
	c = code_lookup(r, (uintptr_t)code_addr);
	/* An offset past the cached code's end: the address now holds
	 * another code object. */
	if (c != NULL && c->valid && (off < -2 || off >= c->code_bytes))
		c->valid = false;
	if (c == NULL || !c->valid)
		c = code_read(r, (uintptr_t)code_addr);
	if (c == NULL || off < -2 || off >= c->code_bytes)
		return false;
	c->seen_tick = r->tick;
	if (c->listed_tick != r->tick && t->ncheck < MAX_CHECK) {
		c->listed_tick = r->tick;
		t->check_ids[t->ncheck++] = c->id;
	}
	out->code_id = c->id;
	out->instr_offset = (int32_t)off;
	return true;
}

static bool leaf_in_call(const struct py_reader *r, const struct rec_frame *f)
{
	const struct py_code *c = &r->codes[f->code_id];
	int32_t unit = f->instr_offset / 2;

	return c->call_bits != NULL && f->instr_offset >= 0 &&
	       f->instr_offset < c->code_bytes &&
	       (c->call_bits[unit / 8] >> (unit % 8)) & 1;
}

static void walk_frames(struct py_reader *r, struct thread_slot *t)
{
	const struct py_offsets *o = r->o;
	uint64_t f = t->frame_ptr;
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
		fb = frame_bytes(r, t, (uintptr_t)f, tmp);
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
			if (!frame_to_record(r, t, fb, &t->frames[n]))
				goto torn;
			t->entry[n] = o->if_is_entry && fb[o->if_is_entry] != 0;
			if (n == 0 && leaf_in_call(r, &t->frames[0]))
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

static void mark_users_torn(struct py_reader *r, uint32_t id)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_slot *t = &r->threads[i];

		for (uint32_t j = 0; t->out.status == PY_THREAD_OK && j < t->out.nframes; j++)
			if (t->frames[j].code_id == id)
				t->out.status = PY_THREAD_ERROR;
	}
}

/* Codes on this tick's stacks that were not checked in the first scatter
 * read (new to this thread's stack, and not just read) are checked now, in
 * one more.  A sample that used a replaced code is torn. */
static void verify_codes(struct py_reader *r)
{
	enum { BATCH = 256 };
	struct iovec local[BATCH], remote[BATCH];
	uint8_t *bufs[BATCH];
	uint32_t ids[BATCH];
	int n = 0, ok;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_slot *t = &r->threads[i];

		for (size_t k = 0; t->out.status == PY_THREAD_OK && k < t->ncheck && n < BATCH; k++) {
			struct py_code *c = &r->codes[t->check_ids[k]];

			if (c->verified_tick == r->tick || (bufs[n] = arena_alloc(r, fp_len(r->o))) == NULL)
				continue;
			c->verified_tick = r->tick;
			ids[n] = c->id;
			local[n] = (struct iovec){ bufs[n], fp_len(r->o) };
			remote[n] = (struct iovec){ (void *)(c->addr + FP_START), fp_len(r->o) };
			n++;
		}
	}
	if (n == 0)
		return;
	ok = remote_readv(r->pid, local, remote, n);
	for (int k = 0; k < n; k++) {
		struct py_code *c = &r->codes[ids[k]];
		uint64_t fp[PY_CODE_FP_WORDS];

		if (k < ok) {
			code_fingerprint(r->o, bufs[k], fp);
			if (memcmp(fp, c->fp, sizeof(fp)) == 0)
				continue;
		}
		c->valid = false;
		c->verified_tick = 0;
		mark_users_torn(r, c->id);
	}
}

/* ---- public ------------------------------------------------------------ */

struct py_reader *py_reader_new(pid_t pid, const struct py_runtime *rt)
{
	struct py_reader *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->pid = pid;
	r->rt = *rt;
	r->rt.offsets = *rt->off; /* own copy: rt may be a temporary */
	r->rt.off = &r->rt.offsets;
	r->o = r->rt.off;
	r->threads = calloc(MAX_THREADS, sizeof(*r->threads));
	r->checks = calloc(MAX_CHECKS, sizeof(*r->checks));
	r->arena_cap = 8u << 20;
	r->arena = malloc(r->arena_cap);
	if (r->threads == NULL || r->checks == NULL || r->arena == NULL || map_grow(r) != 0) {
		py_reader_free(r);
		return NULL;
	}
	return r;
}

void py_reader_want_calls(struct py_reader *r, bool on)
{
	r->no_calls = !on;
}

void py_reader_free(struct py_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->ncodes; i++)
		code_release(&r->codes[i]);
	if (r->threads != NULL)
		for (size_t i = 0; i < MAX_THREADS; i++) {
			free(r->threads[i].frames);
			free(r->threads[i].entry);
		}
	free(r->threads);
	free(r->checks);
	free(r->codes);
	free(r->free_ids);
	free(r->map);
	free(r->arena);
	free(r);
}

/* Decide per thread whether to sample it; fill the per-thread header. */
static void classify(struct py_reader *r, struct proc_threads *pt, bool idle)
{
	struct proc_thread_stat st;

	for (size_t i = 0; i < r->nthreads; i++) {
		struct thread_slot *t = &r->threads[i];
		/* In a container the thread state holds the TID inside its
		 * PID namespace: everything downstream uses the host's. */
		pid_t tid = proc_threads_host_tid(pt, (int32_t)rd64(t->buf, r->o->ts_native_tid));

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
		t->out.rss_bytes = st.rss_bytes;
		t->out.run_ns = st.run_ns;
		t->out.delay_ns = st.delay_ns;
		if (st.state == 'R')
			t->out.flags |= SAMPLE_RUNNING;
		if (gil_address(r) != 0)
			t->out.flags |= SAMPLE_GIL_KNOWN;
		if ((uint32_t)r->gil[1] != 0 && r->gil[0] == t->tstate)
			t->out.flags |= SAMPLE_HAS_GIL;
		if (r->o->ts_gil_requested && rd32(t->buf, r->o->ts_gil_requested) != 0)
			t->out.flags |= SAMPLE_GIL_WAIT;
		if (t->frames == NULL)
			t->frames = malloc(PY_READER_MAX_FRAMES * sizeof(*t->frames));
		if (t->entry == NULL)
			t->entry = malloc(PY_READER_MAX_FRAMES);
		t->out.frames = t->frames;
		t->out.entry = t->entry;
		if (t->frames != NULL && t->entry != NULL && t->out.state != 0 && (idle || t->out.state == 'R'))
			t->out.status = PY_THREAD_OK;
	}
	proc_threads_sweep(pt);
}

int py_reader_sample(struct py_reader *r, struct proc_threads *pt, bool idle)
{
	int rc;

	r->arena_used = 0;
	r->tick++;
	code_forget_idle(r);
	rc = refresh_threads(r);
	if (rc < 0)
		return -1;
	if (rc == 0 && walk_threads(r) < 0)
		return -1;
	classify(r, pt, idle);
	read_stacks(r);
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].out.status == PY_THREAD_OK)
			walk_frames(r, &r->threads[i]);
	verify_codes(r);
	return (int)r->nthreads;
}

const struct py_thread_sample *py_reader_thread(const struct py_reader *r, size_t i)
{
	return i < r->nthreads ? &r->threads[i].out : NULL;
}

struct py_code *py_reader_code(struct py_reader *r, uint32_t id)
{
	return id < r->ncodes ? &r->codes[id] : NULL;
}
