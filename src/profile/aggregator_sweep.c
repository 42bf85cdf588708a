/* aggregator_sweep.c - the aggregator's bounded memory (aggregator.h:
 * "Bounded memory"): every AGG_SWEEP_NS, and at once over the hard caps,
 * function and line rows fold into "[other]" (their frames marked in the
 * stack table), unused codes age out (their frames moved to their
 * function's code first), the stack table folds over its caps or when
 * codes went, the aged-out threads' cells merge into their process's,
 * and the strings still used move to a fresh table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

#include "clock.h"
#include "profile/aggregator_priv.h"

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
#define AGG_CODE_IDLE_EPOCHS 10     /* codes go after 18 s unused: the
                                       sampler forgets a code after
                                       PY_READER_CODE_IDLE_S (10 s), and a
                                       sample may still be in the ring */

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
	if (hashmap_get(&m->a->func_by_key, agg_pair_key(ci->qualname_sid, ci->filename_sid),
	                &idx) && m->fmap[idx] == 0)
		bits |= STACK_FOLD_FUNC;
	if ((ci->native || ci->marker) && line <= 0)
		/* No line row: folded whole with its function (once its code
		 * goes, stack_table_rewrite_gone must know it had no line). */
		return bits ? bits | STACK_FOLD_NO_LINE : 0;
	if (hashmap_get(&m->a->line_by_key, agg_pair_key(ci->filename_sid, (uint32_t)line),
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
		r->key = i == 0 ? 0 : agg_pair_key(n, f);
		if (ok && i > 0)
			ok = hashmap_put(&a->func_by_key, r->key, i);
	}
	hashmap_clear(&a->line_by_key);
	for (size_t i = 0; i < a->lines.n; i++) {
		struct agg_line *r = &agg_lines(a)[i];
		ok = ok && agg_reintern(to, &r->name, NULL) &&
		     agg_reintern(to, &r->file, &f) &&
		     agg_reintern(to, &r->module, NULL);
		r->key = i == 0 ? 0 : agg_pair_key(f, (uint32_t)r->line);
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
