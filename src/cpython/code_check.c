/* code_check.c - see code_check.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/code_check.h"

#include <stdlib.h>
#include <sys/uio.h>

#include "target/remote_mem.h"

int code_checks_init(struct code_checks *ck, struct mem_region *mem)
{
	ck->k = mem_region_alloc(mem, MAX_CHECKS * sizeof(*ck->k));
	ck->n = 0;
	return ck->k != NULL ? 0 : -1;
}

void code_checks_queue(struct code_checks *ck, struct code_cache *cc,
                       struct thread_slot *t, uint64_t tick,
                       struct tick_arena *arena, struct scatter *s)
{
	size_t len = code_fp_len(cc->o);

	for (size_t i = 0; i < t->ncheck && ck->n < MAX_CHECKS && scatter_room(s, 1); i++) {
		struct py_code *c = &cc->codes[t->check_ids[i]];
		struct code_check *k = &ck->k[ck->n];

		if (!c->valid || c->verified_tick == tick)
			continue;
		k->buf = tick_arena_alloc(arena, len);
		if (k->buf == NULL)
			break;
		k->id = c->id;
		c->verified_tick = tick; /* queued: do not queue twice */
		scatter_add(s, k->buf, c->addr + CODE_FP_START, len, &k->ok);
		ck->n++;
	}
	t->ncheck = 0;
}

void code_checks_apply(struct code_checks *ck, struct code_cache *cc)
{
	for (size_t i = 0; i < ck->n; i++) {
		const struct code_check *k = &ck->k[i];
		struct py_code *c = &cc->codes[k->id];

		if (!k->ok) { /* unknown: code_checks_verify checks it again */
			c->verified_tick = 0;
			continue;
		}
		if (!code_fp_matches(cc->o, c, k->buf)) {
			c->valid = false;
			c->verified_tick = 0;
		}
	}
	ck->n = 0;
}

static void mark_users_torn(struct thread_slot *slots, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++) {
		struct thread_slot *t = &slots[i];

		for (uint32_t j = 0; t->out.status == PY_THREAD_OK && j < t->out.nframes; j++)
			if (t->frames[j].code_id == id)
				py_sample_fail(&t->out, SAMPLE_ERR_CODE_CHANGED);
	}
}

/* Frame j of t, which named the replaced code, names `now` instead (the
 * leaf's call flag taken from it); false when the frame's offset lies
 * outside it (then the frame never ran it). */
static bool rename_frame(struct thread_slot *t, uint32_t j, const struct py_code *now)
{
	struct rec_frame *f = &t->frames[j];

	if (f->instr_offset < -2 || f->instr_offset >= now->code_bytes)
		return false;
	f->code_id = now->id;
	if (j == 0) {
		t->out.flags &= (uint16_t)~SAMPLE_IN_CALL;
		if (py_code_in_call(now, f->instr_offset))
			t->out.flags |= SAMPLE_IN_CALL;
	}
	return true;
}

/* The code old_id, on this tick's stacks, was replaced at its address:
 * the check after the walk read `seen` there.  Read the code there once
 * more; if it is the one the check saw, the frames that named the old
 * code name it (the frames themselves, their addresses and offsets, stay
 * those of the tick's walk: nothing of the stack is read again, so the
 * frames older chunks gave, kept or copied, keep the validity the walk
 * checked).  A code that changed again by then, or cannot be read, tears
 * its users' samples: no second retry. */
static void retry_users(struct code_cache *cc, struct thread_slot *slots, size_t n,
                        uint32_t old_id, const uint8_t *seen, uint64_t tick)
{
	struct py_code *now = code_cache_resolve_slow(cc, cc->codes[old_id].addr, -2, tick);

	if (now == NULL || now->id == old_id || !code_fp_matches(cc->o, now, seen)) {
		mark_users_torn(slots, n, old_id);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct thread_slot *t = &slots[i];
		bool used = false;

		for (uint32_t j = 0; t->out.status == PY_THREAD_OK && j < t->out.nframes; j++) {
			if (t->frames[j].code_id != old_id)
				continue;
			used = true;
			if (!rename_frame(t, j, now))
				py_sample_fail(&t->out, SAMPLE_ERR_CODE_CHANGED);
		}
		if (used && t->out.status == PY_THREAD_OK)
			code_checks_list(t, now, tick);
	}
}

void code_checks_verify(struct code_cache *cc, struct thread_slot *slots,
                        size_t n, uint64_t tick, struct tick_arena *arena)
{
	enum { BATCH = 256 };
	struct iovec local[BATCH], remote[BATCH];
	uint8_t *bufs[BATCH];
	uint32_t ids[BATCH];
	size_t len = code_fp_len(cc->o);
	int nq = 0, ok;

	for (size_t i = 0; i < n; i++) {
		struct thread_slot *t = &slots[i];

		for (size_t k = 0; t->out.status == PY_THREAD_OK && k < t->ncheck && nq < BATCH; k++) {
			struct py_code *c = &cc->codes[t->check_ids[k]];

			if (c->verified_tick == tick || (bufs[nq] = tick_arena_alloc(arena, len)) == NULL)
				continue;
			c->verified_tick = tick;
			ids[nq] = c->id;
			local[nq] = (struct iovec){ bufs[nq], len };
			remote[nq] = (struct iovec){ (void *)(c->addr + CODE_FP_START), len };
			nq++;
		}
	}
	if (nq == 0)
		return;
	ok = remote_readv(cc->pid, local, remote, nq);
	for (int k = 0; k < nq; k++) {
		struct py_code *c = &cc->codes[ids[k]]; /* retry_users may move
		                                           cc->codes: not kept */

		if (k < ok && code_fp_matches(cc->o, c, bufs[k]))
			continue;
		c->valid = false;
		c->verified_tick = 0;
		if (k < ok)
			retry_users(cc, slots, n, ids[k], bufs[k], tick);
		else
			mark_users_torn(slots, n, ids[k]);
	}
}
