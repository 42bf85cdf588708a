/* code_cache.h - the target's code objects, read once and kept by address:
 * qualified name, file name, first line, line table and which instructions
 * are calls, plus the fingerprint that tells a cached code from a new one
 * the target allocated at the same address once the old one was freed.
 * Codes idle for PY_READER_CODE_IDLE_S are forgotten (code churn).
 *
 * Layout assumption (CPython 3.11+): the bytecode is inline at
 * co_code_adaptive and ob_size counts its code units.  Used only by the
 * sampler thread, through py_reader. */
#ifndef PYTOP_CODE_CACHE_H
#define PYTOP_CODE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/code_index.h"
#include "cpython/py_offsets.h"
#include "sample_errors.h"

/* A code object not seen on any stack for this long is forgotten (code
 * churn: exec'd and compiled code comes and goes); seen again, it is read
 * afresh and gets a new slot, whose `sent` is false, so the sampler
 * defines it again under a new session id (code_table.h says why the
 * aggregator may then drop the old one). */
#define PY_READER_CODE_IDLE_S 10
/* Idle codes are looked for this often. */
#define CODE_FORGET_PERIOD_S 2
#define PY_CODE_FP_WORDS 8

/* A code object as read once from the target.  Owned by the cache. */
struct py_code {
	uintptr_t addr;
	uint32_t id;           /* index into the cache; a forgotten code's
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

struct code_cache {
	pid_t pid;
	const struct py_offsets *o;  /* borrowed from the reader */
	uintptr_t pycode_type;       /* PyCode_Type in the target, 0 unknown */
	bool no_calls;               /* skip the call bitmaps */
	enum sample_error why;       /* why the last resolve found no code:
	                                SAMPLE_ERR_CODE or _STRING */
	struct py_code *codes;       /* owned, by id */
	size_t ncodes, codes_cap;
	struct code_index index;     /* address -> id of the code there now */
	uint32_t *free_ids;          /* owned: slots of forgotten codes */
	size_t nfree, free_cap;
	uint64_t next_forget_ns;     /* when to look for idle codes next */
	uint64_t forget_ticks[PY_READER_CODE_IDLE_S / CODE_FORGET_PERIOD_S];
	size_t forget_pos;           /* the tick at the last few looks, oldest
	                                at forget_pos */
	uintptr_t last_addr;         /* the last code resolved, and its slot: */
	uint32_t last_id;            /* a recursion's frames run the same code */
};

int code_cache_init(struct code_cache *cc, pid_t pid, const struct py_offsets *o,
                    uintptr_t pycode_type);
void code_cache_destroy(struct code_cache *cc);

/* The code in slot id, or NULL past the last slot. */
struct py_code *code_cache_get(struct code_cache *cc, uint32_t id);

/* The code object at code_addr for a frame at byte offset `off` into its
 * bytecode, read now if it is not cached, no longer valid, or too short
 * for `off` (then the address holds another code).  NULL when it is not a
 * readable code object or `off` lies outside it.  Marks it seen at tick. */
struct py_code *code_cache_resolve_slow(struct code_cache *cc, uintptr_t code_addr,
                                        int64_t off, uint64_t tick);
/* Inline for the common case, a valid cached code (once per frame per
 * tick); everything else goes to code_cache_resolve_slow. */
static inline struct py_code *code_cache_resolve(struct code_cache *cc,
                                                 uintptr_t code_addr,
                                                 int64_t off, uint64_t tick)
{
	uint32_t id = cc->last_id;
	struct py_code *c;

	/* The slot still holds that address's valid code: no index lookup. */
	if ((code_addr == cc->last_addr && id < cc->ncodes && cc->codes[id].addr == code_addr) ||
	    code_index_get(&cc->index, code_addr, &id)) {
		c = &cc->codes[id];
		if (c->valid && off >= -2 && off < c->code_bytes) {
			c->seen_tick = tick;
			cc->last_addr = code_addr;
			cc->last_id = id;
			return c;
		}
	}
	return code_cache_resolve_slow(cc, code_addr, off, tick);
}

/* Every CODE_FORGET_PERIOD_S, forget codes not seen for
 * PY_READER_CODE_IDLE_S: no thread's check list or current frames can
 * name one. */
void code_cache_forget_idle(struct code_cache *cc, uint64_t tick);

/* Whether the instruction at byte offset `off` is a call (unknown: no). */
bool py_code_in_call(const struct py_code *c, int32_t off);

/* The fingerprint is re-read every tick for the codes on a stack: these
 * bytes from code + CODE_FP_START hold all of it (py_offsets_fit keeps
 * every code field at or after CODE_FP_START). */
#define CODE_FP_START PY_OBJECT_HEAD
size_t code_fp_len(const struct py_offsets *o);
/* Whether `region` (code_fp_len bytes read at c->addr + CODE_FP_START)
 * still shows the code c was read as. */
bool code_fp_matches(const struct py_offsets *o, const struct py_code *c,
                     const uint8_t *region);

#endif
