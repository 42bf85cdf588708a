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
 * Threads (their rows, names, state, ageing): aggregator_threads.c; the
 * split of each sample's time and memory: aggregator_split.c; bounded
 * memory (the sweep, folds, code ageing, string rehoming):
 * aggregator_sweep.c; the snapshot: aggregator_snapshot.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/aggregator.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
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

/* ---- lifetime ---------------------------------------------------------- */

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
	uint64_t key = agg_pair_key(ci->qualname_sid, ci->filename_sid), idx;
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
	uint64_t key = agg_pair_key(ci->filename_sid, (uint32_t)line), idx;
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

/* ---- ingest ------------------------------------------------------------ */

/* Resolve one frame to its rows; false if its code is unknown (or OOM). */
static bool agg_resolve(struct aggregator *a, struct rec_frame f,
                        struct agg_frame *out)
{
	uint64_t key = agg_pair_key(f.code_id, (uint32_t)f.instr_offset), v;
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
	(void)hashmap_put(&a->frame_cache, key, agg_pair_key(out->func, out->line));
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

/* The counts go, the stacks stay.  Each thread forgets its previous
 * sample: memory it gives back next goes to the sample that tells it,
 * since a sample before the reset has no row left to show it. */
static void agg_reset_stacks(struct aggregator *a)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++)
		t[i].prev = (struct agg_prev_rows){ .cell = STACK_NO_CELL };
	stack_table_reset(&a->stacks);
	folded_rows_clear(&a->folded);
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
