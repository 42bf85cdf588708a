/* aggregator.c - records in, stacks counted (see aggregator.h).
 *
 * Counting is one way, keyed by dimension: each sample's stack is
 * interned in the stack table (stack_table.h) through its thread's memo
 * and counted in its (stack, thread, process) cell; the split item
 * carries the cell, so every share of the sample's time goes there.  The
 * functions, lines and callees of a snapshot, global or of one thread or
 * process, are counted from the cells (stack_derive.h).
 *
 * Rows: one per function (key: interned qualname + filename), one per
 * source line (key: interned filename + line).  They name what the
 * stacks' frames are and hold only what the fold policy ranks them by
 * (struct agg_use: samples since the reset, once per sample, and the
 * last sample's serial).  A reset only zeroes that, so the frame cache
 * below stays valid across resets.  Rows go only when there are too many
 * of them (code churn: see "bounded memory" below): the fewest-sampled
 * are folded into row 0 of each kind, "[other]", which no code ever
 * resolves to, and their frames in the stacks are marked folded.
 *
 * Hot path: a frame (code_id, instr_offset) is resolved to its pair of row
 * indices through one frame-cache lookup; only the first time a frame is
 * seen does it cost a code lookup, a line-table search and two row-key
 * lookups.  A thread whose stack is the one of its previous sample (its
 * memo says so with one memcmp) takes the frames it resolved then, with
 * no lookup at all, unless the frame cache was cleared since (a sweep:
 * rows renumbered, codes gone, strings rehomed; agg_forget_frames).
 * "Once per sample" uses a per-row stamp holding the serial of the
 * last sample that counted it, so deep stacks cost O(depth).  In steady
 * state the per-sample path allocates nothing.
 *
 * The stack table folds at the sweep (over its caps, or when codes
 * went), and the cells queued samples and each thread's previous sample
 * name are renumbered then.
 *
 * Threads (their rows, names, state, ageing): aggregator_threads.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/aggregator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "clock.h"
#include "profile/aggregator_priv.h"
#include "transport/record.h"

/* ---- small helpers ----------------------------------------------------- */

/* Room for one more item; false on OOM. */
bool agg_vec_reserve(struct agg_vec *v, size_t elem)
{
	if (v->n < v->cap)
		return true;
	size_t ncap = v->cap ? v->cap * 2 : 64;
	void *ni = realloc(v->items, ncap * elem);
	if (ni == NULL)
		return false;
	v->items = ni;
	v->cap = ncap;
	return true;
}


static uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* ---- lifetime ---------------------------------------------------------- */

/* Bounded memory under code churn (see "bounded memory" below). */
#define AGG_SOFT_FUNCS 2048         /* beyond: idle function rows fold */
#define AGG_SOFT_LINES 2048
#define AGG_MAX_FUNCS 65536         /* beyond: the fewest-sampled fold */
#define AGG_MAX_LINES 131072
/* Threads aged out (AGG_KEEP_GONE_THREADS) before their names are worth a
 * rehome of the string table. */
#define AGG_REHOME_GONE_THREADS 1024
/* A row not sampled in the last AGG_AGE_SAMPLES samples (two minutes at
 * 1 kHz) that holds at most 1/AGG_AGE_RARE of all samples (it shows as
 * 0.0 %) folds even under the soft caps: under code churn the tables
 * otherwise filled to their soft caps over half an hour, a row at a time
 * (the soak's RSS grew for 20 minutes); looked at every 1/8 of that. */
#define AGG_AGE_SAMPLES 120000u
#define AGG_AGE_RARE 1000u
#define AGG_SWEEP_NS 2000000000ull  /* a sweep every 2 s: idle = not
                                       sampled since the sweep before */
#define AGG_CODE_IDLE_EPOCHS 10     /* codes go after 18 s unused: the
                                       sampler forgets a code after
                                       PY_READER_CODE_IDLE_S (10 s), and a
                                       sample may still be in the ring */

/* Row 0 of functions and of lines: "[other]", the folded rows. */
static bool agg_add_other_rows(struct aggregator *a)
{
	if (!agg_vec_reserve(&a->funcs, sizeof(struct agg_func)) ||
	    !agg_vec_reserve(&a->lines, sizeof(struct agg_line)))
		return false;
	agg_funcs(a)[a->funcs.n++] = (struct agg_func){
		.name = a->other, .file = a->empty, .module = a->empty };
	agg_lines(a)[a->lines.n++] = (struct agg_line){
		.name = a->other, .file = a->empty, .module = a->empty };
	return true;
}

struct aggregator *aggregator_new(bool split)
{
	struct aggregator *a = calloc(1, sizeof *a);
	if (a == NULL)
		return NULL;
	a->no_split = !split;
	hashmap_init(&a->func_by_key);
	hashmap_init(&a->line_by_key);
	hashmap_init(&a->frame_cache);
	hashmap_init(&a->thread_by_tid);
	hashmap_init(&a->thread_names);
	hashmap_init(&a->thread_py_names);
	hashmap_init(&a->report_by_pid);
	hashmap_init(&a->reports_win_by_pid);
	a->strings = strtab_new();
	a->pstrings = strtab_new();
	if (a->strings == NULL || a->pstrings == NULL)
		goto fail;
	a->procs = proc_table_new(a->pstrings);
	if (a->procs == NULL)
		goto fail;
	a->codes = code_table_new(a->strings);
	if (a->codes == NULL)
		goto fail;
	a->empty = strtab_intern(a->strings, "", 0, NULL);
	a->other = strtab_intern(a->strings, "[other]", 7, NULL);
	if (a->empty == NULL || a->other == NULL || !agg_add_other_rows(a))
		goto fail;
	if (!stack_table_init(&a->stacks))
		goto fail;
	folded_rows_init(&a->folded);
	a->next_sweep_ns = clock_now_ns() + AGG_SWEEP_NS;
	a->rows_gen = 1; /* a new thread's resolved frames (gen 0) are not */
	return a;
fail:
	aggregator_free(a);
	return NULL;
}

void aggregator_free(struct aggregator *a)
{
	if (a == NULL)
		return;
	free(a->funcs.items);
	free(a->lines.items);
	for (size_t i = 0; i < a->threads.n; i++)
		agg_thread_free(&agg_threads(a)[i]);
	free(a->threads.items);
	stack_table_destroy(&a->stacks);
	folded_rows_destroy(&a->folded);
	free(a->sframes);
	proc_table_free(a->procs);
	hashmap_destroy(&a->report_by_pid);
	hashmap_destroy(&a->reports_win_by_pid);
	free(a->scratch);
	hashmap_destroy(&a->func_by_key);
	hashmap_destroy(&a->line_by_key);
	hashmap_destroy(&a->frame_cache);
	hashmap_destroy(&a->thread_by_tid);
	hashmap_destroy(&a->thread_names);
	hashmap_destroy(&a->thread_py_names);
	code_table_free(a->codes);
	strtab_free(a->strings);
	strtab_free(a->pstrings);
	for (size_t i = 0; i < a->nretired; i++)
		strtab_free(a->retired[i]);
	free(a->retired);
	free(a);
}

bool aggregator_define_native(struct aggregator *a, uint32_t code_id, const char *name,
                              const char *file, int line, const char *module)
{
	enum code_table_add r = code_table_add_native(a->codes, code_id, name, file, line, module);
	if (r == CODE_ADDED || r == CODE_DUPLICATE)
		return true;
	a->bad++;
	return false;
}

uint64_t aggregator_bad(const struct aggregator *a)
{
	return a->bad;
}

/* ---- rows -------------------------------------------------------------- */

/* Index of the function row of a code object, created on first use;
 * false on OOM. */
static bool agg_func_row(struct aggregator *a, const struct code_info *ci,
                         uint32_t *out)
{
	uint64_t key = pair_key(ci->qualname_sid, ci->filename_sid), idx;
	if (hashmap_get(&a->func_by_key, key, &idx)) {
		/* Several codes share this row: report the smallest first
		 * line, so the answer does not depend on sampling order. */
		struct agg_func *f = &agg_funcs(a)[idx];
		if (ci->firstlineno < f->line)
			f->line = ci->firstlineno;
		*out = (uint32_t)idx;
		return true;
	}
	if (a->funcs.n >= UINT32_MAX ||
	    !agg_vec_reserve(&a->funcs, sizeof(struct agg_func)) ||
	    !hashmap_put(&a->func_by_key, key, a->funcs.n))
		return false;
	agg_funcs(a)[a->funcs.n] = (struct agg_func){
		.key = key,
		.name = ci->qualname,
		.file = ci->filename,
		.line = ci->firstlineno,
		.module = ci->module,
		.native = ci->native,
	};
	*out = (uint32_t)a->funcs.n++;
	return true;
}

static bool agg_line_row(struct aggregator *a, const struct code_info *ci,
                         int line, uint32_t *out)
{
	uint64_t key = pair_key(ci->filename_sid, (uint32_t)line), idx;
	if (hashmap_get(&a->line_by_key, key, &idx)) {
		*out = (uint32_t)idx;
		return true;
	}
	if (a->lines.n >= UINT32_MAX ||
	    !agg_vec_reserve(&a->lines, sizeof(struct agg_line)) ||
	    !hashmap_put(&a->line_by_key, key, a->lines.n))
		return false;
	agg_lines(a)[a->lines.n] = (struct agg_line){
		.key = key,
		.name = ci->qualname,
		.file = ci->filename,
		.line = line,
		.module = ci->module,
		.native = ci->native,
	};
	*out = (uint32_t)a->lines.n++;
	return true;
}

/* ---- memory kept over the last minute ---------------------------------- */

/* A boundary passed: every cell (and folded entry) records its net
 * growth. */
static void agg_kept_mark_all(struct aggregator *a)
{
	stack_table_mark_kept(&a->stacks, &a->kept_clock);
	folded_rows_mark_kept(&a->folded, &a->kept_clock);
}

/* ---- the Python / native / system split ------------------------------- */

/* Add d to the sample of `it`'s cell (or, folded, its rows' entries),
 * its thread and the total; to the window's figures too when the sample
 * counted in this window (a sample settled after its window closed
 * changes only the totals). */
static void agg_split_apply(struct aggregator *a, struct agg_thread *t,
                            const struct split_item *it,
                            const struct snap_split *d)
{
	bool win = it->win == a->win;

	stack_table_split(&a->stacks, it->cell, d, win);
	agg_folded_split(a, it, d, win);
	snap_split_add(&t->split, d);
	snap_split_add(&a->split, d);
	if (win) {
		snap_split_add(&t->split_win, d);
		snap_split_add(&a->split_win, d);
	}
}

/* Share system fraction f and run-queue fraction w out over the thread's
 * queued samples. */
static void agg_settle(struct aggregator *a, struct agg_thread *t, double f, double w)
{
	struct split_queue *q = &t->queue;
	struct split_share nat, py;
	double on_cpu = 1 - (w < 0 ? 0 : w > 1 ? 1 : w);
	cpu_split_shares(q->n - q->n_gil, q->n_native, f, &nat, &py);
	for (size_t i = 0; i < q->n; i++) {
		const struct split_share *sh = q->items[i].native ? &nat : &py;
		struct snap_split d = { .cpu_wait = 1 - on_cpu };
		if (q->items[i].gil) {
			d.gil_wait = on_cpu;
		} else {
			d.python = sh->python * on_cpu;
			d.native = sh->native * on_cpu;
			d.system = sh->system * on_cpu;
		}
		agg_split_apply(a, t, &q->items[i], &d);
	}
	split_queue_clear(q);
}

/* What is still queued, with the thread's lifetime ratios. */
void agg_settle_lifetime(struct aggregator *a, struct agg_thread *t)
{
	if (t->queue.n > 0)
		agg_settle(a, t, split_queue_lifetime(&t->queue),
		           split_queue_take_wait(&t->queue));
}

/* Count every queued sample as its class, less the run-queue share the
 * thread's counters tell so far (sign +1), or take that back (-1): so
 * that a snapshot's kinds add up to its own samples while the system and
 * run-queue shares of the newest samples are not settled yet. */
void agg_provisional(struct aggregator *a, double sign)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++) {
		double w = split_queue_wait_share(&t[i].queue);
		double rest = sign * (1 - w);
		for (size_t k = 0; k < t[i].queue.n; k++) {
			const struct split_item *it = &t[i].queue.items[k];
			struct snap_split d = {
				.python = it->native || it->gil ? 0 : rest,
				.native = it->native ? rest : 0,
				.gil_wait = it->gil ? rest : 0,
				.cpu_wait = sign * w };
			agg_split_apply(a, &t[i], it, &d);
		}
	}
}


/* The global row of a function or line key (0 is "[other]"'s). */
static bool agg_row_of_key(const struct hashmap *by_key, uint64_t key, uint32_t *row)
{
	uint64_t v;

	if (key == 0) {
		*row = 0;
		return true;
	}
	if (!hashmap_get(by_key, key, &v))
		return false;
	*row = (uint32_t)v;
	return true;
}

static struct agg_prev_rows agg_prev_of(const struct aggregator *a, const struct split_item *it)
{
	struct agg_prev_rows p = { .valid = true, .fkey = agg_funcs(a)[it->func].key,
	                           .cell = it->cell };

	if (it->line != AGG_NO_LINE) {
		p.has_line = true;
		p.lkey = agg_lines(a)[it->line].key;
	}
	if (it->caller != AGG_NO_ROW) {
		p.has_caller = true;
		p.caller_lkey = agg_lines(a)[it->caller].key;
	}
	return p;
}

/* The rows of the thread's previous sample, as they are numbered now;
 * false when its function row is gone (folded, or the strings rehomed). */
static bool agg_prev_item(struct aggregator *a, const struct agg_thread *t,
                          struct split_item *it)
{
	const struct agg_prev_rows *p = &t->prev;

	*it = (struct split_item){ .line = AGG_NO_LINE, .caller = AGG_NO_ROW,
	                           .cell = p->cell };
	if (!p->valid || !agg_row_of_key(&a->func_by_key, p->fkey, &it->func))
		return false;
	if (p->has_line && !agg_row_of_key(&a->line_by_key, p->lkey, &it->line))
		it->line = AGG_NO_LINE;
	if (p->has_caller && !agg_row_of_key(&a->line_by_key, p->caller_lkey, &it->caller))
		it->caller = AGG_NO_ROW;
	return true;
}

/* RSS the thread gave back since its previous sample goes where that
 * sample was: a free is quick and ends what that code was doing (a
 * rebinding, a del, a return), and by the tick that sees the drop the
 * thread has moved on to code that did not free it.  Growth stays with
 * the current sample: faulting pages in is slow, so the tick usually
 * lands in the code that does it. */
static void agg_charge_shrink(struct aggregator *a, struct agg_thread *t,
                              const struct rec_sample *s, const struct split_item *it)
{
	struct snap_split d = { .mem_shrink = s->mem_shrink };
	struct split_item prev;

	if (s->mem_shrink > 0)
		agg_split_apply(a, t, agg_prev_item(a, t, &prev) ? &prev : it, &d);
	t->prev = agg_prev_of(a, it);
}

/* Waiting for the GIL: the interpreter says the thread asked for it, or
 * the thread runs bytecode (not in a call, which may have released it)
 * without holding it, whether it is woken and spinning or asleep. */
static bool agg_gil_wait(const struct rec_sample *s)
{
	if (s->flags & SAMPLE_GIL_WAIT)
		return true;
	return (s->flags & SAMPLE_GIL_KNOWN) && !(s->flags & SAMPLE_HAS_GIL) &&
	       !(s->flags & SAMPLE_IN_CALL);
}

/* Charge the sample's memory at once; classify its time: off CPU it is
 * waiting, for the GIL or something else; runnable, it waits in the
 * thread's queue for its run-queue share (and on a CPU, but for a GIL
 * waiter, its system share). */
static void agg_split_sample(struct aggregator *a, struct agg_thread *t,
                             const struct rec_sample *s,
                             struct split_item it)
{
	struct snap_split d = { .mem_growth = s->mem_growth,
	                        .minflt = s->minflt, .majflt = s->majflt };
	double f;
	it.gil = agg_gil_wait(s);
	it.native = it.native && !it.gil;

	if (mem_kept_due(&a->kept_clock, s->time_ns))
		agg_kept_mark_all(a);
	agg_charge_shrink(a, t, s, &it);
	if (!(s->flags & SAMPLE_RUNNING)) {
		*(it.gil ? &d.gil_wait : &d.waiting) = 1;
		agg_split_apply(a, t, &it, &d);
		return;
	}
	agg_split_apply(a, t, &it, &d);
	split_queue_sched(&t->queue, s->run_ns, s->delay_ns);
	if (!split_queue_push(&t->queue, it)) {
		d = (struct snap_split){ .python = !it.native && !it.gil,
		                         .native = it.native, .gil_wait = it.gil };
		agg_split_apply(a, t, &it, &d);
		return;
	}
	if (split_queue_due(&t->queue, s->cpu_user_ns, s->cpu_sys_ns, &f))
		agg_settle(a, t, f, split_queue_take_wait(&t->queue));
}

/* ---- ingest ------------------------------------------------------------ */

/* Resolve one frame to its rows; false if its code is unknown (or OOM). */
static bool agg_resolve(struct aggregator *a, struct rec_frame f,
                        struct agg_frame *out)
{
	uint64_t key = pair_key(f.code_id, (uint32_t)f.instr_offset), v;
	if (hashmap_get(&a->frame_cache, key, &v)) {
		out->func = (uint32_t)(v >> 32);
		out->line = (uint32_t)v;
		return true;
	}
	const struct code_info *ci = f.code_id == REC_MORE_FRAMES
		? code_table_more_frames(a->codes, f.instr_offset)
		: code_table_use(a->codes, f.code_id);
	if (ci == NULL)
		return false;
	int line = code_info_line(ci, f.instr_offset);
	if (!agg_func_row(a, ci, &out->func))
		return false;
	if ((ci->native || ci->marker) && line <= 0)
		out->line = AGG_NO_LINE;
	else if (!agg_line_row(a, ci, line, &out->line))
		return false;
	/* A failed cache insert only costs speed. */
	(void)hashmap_put(&a->frame_cache, key, pair_key(out->func, out->line));
	return true;
}

/* A row is on this sample: counted once per sample for the fold
 * policy. */
static void agg_use(struct agg_use *u, uint64_t serial)
{
	if (u->stamp == serial)
		return;
	u->stamp = serial;
	u->total++;
}

/* A sample whose leaf is native is a callee of its innermost Python
 * frame's line: that line's row, or AGG_NO_ROW when the leaf is not
 * native or the stack has no Python line (a native thread). */
static uint32_t agg_caller_line(const struct aggregator *a, const struct agg_frame *fr,
                                size_t nframes)
{
	const struct agg_func *funcs = agg_funcs(a);
	size_t i = 1;
	if (!funcs[fr[0].func].native)
		return AGG_NO_ROW;
	while (i < nframes && funcs[fr[i].func].native)
		i++;
	return i < nframes && fr[i].line != AGG_NO_LINE ? fr[i].line : AGG_NO_ROW;
}

void agg_forget_frames(struct aggregator *a)
{
	hashmap_clear(&a->frame_cache);
	a->rows_gen++;
}

/* The sample's thread (*t), if it has a row, and its previous stack,
 * if the sample's is the same (raw: the record's frames) and nothing was
 * renumbered or dropped since: its frames resolved then, and its node
 * (*node); else NULL.  A deep stack that stays put so costs one memcmp,
 * not a lookup per frame. */
static const struct agg_frame *agg_same_stack(struct aggregator *a, const struct rec_sample *s,
                                              const uint8_t *raw, struct agg_thread **t,
                                              uint32_t *node)
{
	uint64_t idx;
	*t = NULL;
	if (!hashmap_get(&a->thread_by_tid, (uint32_t)s->tid, &idx))
		return NULL;
	*t = &agg_threads(a)[idx];
	return (*t)->rows_gen == a->rows_gen && (*t)->nrows == s->nframes &&
	       stack_memo_same(&(*t)->memo, &a->stacks, raw, s->nframes, node) ? (*t)->rows
	                                                                        : NULL;
}

/* Resolve every frame into a->scratch before counting anything, so a
 * sample with an unknown code is dropped whole; false then. */
static bool agg_resolve_all(struct aggregator *a, const uint8_t *raw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct rec_frame f;
		memcpy(&f, raw + i * sizeof f, sizeof f);
		if (!agg_resolve(a, f, &a->scratch[i]))
			return false;
		a->frames_resolved++;
	}
	return true;
}

/* The thread keeps the frames just resolved, for its next sample
 * (agg_same_stack); on OOM it keeps none. */
static void agg_keep_rows(struct aggregator *a, struct agg_thread *t, size_t n)
{
	t->nrows = 0;
	if (n > t->rows_cap) {
		struct agg_frame *r = realloc(t->rows, n * sizeof *r);
		if (r == NULL)
			return;
		t->rows = r;
		t->rows_cap = n;
	}
	memcpy(t->rows, a->scratch, n * sizeof *t->rows);
	t->nrows = n;
	t->rows_gen = a->rows_gen;
}

static bool agg_reserve_scratch(struct aggregator *a, size_t n)
{
	if (n <= a->scratch_cap)
		return true;
	struct agg_frame *ns = realloc(a->scratch, n * sizeof *ns);
	if (ns == NULL)
		return false;
	a->scratch = ns;
	struct stack_frame *sf = realloc(a->sframes, n * sizeof *sf);
	if (sf == NULL)
		return false;
	a->sframes = sf;
	a->scratch_cap = n;
	return true;
}

/* The code id a stack frame keeps: the record's, except for the
 * "[N more frames]" marker, which is one code per bucket of N (so the
 * stack says how many frames went, and the code table can name it). */
static uint32_t agg_stack_code(struct aggregator *a, struct rec_frame f)
{
	if (f.code_id != REC_MORE_FRAMES)
		return f.code_id;
	/* Resolved a moment ago (agg_resolve): found, not made. */
	const struct code_info *ci = code_table_more_frames(a->codes, f.instr_offset);
	return ci != NULL ? ci->code_id : f.code_id;
}

/* The sample's stack, interned (its thread's memo spares a stack seen
 * last time the hashing; node: already known to be it, or
 * STACK_NO_CELL), counted in its (stack, thread) cell: the cell, or
 * STACK_NO_CELL on OOM.  raw: the record's frames, maybe unaligned; fr:
 * them resolved. */
static uint32_t agg_count_stack(struct aggregator *a, struct agg_thread *t,
                                const struct rec_sample *s, const uint8_t *raw,
                                const struct agg_frame *fr, uint32_t node)
{
	const struct agg_line *lines = agg_lines(a);
	size_t n = s->nframes;

	if (node == STACK_NO_CELL && !stack_memo_same(&t->memo, &a->stacks, raw, n, &node)) {
		for (size_t i = 0; i < n; i++) {
			struct rec_frame f;
			memcpy(&f, raw + i * sizeof f, sizeof f);
			a->sframes[i] = (struct stack_frame){ agg_stack_code(a, f),
				fr[i].line == AGG_NO_LINE ? 0 : lines[fr[i].line].line };
		}
		node = stack_table_intern_memo(&a->stacks, &t->memo, raw, a->sframes, n);
		if (node == STACK_NO_CELL)
			return STACK_NO_CELL;
	}
	return stack_table_count(&a->stacks, node, s->tid, s->pid, s->interval_ns);
}

static void agg_ingest_sample(struct aggregator *a, const uint8_t *rec,
                              size_t size)
{
	struct rec_sample s;
	if (size < sizeof s) {
		a->bad++;
		return;
	}
	memcpy(&s, rec, sizeof s);
	if ((size - sizeof s) / sizeof(struct rec_frame) < s.nframes ||
	    !agg_reserve_scratch(a, s.nframes)) {
		a->bad++;
		return;
	}
	const uint8_t *fp = rec + sizeof s;
	uint32_t node = STACK_NO_CELL;
	struct agg_thread *t;
	const struct agg_frame *fr = agg_same_stack(a, &s, fp, &t, &node);
	if (fr == NULL && !agg_resolve_all(a, fp, s.nframes)) {
		a->bad++;
		return;
	}
	if (t == NULL)
		t = agg_thread_row(a, s.tid);
	if (t == NULL) {
		a->bad++;
		return;
	}
	t->samples++;
	t->samples_win++;
	t->running = (s.flags & SAMPLE_RUNNING) != 0;
	t->seen_serial = a->report_serial;
	if (t->report == 0)
		t->pid = s.pid;
	proc_table_sample(a->procs, s.pid, s.nframes > 0);
	if (s.nframes == 0) {
		t->top_func = a->empty;
		return;
	}

	struct agg_func *funcs = agg_funcs(a);
	struct agg_line *lines = agg_lines(a);
	uint64_t serial = ++a->serial;
	a->samples++;
	a->samples_win++;
	t->py_samples++;
	t->py_samples_win++;
	if (fr == NULL) {
		fr = a->scratch;
		agg_keep_rows(a, t, s.nframes);
	}
	t->top_func = funcs[fr[0].func].name;
	uint32_t cell = agg_count_stack(a, t, &s, fp, fr, node);
	if (!a->no_split) {
		/* The own line: the innermost frame that has one (native
		 * frames without a source line have none). */
		size_t ll = 0;
		while (ll < s.nframes && fr[ll].line == AGG_NO_LINE)
			ll++;
		agg_split_sample(a, t, &s, (struct split_item){
			.func = fr[0].func,
			.line = ll < s.nframes ? fr[ll].line : AGG_NO_LINE,
			.caller = agg_caller_line(a, fr, s.nframes),
			.cell = cell, .win = a->win,
			.native = (s.flags & SAMPLE_IN_CALL) != 0 });
	}
	for (size_t i = 0; i < s.nframes; i++) {
		agg_use(&funcs[fr[i].func].use, serial);
		if (fr[i].line != AGG_NO_LINE)
			agg_use(&lines[fr[i].line].use, serial);
	}
}

void aggregator_ingest(struct aggregator *a, const void *rec, size_t len)
{
	struct rec_header h;
	if (rec == NULL || len < sizeof h) {
		a->bad++;
		return;
	}
	memcpy(&h, rec, sizeof h);
	/* Between snapshots too: a long refresh interval must not let the
	 * tables grow, and the clock is read only now and then. */
	if (++a->since_clock >= 1024) {
		a->since_clock = 0;
		agg_sweep(a);
	}
	/* Trust the smaller of the two sizes' claims: never read past len,
	 * and ignore bytes beyond the record's own size. */
	if (h.size > len || h.size < sizeof h) {
		a->bad++;
		return;
	}
	switch (h.type) {
	case REC_SAMPLE:
		agg_ingest_sample(a, rec, h.size);
		break;
	case REC_CODE_DEF:
		switch (code_table_add_record(a->codes, rec, h.size)) {
		case CODE_ADDED:
		case CODE_DUPLICATE:
			break;
		case CODE_MALFORMED:
		case CODE_NOMEM:
			a->bad++;
			break;
		}
		break;
	case REC_THREAD:
		agg_ingest_thread(a, rec, h.size);
		break;
	case REC_THREAD_PY_NAME:
		agg_ingest_thread_py_name(a, rec, h.size);
		break;
	case REC_THREADS:
		agg_ingest_threads(a, rec, h.size);
		break;
	case REC_PROCESS:
		agg_ingest_process(a, rec, h.size);
		break;
	default:
		a->bad++;
		break;
	}
}

/* ---- bounded memory -------------------------------------------------------
 * A service that compiles code at run time (templates, exec, ORMs) brings
 * new functions and lines for ever.  Beyond AGG_MAX_FUNCS function rows
 * (AGG_MAX_LINES line rows), the rows with the fewest total samples are
 * folded into row 0, "[other]", down to three quarters of the cap (so
 * folds are rare); their frames in the stack table are marked folded, so
 * the stacks count them there (stack_table_fold_frames).
 * Every AGG_SWEEP_NS the code table drops the codes the sampler no longer
 * uses.  After either, the strings still referenced move to a fresh table
 * and the old one is freed (snapshots own copies of theirs). */

/* A row's rank for keeping: not idle, then idle, then aged (agg_age),
 * then most total samples, then most recently counted, then oldest. */
struct agg_rank {
	int tier;
	uint64_t total, stamp;
	uint32_t row;
};

/* Which rows a fold may take: idle ones (not sampled since the sweep
 * before last) over the soft cap, aged ones (AGG_AGE_SAMPLES) always. */
struct agg_age {
	uint64_t idle_serial; /* stamp <= this: idle */
	uint64_t aged_serial; /* stamp <= this and total <= rare: aged */
	uint64_t rare;
};

static int agg_tier(const struct agg_use *c, const struct agg_age *g)
{
	if (g->aged_serial > 0 && c->stamp <= g->aged_serial &&
	    c->total <= g->rare)
		return 2;
	return c->stamp <= g->idle_serial;
}

static int agg_cmp_rank(const void *pa, const void *pb)
{
	const struct agg_rank *x = pa, *y = pb;
	if (x->tier != y->tier)
		return x->tier > y->tier ? 1 : -1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->stamp != y->stamp)
		return x->stamp > y->stamp ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

/* Rows are elem bytes apart, their use at offset coff. */
static const struct agg_use *agg_row_use(const struct agg_vec *v, size_t elem, size_t coff,
                                         size_t i)
{
	return (const void *)((const char *)v->items + i * elem + coff);
}

/* How many rows stay at a fold: over the soft cap `soft`, those not idle,
 * at most max; under it, all but the aged. */
static size_t agg_fold_keep(const struct agg_vec *v, size_t elem,
                            size_t coff, const struct agg_age *g,
                            size_t soft, size_t max)
{
	size_t busy = 1, young = 1; /* row 0 */
	for (size_t i = 1; i < v->n; i++) {
		int tier = agg_tier(agg_row_use(v, elem, coff, i), g);
		busy += tier == 0;
		young += tier < 2;
	}
	if (v->n <= soft)
		return young;
	return busy < max ? busy : max;
}

/* map[old row] = its new row: the `keep` best rows (row 0 among them)
 * keep their order, the rest go to row 0.  NULL on OOM. */
static uint32_t *agg_fold_map(const struct agg_vec *v, size_t elem,
                              size_t coff, const struct agg_age *g, size_t keep)
{
	uint32_t *map = calloc(v->n, sizeof *map);
	struct agg_rank *r = malloc(v->n * sizeof *r);
	if (map == NULL || r == NULL) {
		free(map);
		free(r);
		return NULL;
	}
	for (size_t i = 1; i < v->n; i++) {
		const struct agg_use *c = agg_row_use(v, elem, coff, i);
		r[i - 1] = (struct agg_rank){ agg_tier(c, g), c->total,
		                              c->stamp, (uint32_t)i };
	}
	qsort(r, v->n - 1, sizeof *r, agg_cmp_rank);
	for (size_t k = 0; k + 1 < keep && k + 1 < v->n; k++)
		map[r[k].row] = 1; /* kept: numbered below */
	free(r);
	uint32_t next = 1;
	for (size_t i = 1; i < v->n; i++)
		map[i] = map[i] ? next++ : 0;
	return map;
}

/* Fold the function rows by map: rows mapped to 0 go (row 0 stands for
 * them), kept rows move down (map[i] <= i).  Returns the rows folded that
 * had samples. */
static uint64_t agg_fold_funcs(struct aggregator *a, const uint32_t *map)
{
	struct agg_func *f = agg_funcs(a);
	uint64_t folded = 0;
	size_t n = a->funcs.n;
	hashmap_clear(&a->func_by_key);
	a->funcs.n = 1;
	for (size_t i = 1; i < n; i++) {
		if (map[i] == 0) {
			folded += f[i].use.total > 0;
			continue;
		}
		f[map[i]] = f[i];
		/* Cannot fail: the map held more keys a moment ago. */
		(void)hashmap_put(&a->func_by_key, f[map[i]].key, map[i]);
		a->funcs.n = map[i] + 1;
	}
	return folded;
}

static uint64_t agg_fold_lines(struct aggregator *a, const uint32_t *map)
{
	struct agg_line *l = agg_lines(a);
	uint64_t folded = 0;
	size_t n = a->lines.n;
	hashmap_clear(&a->line_by_key);
	a->lines.n = 1;
	for (size_t i = 1; i < n; i++) {
		if (map[i] == 0) {
			folded += l[i].use.total > 0;
			continue;
		}
		l[map[i]] = l[i];
		(void)hashmap_put(&a->line_by_key, l[map[i]].key, map[i]);
		a->lines.n = map[i] + 1;
	}
	return folded;
}

static uint32_t agg_map_row(const uint32_t *map, uint32_t row)
{
	return row == AGG_NO_ROW ? row : map[row];
}

/* Samples waiting for their system share name rows by index (for their
 * folded entries, folded_rows.h): renumber. */
static void agg_fold_queues(struct aggregator *a, const uint32_t *fmap, const uint32_t *lmap)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++)
		for (size_t k = 0; k < t[i].queue.n; k++) {
			struct split_item *it = &t[i].queue.items[k];
			it->func = fmap[it->func];
			it->line = agg_map_row(lmap, it->line);
			it->caller = agg_map_row(lmap, it->caller);
		}
}

/* The rows a fold's maps send to "[other]", for the stack table. */
struct agg_fold_maps {
	const struct aggregator *a;
	const uint32_t *fmap, *lmap;
};

/* Which of frame (code_id, line)'s rows fold (stack_table_fold_frames):
 * looked up as agg_resolve found them, before the fold renumbers them. */
static unsigned agg_frame_folds(void *ctx, uint32_t code_id, int32_t line)
{
	const struct agg_fold_maps *m = ctx;
	const struct code_info *ci = code_table_get(m->a->codes, code_id);
	unsigned bits = 0;
	uint64_t idx;
	if (ci == NULL)
		return 0; /* its stacks fold with the dead codes' */
	if (hashmap_get(&m->a->func_by_key, pair_key(ci->qualname_sid, ci->filename_sid),
	                &idx) && m->fmap[idx] == 0)
		bits |= STACK_FOLD_FUNC;
	if ((ci->native || ci->marker) && line <= 0)
		/* No line row: folded whole with its function (once its code
		 * goes, stack_table_rewrite_gone must know it had no line). */
		return bits ? bits | STACK_FOLD_NO_LINE : 0;
	if (hashmap_get(&m->a->line_by_key, pair_key(ci->filename_sid, (uint32_t)line),
	                &idx) && m->lmap[idx] == 0)
		bits |= STACK_FOLD_LINE;
	return bits;
}

/* Fold the idle rows, and beyond three quarters of the hard caps the
 * fewest-sampled.  false when there was nothing to fold, or on OOM
 * (nothing changed then). */
static bool agg_fold(struct aggregator *a)
{
	size_t fe = sizeof(struct agg_func), fo = offsetof(struct agg_func, use);
	size_t le = sizeof(struct agg_line), lo = offsetof(struct agg_line, use);
	struct agg_age g = {
		.idle_serial = a->idle_serial,
		.aged_serial = a->serial > AGG_AGE_SAMPLES ? a->serial - AGG_AGE_SAMPLES : 0,
		.rare = a->serial / AGG_AGE_RARE,
	};
	size_t fkeep = agg_fold_keep(&a->funcs, fe, fo, &g, AGG_SOFT_FUNCS,
	                             AGG_MAX_FUNCS * 3 / 4);
	size_t lkeep = agg_fold_keep(&a->lines, le, lo, &g, AGG_SOFT_LINES,
	                             AGG_MAX_LINES * 3 / 4);
	if (fkeep == a->funcs.n && lkeep == a->lines.n)
		return false;
	uint32_t *fmap = agg_fold_map(&a->funcs, fe, fo, &g, fkeep);
	uint32_t *lmap = agg_fold_map(&a->lines, le, lo, &g, lkeep);
	struct agg_fold_maps maps = { a, fmap, lmap };
	bool ok = fmap != NULL && lmap != NULL &&
	          /* First: the frames of the rows that fold count in
	           * "[other]" from now on, as the rows do. */
	          stack_table_fold_frames(&a->stacks, agg_frame_folds, &maps);
	if (ok) {
		a->folded_funcs += agg_fold_funcs(a, fmap);
		a->folded_lines += agg_fold_lines(a, lmap);
		folded_rows_renumber(&a->folded, FOLDED_FUNC, fmap);
		folded_rows_renumber(&a->folded, FOLDED_LINE, lmap);
		agg_fold_queues(a, fmap, lmap);
		agg_forget_frames(a); /* row indices moved */
	}
	free(fmap);
	free(lmap);
	return ok;
}

/* *s re-interned in `to`; false on OOM (*s unchanged). */
static bool agg_reintern(struct strtab *to, const char **s, uint32_t *sid)
{
	const char *n = strtab_intern(to, *s, strlen(*s), sid);
	if (n == NULL)
		return false;
	*s = n;
	return true;
}

static bool agg_rehome_rows(struct aggregator *a, struct strtab *to)
{
	bool ok = true;
	uint32_t n, f;
	hashmap_clear(&a->func_by_key);
	for (size_t i = 0; i < a->funcs.n; i++) {
		struct agg_func *r = &agg_funcs(a)[i];
		ok = ok && agg_reintern(to, &r->name, &n) &&
		     agg_reintern(to, &r->file, &f) &&
		     agg_reintern(to, &r->module, NULL);
		r->key = i == 0 ? 0 : pair_key(n, f);
		if (ok && i > 0)
			ok = hashmap_put(&a->func_by_key, r->key, i);
	}
	hashmap_clear(&a->line_by_key);
	for (size_t i = 0; i < a->lines.n; i++) {
		struct agg_line *r = &agg_lines(a)[i];
		ok = ok && agg_reintern(to, &r->name, NULL) &&
		     agg_reintern(to, &r->file, &f) &&
		     agg_reintern(to, &r->module, NULL);
		r->key = i == 0 ? 0 : pair_key(f, (uint32_t)r->line);
		if (ok && i > 0)
			ok = hashmap_put(&a->line_by_key, r->key, i);
	}
	return ok;
}

/* The names a tid -> name map keeps for later, into the new table. */
static bool agg_rehome_names(struct hashmap *m, struct strtab *to)
{
	bool ok = true;
	for (size_t i = 0; ok && i < m->cap; i++)
		if (m->slots[i].key != 0) {
			const char *s = (const char *)(uintptr_t)m->slots[i].val;
			ok = agg_reintern(to, &s, NULL);
			m->slots[i].val = (uintptr_t)s;
		}
	if (ok && m->has_zero) {
		const char *s = (const char *)(uintptr_t)m->zero_val;
		ok = agg_reintern(to, &s, NULL);
		m->zero_val = (uintptr_t)s;
	}
	return ok;
}

/* The thread rows' strings, and every thread name kept for later. */
static bool agg_rehome_threads(struct aggregator *a, struct strtab *to)
{
	bool ok = true;
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; ok && i < a->threads.n; i++)
		ok = agg_reintern(to, &t[i].name, NULL) &&
		     agg_reintern(to, &t[i].py_name, NULL) &&
		     agg_reintern(to, &t[i].top_func, NULL);
	return ok && agg_rehome_names(&a->thread_names, to) &&
	       agg_rehome_names(&a->thread_py_names, to);
}

/* Give the heap's free pages back: under churn the tables' memory is
 * freed in pieces scattered over the heap, which would otherwise keep
 * pytop's RSS at its peak. */
static void agg_trim(void)
{
#ifdef __GLIBC__
	(void)malloc_trim(0);
#endif
}

/* Move every string still referenced to a fresh table and free the old
 * one, which holds the names of every function ever seen.  On OOM both
 * are kept (some references may already point into the new one). */
static void agg_rehome(struct aggregator *a)
{
	struct strtab *to = strtab_new(), *old = a->strings;
	if (to == NULL)
		return;
	bool ok = code_table_rehome(a->codes, to) &&
	          agg_reintern(to, &a->empty, NULL) &&
	          agg_reintern(to, &a->other, NULL) &&
	          agg_rehome_rows(a, to) && agg_rehome_threads(a, to);
	a->strings = to;
	a->threads_dropped = 0;
	agg_forget_frames(a); /* resolved under the old keys */
	for (size_t i = 0; i < a->threads.n; i++) /* row keys are string ids */
		agg_threads(a)[i].prev.valid = false;
	if (ok) {
		strtab_free(old);
		agg_trim();
		return;
	}
	struct strtab **nr = realloc(a->retired, (a->nretired + 1) * sizeof *nr);
	if (nr == NULL)
		return; /* a leak under OOM rather than a dangling pointer */
	a->retired = nr;
	a->retired[a->nretired++] = old;
}

static bool agg_code_dead(void *ctx, uint32_t code_id)
{
	return code_id != STACK_CODE_OTHER && code_table_get(ctx, code_id) == NULL;
}

static uint32_t agg_map_cell(const uint32_t *cmap, size_t n, uint32_t cell)
{
	return cell < n ? cmap[cell] : STACK_NO_CELL;
}

/* Over the stack table's caps, or codes went: fold its stacks
 * (stack_table.h), and renumber the cells the queued samples and each
 * thread's previous sample name. */
/* The cells queued samples and each thread's previous sample name, by
 * a fold's or merge's map of n cells. */
static void agg_remap_cells(struct aggregator *a, const uint32_t *cmap, size_t n)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++) {
		t[i].prev.cell = agg_map_cell(cmap, n, t[i].prev.cell);
		for (size_t k = 0; k < t[i].queue.n; k++)
			t[i].queue.items[k].cell =
				agg_map_cell(cmap, n, t[i].queue.items[k].cell);
	}
}

/* Before codes go (code_table_age): a frame of a code about to go whose
 * rows live moves to its function's code (code_table_function), so its
 * stacks keep counting where they did; function codes and markers still
 * on a stack stay.  A frame folded whole is left to go with its code
 * (agg_rewrite_gone). */
static uint32_t agg_recode_frame(void *ctx, uint32_t code_id, unsigned fold)
{
	struct aggregator *a = ctx;
	const struct code_info *ci = code_table_get(a->codes, code_id);
	if (ci == NULL || ci->native ||
	    ((fold & STACK_FOLD_FUNC) && (fold & (STACK_FOLD_LINE | STACK_FOLD_NO_LINE))))
		return code_id;
	if (ci->function || ci->marker) {
		(void)code_table_use(a->codes, code_id);
		return code_id;
	}
	if (!code_table_goes(a->codes, code_id, AGG_CODE_IDLE_EPOCHS))
		return code_id;
	const struct code_info *fc = code_table_function(a->codes, code_id);
	/* Without one, its stacks fold into "[other stacks]" as it goes. */
	return fc != NULL ? fc->code_id : code_id;
}

/* Codes went: the frames of theirs folded whole into "[other]" become
 * the one "[other]" frame, their stacks merging (the rows' figures
 * stay); the stacks the others stand on fold below. */
static void agg_rewrite_gone(struct aggregator *a)
{
	size_t n = a->stacks.ncells;
	uint32_t *cmap = stack_table_rewrite_gone(&a->stacks, agg_code_dead, a->codes);
	if (cmap == NULL)
		return;
	agg_remap_cells(a, cmap, n);
	free(cmap);
}

static void agg_fold_stacks(struct aggregator *a, bool codes_went)
{
	if (codes_went)
		agg_rewrite_gone(a);
	bool over = stack_table_over_cap(&a->stacks);
	size_t n = a->stacks.ncells;
	if (!over && !codes_went)
		return;
	uint32_t *cmap = stack_table_fold_each(&a->stacks, over ? STACK_MAX_CELLS * 3 / 4 : n,
	                                       codes_went ? agg_code_dead : NULL, a->codes,
	                                       agg_cell_folds, a);
	if (cmap == NULL)
		return;
	agg_remap_cells(a, cmap, n);
	free(cmap);
}

static bool agg_tid_gone(void *ctx, pid_t tid)
{
	const struct aggregator *a = ctx;
	uint64_t idx;
	return !hashmap_get(&a->thread_by_tid, (uint32_t)tid, &idx);
}

/* Threads aged out: their stacks' cells merge into their process's. */
static void agg_merge_gone_stacks(struct aggregator *a)
{
	size_t n = a->stacks.ncells;
	folded_rows_merge_gone(&a->folded, agg_tid_gone, a);
	uint32_t *cmap = stack_table_merge_gone(&a->stacks, agg_tid_gone, a);
	if (cmap == NULL)
		return;
	agg_remap_cells(a, cmap, n);
	free(cmap);
}

/* Every AGG_SWEEP_NS (looked at on snapshots and every 1024 records):
 * fold idle rows when over the soft caps, age the codes.  Over the hard
 * caps: fold at once. */
void agg_sweep(struct aggregator *a)
{
	bool dropped = false, codes_went = false;
	uint64_t now = clock_now_ns();
	bool due = now >= a->next_sweep_ns;
	bool age_due = a->serial >= a->next_age_serial;
	if (age_due)
		a->next_age_serial = a->serial + AGG_AGE_SAMPLES / 8;
	if ((due && (a->funcs.n > AGG_SOFT_FUNCS ||
	             a->lines.n > AGG_SOFT_LINES)) || age_due ||
	    a->funcs.n > AGG_MAX_FUNCS || a->lines.n > AGG_MAX_LINES)
		dropped = agg_fold(a);
	if (due) {
		a->next_sweep_ns = now + AGG_SWEEP_NS;
		a->idle_serial = a->sweep_serial;
		a->sweep_serial = a->serial;
		stack_table_recode(&a->stacks, agg_recode_frame, a);
		codes_went = code_table_age(a->codes, AGG_CODE_IDLE_EPOCHS) > 0;
		dropped |= codes_went;
		/* A thread per request and no code churn: only a rehome frees
		 * the names of the threads aged out. */
		dropped |= a->threads_dropped >= AGG_REHOME_GONE_THREADS;
		/* Resolved frames skip code_table_use: start over, so that
		 * each code still used is marked in the new epoch. */
		agg_forget_frames(a);
	}
	/* Before a rehome: the dead codes' stacks are told apart by the
	 * codes' presence, not their strings. */
	agg_fold_stacks(a, codes_went);
	if (dropped)
		agg_rehome(a);
}

/* Threads aged out (agg_age_threads): their stacks' cells merge into
 * their process's. */
void agg_threads_dropped(struct aggregator *a)
{
	agg_merge_gone_stacks(a);
}

/* The counts go, the stacks stay: each thread's previous stack gets a
 * fresh cell, where memory it gives back is charged (as its rows are). */
static void agg_reset_stacks(struct aggregator *a)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++) {
		uint32_t c = t[i].prev.cell;
		t[i].prev.cell = c < a->stacks.ncells ? a->stacks.cells[c].node : STACK_NO_CELL;
	}
	stack_table_reset(&a->stacks);
	folded_rows_clear(&a->folded);
	for (size_t i = 0; i < a->threads.n; i++)
		if (t[i].prev.cell != STACK_NO_CELL)
			t[i].prev.cell = stack_table_cell(&a->stacks, t[i].prev.cell,
			                                  t[i].tid, t[i].pid);
}

void aggregator_reset(struct aggregator *a)
{
	/* Rows stay (their indices are cached in frame_cache); only their
	 * use goes.  Stamps may stay: serials only grow. */
	struct agg_func *f = agg_funcs(a);
	for (size_t i = 0; i < a->funcs.n; i++)
		f[i].use.total = 0;
	struct agg_line *l = agg_lines(a);
	for (size_t i = 0; i < a->lines.n; i++)
		l[i].use.total = 0;
	proc_table_reset(a->procs);
	agg_reset_stacks(a);
	agg_reset_threads(a);
	a->folded_funcs = a->folded_lines = 0;
	a->samples = a->samples_win = 0;
	a->split = a->split_win = (struct snap_split){ 0 };
}

void aggregator_settle(struct aggregator *a)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++)
		agg_settle_lifetime(a, &t[i]);
}

void aggregator_filter_thread(struct aggregator *a, pid_t tid)
{
	a->filter = tid;
}

void aggregator_filter_process(struct aggregator *a, pid_t pid)
{
	a->pfilter = pid;
}
