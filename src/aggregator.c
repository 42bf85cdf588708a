/* aggregator.c - records in, counters out (see aggregator.h).
 *
 * Rows: one per function (key: interned qualname + filename), one per
 * source line (key: interned filename + line), one per thread (key: tid).
 * Function and line rows are never removed; a reset only zeroes their
 * counters, so the frame cache below stays valid across resets and a
 * snapshot simply skips rows whose total is 0.
 *
 * Hot path: a frame (code_id, instr_offset) is resolved to its pair of row
 * indices through one frame-cache lookup; only the first time a frame is
 * seen does it cost a code lookup, a line-table search and two row-key
 * lookups.  "Once per sample" uses a per-row stamp holding the serial of the
 * last sample that counted it, so deep stacks cost O(depth).  In steady
 * state the per-sample path allocates nothing.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "aggregator.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "code_table.h"
#include "hashmap.h"
#include "record.h"
#include "strtab.h"

/* Counters of one function or line row. */
struct agg_counts {
	uint64_t own, total, own_win, total_win;
	uint64_t own_ns, total_ns;
	uint64_t stamp; /* serial of the last sample that counted total */
};

struct agg_func {
	const char *name, *file; /* interned */
	int line;                /* smallest first line of its codes */
	struct agg_counts c;
};

struct agg_line {
	const char *name, *file; /* name: first function seen on this line */
	int line;
	struct agg_counts c;
};

struct agg_thread {
	pid_t tid;
	const char *name;     /* interned, "" if unknown */
	uint64_t samples, samples_win;
	bool running;
	const char *top_func; /* interned or "" */
};

/* A resolved frame: the rows it feeds. */
struct agg_frame {
	uint32_t func, line;
};

/* A growable array of rows; elem is the row size. */
struct agg_vec {
	void *items;
	size_t n, cap;
};

struct aggregator {
	struct strtab *strings;   /* owned */
	struct code_table *codes; /* owned */
	const char *empty;        /* interned "" */

	struct agg_vec funcs;     /* struct agg_func */
	struct hashmap func_by_key;   /* qualname_sid << 32 | filename_sid */
	struct agg_vec lines;     /* struct agg_line */
	struct hashmap line_by_key;   /* filename_sid << 32 | (uint32)line */
	struct hashmap frame_cache;   /* code_id << 32 | (uint32)offset ->
	                                 func << 32 | line */
	struct agg_vec threads;   /* struct agg_thread */
	struct hashmap thread_by_tid; /* (uint32)tid -> index */
	struct hashmap thread_names;  /* (uint32)tid -> interned name;
	                                 survives resets */

	struct agg_frame *scratch; /* owned; resolved frames of one sample */
	size_t scratch_cap;

	uint64_t serial;          /* samples counted so far, for stamps */
	uint64_t samples, samples_win;
	uint64_t bad;
};

/* ---- small helpers ----------------------------------------------------- */

/* Room for one more item; false on OOM. */
static bool agg_vec_reserve(struct agg_vec *v, size_t elem)
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

static struct agg_func *agg_funcs(const struct aggregator *a)
{
	return a->funcs.items;
}

static struct agg_line *agg_lines(const struct aggregator *a)
{
	return a->lines.items;
}

static struct agg_thread *agg_threads(const struct aggregator *a)
{
	return a->threads.items;
}

static uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* ---- lifetime ---------------------------------------------------------- */

struct aggregator *aggregator_new(void)
{
	struct aggregator *a = calloc(1, sizeof *a);
	if (a == NULL)
		return NULL;
	hashmap_init(&a->func_by_key);
	hashmap_init(&a->line_by_key);
	hashmap_init(&a->frame_cache);
	hashmap_init(&a->thread_by_tid);
	hashmap_init(&a->thread_names);
	a->strings = strtab_new();
	if (a->strings == NULL)
		goto fail;
	a->codes = code_table_new(a->strings);
	if (a->codes == NULL)
		goto fail;
	a->empty = strtab_intern(a->strings, "", 0, NULL);
	if (a->empty == NULL)
		goto fail;
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
	free(a->threads.items);
	free(a->scratch);
	hashmap_destroy(&a->func_by_key);
	hashmap_destroy(&a->line_by_key);
	hashmap_destroy(&a->frame_cache);
	hashmap_destroy(&a->thread_by_tid);
	hashmap_destroy(&a->thread_names);
	code_table_free(a->codes);
	strtab_free(a->strings);
	free(a);
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
		.name = ci->qualname,
		.file = ci->filename,
		.line = ci->firstlineno,
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
		.name = ci->qualname,
		.file = ci->filename,
		.line = line,
	};
	*out = (uint32_t)a->lines.n++;
	return true;
}

/* The thread row for tid, created on first use; NULL on OOM. */
static struct agg_thread *agg_thread_row(struct aggregator *a, int32_t tid)
{
	uint64_t idx;
	if (hashmap_get(&a->thread_by_tid, (uint32_t)tid, &idx))
		return &agg_threads(a)[idx];
	if (!agg_vec_reserve(&a->threads, sizeof(struct agg_thread)) ||
	    !hashmap_put(&a->thread_by_tid, (uint32_t)tid, a->threads.n))
		return NULL;
	uint64_t name;
	struct agg_thread *t = &agg_threads(a)[a->threads.n++];
	*t = (struct agg_thread){
		.tid = tid,
		.name = hashmap_get(&a->thread_names, (uint32_t)tid, &name)
		                ? (const char *)(uintptr_t)name
		                : a->empty,
		.top_func = a->empty,
	};
	return t;
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
	const struct code_info *ci = code_table_get(a->codes, f.code_id);
	if (ci == NULL)
		return false;
	if (!agg_func_row(a, ci, &out->func) ||
	    !agg_line_row(a, ci, code_info_line(ci, f.instr_offset),
	                  &out->line))
		return false;
	/* A failed cache insert only costs speed. */
	(void)hashmap_put(&a->frame_cache, key, pair_key(out->func, out->line));
	return true;
}

static void agg_count_own(struct agg_counts *c, uint64_t w)
{
	c->own++;
	c->own_win++;
	c->own_ns += w;
}

static void agg_count_total(struct agg_counts *c, uint64_t serial, uint64_t w)
{
	if (c->stamp == serial)
		return;
	c->stamp = serial;
	c->total++;
	c->total_win++;
	c->total_ns += w;
}

static bool agg_reserve_scratch(struct aggregator *a, size_t n)
{
	if (n <= a->scratch_cap)
		return true;
	struct agg_frame *ns = realloc(a->scratch, n * sizeof *ns);
	if (ns == NULL)
		return false;
	a->scratch = ns;
	a->scratch_cap = n;
	return true;
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
	/* Resolve every frame before counting anything, so a sample with an
	 * unknown code is dropped whole. */
	const uint8_t *fp = rec + sizeof s;
	for (size_t i = 0; i < s.nframes; i++) {
		struct rec_frame f;
		memcpy(&f, fp + i * sizeof f, sizeof f);
		if (!agg_resolve(a, f, &a->scratch[i])) {
			a->bad++;
			return;
		}
	}
	struct agg_thread *t = agg_thread_row(a, s.tid);
	if (t == NULL) {
		a->bad++;
		return;
	}
	t->samples++;
	t->samples_win++;
	t->running = (s.flags & SAMPLE_RUNNING) != 0;
	if (s.nframes == 0) {
		t->top_func = a->empty;
		return;
	}

	struct agg_func *funcs = agg_funcs(a);
	struct agg_line *lines = agg_lines(a);
	uint64_t w = s.interval_ns, serial = ++a->serial;
	a->samples++;
	a->samples_win++;
	t->top_func = funcs[a->scratch[0].func].name;
	agg_count_own(&funcs[a->scratch[0].func].c, w);
	agg_count_own(&lines[a->scratch[0].line].c, w);
	for (size_t i = 0; i < s.nframes; i++) {
		agg_count_total(&funcs[a->scratch[i].func].c, serial, w);
		agg_count_total(&lines[a->scratch[i].line].c, serial, w);
	}
}

static void agg_ingest_thread(struct aggregator *a, const uint8_t *rec,
                              size_t size)
{
	struct rec_thread r;
	if (size < sizeof r) {
		a->bad++;
		return;
	}
	memcpy(&r, rec, sizeof r);
	const char *name = strtab_intern(a->strings, r.name,
	                                 strnlen(r.name, sizeof r.name), NULL);
	if (name == NULL ||
	    !hashmap_put(&a->thread_names, (uint32_t)r.tid, (uintptr_t)name)) {
		a->bad++;
		return;
	}
	struct agg_thread *t = agg_thread_row(a, r.tid);
	if (t == NULL) {
		a->bad++;
		return;
	}
	t->name = name;
}

void aggregator_ingest(struct aggregator *a, const void *rec, size_t len)
{
	struct rec_header h;
	if (rec == NULL || len < sizeof h) {
		a->bad++;
		return;
	}
	memcpy(&h, rec, sizeof h);
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
	default:
		a->bad++;
		break;
	}
}

/* ---- snapshot and reset ------------------------------------------------ */

static struct snap_counts agg_snap_counts(const struct agg_counts *c)
{
	return (struct snap_counts){
		.own = c->own,
		.total = c->total,
		.own_win = c->own_win,
		.total_win = c->total_win,
		.own_s = (double)c->own_ns / 1e9,
		.total_s = (double)c->total_ns / 1e9,
	};
}

/* Own desc, then total desc; 0 on a tie. */
static int agg_cmp_counts(const struct snap_counts *a,
                          const struct snap_counts *b)
{
	if (a->own != b->own)
		return a->own > b->own ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return 0;
}

/* Ties are broken down to a total order so that the output does not
 * depend on qsort's whims: functions by name, file, line; lines by file,
 * line, name. */
static int agg_cmp_func(const void *pa, const void *pb)
{
	const struct snap_func *a = pa, *b = pb;
	int r = agg_cmp_counts(&a->c, &b->c);
	if (r == 0)
		r = strcmp(a->name, b->name);
	if (r == 0)
		r = strcmp(a->file, b->file);
	if (r == 0)
		r = (a->line > b->line) - (a->line < b->line);
	return r;
}

static int agg_cmp_line(const void *pa, const void *pb)
{
	const struct snap_line *a = pa, *b = pb;
	int r = agg_cmp_counts(&a->c, &b->c);
	if (r == 0)
		r = strcmp(a->file, b->file);
	if (r == 0)
		r = (a->line > b->line) - (a->line < b->line);
	if (r == 0)
		r = strcmp(a->name, b->name);
	return r;
}

static int agg_cmp_thread(const void *pa, const void *pb)
{
	const struct snap_thread *a = pa, *b = pb;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

static void agg_snap_funcs(struct aggregator *a, struct snapshot *out)
{
	struct agg_func *f = agg_funcs(a);
	size_t live = 0;
	for (size_t i = 0; i < a->funcs.n; i++)
		live += f[i].c.total > 0;
	out->funcs = live ? malloc(live * sizeof *out->funcs) : NULL;
	out->nfuncs = 0;
	for (size_t i = 0; i < a->funcs.n; i++) {
		if (f[i].c.total > 0 && out->funcs != NULL)
			out->funcs[out->nfuncs++] = (struct snap_func){
				.name = f[i].name,
				.file = f[i].file,
				.line = f[i].line,
				.c = agg_snap_counts(&f[i].c),
			};
		f[i].c.own_win = f[i].c.total_win = 0;
	}
	if (out->nfuncs > 1)
		qsort(out->funcs, out->nfuncs, sizeof *out->funcs,
		      agg_cmp_func);
}

static void agg_snap_lines(struct aggregator *a, struct snapshot *out)
{
	struct agg_line *l = agg_lines(a);
	size_t live = 0;
	for (size_t i = 0; i < a->lines.n; i++)
		live += l[i].c.total > 0;
	out->lines = live ? malloc(live * sizeof *out->lines) : NULL;
	out->nlines = 0;
	for (size_t i = 0; i < a->lines.n; i++) {
		if (l[i].c.total > 0 && out->lines != NULL)
			out->lines[out->nlines++] = (struct snap_line){
				.name = l[i].name,
				.file = l[i].file,
				.line = l[i].line,
				.c = agg_snap_counts(&l[i].c),
			};
		l[i].c.own_win = l[i].c.total_win = 0;
	}
	if (out->nlines > 1)
		qsort(out->lines, out->nlines, sizeof *out->lines,
		      agg_cmp_line);
}

static void agg_snap_threads(struct aggregator *a, struct snapshot *out)
{
	struct agg_thread *t = agg_threads(a);
	size_t n = a->threads.n;
	out->threads = n ? malloc(n * sizeof *out->threads) : NULL;
	out->nthreads = out->threads != NULL ? n : 0;
	for (size_t i = 0; i < n; i++) {
		if (out->threads != NULL)
			out->threads[i] = (struct snap_thread){
				.tid = t[i].tid,
				.name = t[i].name,
				.samples = t[i].samples,
				.samples_win = t[i].samples_win,
				.running = t[i].running,
				.top_func = t[i].top_func,
			};
		t[i].samples_win = 0;
	}
	if (out->nthreads > 1)
		qsort(out->threads, out->nthreads, sizeof *out->threads,
		      agg_cmp_thread);
}

void aggregator_snapshot(struct aggregator *a, struct snapshot *out)
{
	agg_snap_funcs(a, out);
	agg_snap_lines(a, out);
	agg_snap_threads(a, out);
	out->samples = a->samples;
	out->samples_win = a->samples_win;
	a->samples_win = 0;
}

void aggregator_reset(struct aggregator *a)
{
	/* Rows stay (their indices are cached in frame_cache); only counts
	 * go.  Stamps may stay too: serials only grow. */
	struct agg_func *f = agg_funcs(a);
	for (size_t i = 0; i < a->funcs.n; i++)
		f[i].c = (struct agg_counts){ .stamp = f[i].c.stamp };
	struct agg_line *l = agg_lines(a);
	for (size_t i = 0; i < a->lines.n; i++)
		l[i].c = (struct agg_counts){ .stamp = l[i].c.stamp };
	a->threads.n = 0;
	hashmap_clear(&a->thread_by_tid);
	a->samples = a->samples_win = 0;
}

/* Placeholder until per-thread function tables land: the filter is
 * recorded but snapshots still show all threads. */
void aggregator_filter_thread(struct aggregator *a, pid_t tid)
{
	(void)a;
	(void)tid;
}
