/* code_cache.c - see code_cache.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/code_cache.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cpython/py_strings.h"
#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

/* Bytecode read together with a new code object's header, speculatively:
 * most functions are shorter, so one read serves both. */
#define CODE_SPEC_BYTES 1024
#define MAX_BYTECODE (1u << 20)

int code_cache_init(struct code_cache *cc, pid_t pid, const struct py_offsets *o,
                    uintptr_t pycode_type)
{
	*cc = (struct code_cache){ .pid = pid, .o = o, .pycode_type = pycode_type };
	return code_index_init(&cc->index);
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

void code_cache_destroy(struct code_cache *cc)
{
	for (size_t i = 0; i < cc->ncodes; i++)
		code_release(&cc->codes[i]);
	free(cc->codes);
	free(cc->free_ids);
	code_index_destroy(&cc->index);
	*cc = (struct code_cache){ 0 };
}

struct py_code *code_cache_get(struct code_cache *cc, uint32_t id)
{
	return id < cc->ncodes ? &cc->codes[id] : NULL;
}

static struct py_code *lookup(struct code_cache *cc, uintptr_t addr)
{
	uint32_t id;

	return code_index_get(&cc->index, addr, &id) ? &cc->codes[id] : NULL;
}

/* ---- fingerprints ------------------------------------------------------ */

size_t code_fp_len(const struct py_offsets *o)
{
	return o->co_linetable + 8 - CODE_FP_START;
}

/* What identifies a code object beyond its address: its size, first line
 * and the objects it points to.  `region` holds code_fp_len() bytes read
 * at code + CODE_FP_START.  Fields that change while the code runs
 * (warm-up counters, flags) are left out. */
static void code_fingerprint(const struct py_offsets *o, const uint8_t *region,
                             uint64_t fp[PY_CODE_FP_WORDS])
{
	fp[0] = rd64(region, 16 - CODE_FP_START);              /* ob_size */
	fp[1] = rd32(region, o->co_firstlineno - CODE_FP_START);
	fp[2] = rd64(region, 24 - CODE_FP_START);              /* co_consts */
	fp[3] = rd64(region, 32 - CODE_FP_START);              /* co_names */
	fp[4] = rd64(region, o->co_filename - CODE_FP_START);
	fp[5] = rd64(region, o->co_name - CODE_FP_START);
	fp[6] = rd64(region, o->co_qualname - CODE_FP_START);
	fp[7] = rd64(region, o->co_linetable - CODE_FP_START);
}

bool code_fp_matches(const struct py_offsets *o, const struct py_code *c,
                     const uint8_t *region)
{
	uint64_t fp[PY_CODE_FP_WORDS];

	code_fingerprint(o, region, fp);
	return memcmp(fp, c->fp, sizeof(fp)) == 0;
}

/* ---- reading a code object --------------------------------------------- */

/* A slot for a new code: a forgotten code's, else a new one at the end. */
static struct py_code *code_append(struct code_cache *cc)
{
	if (cc->nfree > 0) {
		uint32_t id = cc->free_ids[--cc->nfree];

		memset(&cc->codes[id], 0, sizeof(cc->codes[0]));
		cc->codes[id].id = id;
		return &cc->codes[id];
	}
	if (cc->ncodes == cc->codes_cap) {
		size_t ncap = cc->codes_cap ? cc->codes_cap * 2 : 256;
		struct py_code *nv = realloc(cc->codes, ncap * sizeof(*nv));

		if (nv == NULL)
			return NULL;
		cc->codes = nv;
		cc->codes_cap = ncap;
	}
	memset(&cc->codes[cc->ncodes], 0, sizeof(cc->codes[0]));
	cc->codes[cc->ncodes].id = (uint32_t)cc->ncodes;
	return &cc->codes[cc->ncodes++];
}

/* Which code units are call instructions.  The target specialises its
 * bytecode as it runs, but only within an instruction's family, so a copy
 * taken once stays right.  `have` bytes of bytecode are at `bytes`; a
 * longer code is read whole. */
static uint8_t *call_bitmap(const struct code_cache *cc, uintptr_t addr,
                            const uint8_t *bytes, size_t have, int32_t code_bytes)
{
	const struct py_offsets *o = cc->o;
	size_t units = (size_t)code_bytes / 2;
	uint8_t *bits, *whole = NULL;

	if (cc->no_calls || o->ncall_ops == 0 || (size_t)code_bytes > MAX_BYTECODE)
		return NULL;
	if ((size_t)code_bytes > have) {
		whole = malloc((size_t)code_bytes);
		if (whole == NULL ||
		    remote_read(cc->pid, addr + o->co_code_adaptive, whole, (size_t)code_bytes) != 0) {
			free(whole);
			return NULL;
		}
		bytes = whole;
	}
	bits = calloc((units + 7) / 8, 1);
	for (size_t i = 0; bits != NULL && i < units; i++)
		if (py_offsets_is_call(o, bytes[2 * i]))
			bits[i / 8] |= (uint8_t)(1u << (i % 8));
	free(whole);
	return bits;
}

/* Store tmp, read at addr, in a slot of its own and index it; the code it
 * supersedes at that address (old_id, or -1) is released. */
static struct py_code *code_store(struct code_cache *cc, struct py_code *tmp,
                                  int64_t old_id)
{
	struct py_code *c = code_append(cc); /* may move cc->codes: ids, not
	                                        pointers, across it */

	if (c == NULL || code_index_put(&cc->index, tmp->addr, c->id) != 0) {
		if (c != NULL && c->id + 1 == cc->ncodes)
			cc->ncodes--;
		else if (c != NULL) /* popped from free_ids, which has room */
			cc->free_ids[cc->nfree++] = c->id;
		code_release(tmp);
		return NULL;
	}
	if (old_id >= 0)
		code_release(&cc->codes[old_id]);
	tmp->id = c->id;
	*c = *tmp;
	return c;
}

/* Read a code object never seen at this address (or whose old entry failed
 * its check).  NULL if it is not a readable code object. */
static struct py_code *code_read(struct code_cache *cc, uintptr_t addr, uint64_t tick)
{
	const struct py_offsets *o = cc->o;
	uint8_t head[PY_CODE_HEAD_MAX + CODE_SPEC_BYTES];
	struct py_code tmp = { .addr = addr, .valid = true, .verified_tick = tick };
	struct py_code *old;
	int64_t units;
	/* A small code object near the end of a mapping cannot be read with
	 * the speculative tail: then the header alone. */
	size_t have = CODE_SPEC_BYTES;

	if (remote_read(cc->pid, addr, head, o->co_code_adaptive + have) != 0) {
		have = 0;
		if (remote_read(cc->pid, addr, head, o->co_code_adaptive) != 0)
			return NULL;
	}
	if (cc->pycode_type != 0 && rd64(head, 8) != cc->pycode_type)
		return NULL;
	units = (int64_t)rd64(head, 16);
	if (units <= 0 || units > (1 << 24))
		return NULL;
	tmp.code_bytes = (int32_t)(units * 2);
	tmp.firstlineno = (int)rd32(head, o->co_firstlineno);
	code_fingerprint(o, head + CODE_FP_START, tmp.fp);
	tmp.qualname = py_str_read(cc->pid, o, tmp.fp[6]);
	tmp.filename = py_str_read(cc->pid, o, tmp.fp[4]);
	if (tmp.qualname == NULL || tmp.filename == NULL || tmp.firstlineno < 0) {
		cc->why = tmp.firstlineno < 0 ? SAMPLE_ERR_CODE : SAMPLE_ERR_STRING;
		code_release(&tmp);
		return NULL;
	}
	old = lookup(cc, addr);
	if (old != NULL && old->code_bytes == tmp.code_bytes &&
	    old->firstlineno == tmp.firstlineno &&
	    memcmp(old->fp, tmp.fp, sizeof(tmp.fp)) == 0) {
		code_release(&tmp);
		old->valid = true;
		old->verified_tick = tick;
		return old;
	}
	tmp.linetable = py_bytes_read(cc->pid, o, tmp.fp[7], &tmp.linetable_len);
	tmp.call_bits = call_bitmap(cc, addr, head + o->co_code_adaptive, have, tmp.code_bytes);
	return code_store(cc, &tmp, old != NULL ? (int64_t)old->id : -1);
}

struct py_code *code_cache_resolve_slow(struct code_cache *cc, uintptr_t code_addr,
                                        int64_t off, uint64_t tick)
{
	struct py_code *c = lookup(cc, code_addr);

	/* An offset past the cached code's end: the address now holds
	 * another code object. */
	if (c != NULL && c->valid && (off < -2 || off >= c->code_bytes))
		c->valid = false;
	cc->why = SAMPLE_ERR_CODE; /* unless code_read blames a string */
	if (c == NULL || !c->valid)
		c = code_read(cc, code_addr, tick);
	if (c == NULL || off < -2 || off >= c->code_bytes)
		return NULL;
	c->seen_tick = tick;
	return c;
}

bool py_code_in_call(const struct py_code *c, int32_t off)
{
	int32_t unit = off / 2;

	return c->call_bits != NULL && off >= 0 && off < c->code_bytes &&
	       (c->call_bits[unit / 8] >> (unit % 8)) & 1;
}

/* ---- forgetting -------------------------------------------------------- */

/* Under code churn (exec, templates) new code objects come for ever, and
 * most are freed by the target soon after.  A code not listed on any
 * stack for PY_READER_CODE_IDLE_S is forgotten: its memory freed, its
 * slot (and id) reused.  Only codes idle that long go, so no thread's
 * check list or this tick's frames can name one. */
void code_cache_forget_idle(struct code_cache *cc, uint64_t tick)
{
	const size_t nlooks = sizeof(cc->forget_ticks) / sizeof(cc->forget_ticks[0]);
	uint64_t now = clock_now_ns(), before;

	if (now < cc->next_forget_ns)
		return;
	cc->next_forget_ns = now + CODE_FORGET_PERIOD_S * 1000000000ull;
	before = cc->forget_ticks[cc->forget_pos]; /* the tick nlooks looks ago */
	cc->forget_ticks[cc->forget_pos] = tick;
	cc->forget_pos = (cc->forget_pos + 1) % nlooks;
	if (before == 0 || cc->index.cap == 0)
		return;
	if (cc->free_cap < cc->ncodes) {
		uint32_t *nf = realloc(cc->free_ids, cc->ncodes * sizeof(*nf));

		if (nf == NULL)
			return;
		cc->free_ids = nf;
		cc->free_cap = cc->ncodes;
	}
	code_index_clear(&cc->index);
	cc->nfree = 0;
	for (size_t i = 0; i < cc->ncodes; i++) {
		struct py_code *c = &cc->codes[i];

		if (c->addr != 0 && c->seen_tick < before) {
			code_release(c); /* also frees what a superseded code kept */
			c->addr = 0;
		}
		if (c->addr == 0) {
			cc->free_ids[cc->nfree++] = c->id;
			continue;
		}
		if (c->qualname != NULL) /* the code at its address now: the
		                            index had room for it before */
			(void)code_index_put(&cc->index, c->addr, c->id);
	}
}
