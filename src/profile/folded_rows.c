/* folded_rows.c - the rows of the stacks folded away (folded_rows.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/folded_rows.h"

#include <stdlib.h>

/* Rows stay far below 2^30 (the aggregator's caps): two bits of dim. */
static uint64_t fr_key(enum folded_dim dim, uint32_t row, pid_t tid)
{
	return (uint64_t)((uint32_t)dim << 30 | (row & 0x3fffffffu)) << 32 | (uint32_t)tid;
}

static uint64_t fr_pair_key(uint32_t line, uint32_t func)
{
	return (uint64_t)line << 32 | func;
}

void folded_rows_init(struct folded_rows *f)
{
	*f = (struct folded_rows){ .rows = NULL };
	hashmap_init(&f->by_key);
	hashmap_init(&f->pair_by_key);
}

void folded_rows_destroy(struct folded_rows *f)
{
	free(f->rows);
	free(f->pairs);
	free(f->pair_moved);
	hashmap_destroy(&f->by_key);
	hashmap_destroy(&f->pair_by_key);
	*f = (struct folded_rows){ .rows = NULL };
	hashmap_init(&f->by_key);
	hashmap_init(&f->pair_by_key);
}

void folded_rows_clear(struct folded_rows *f)
{
	f->n = f->npairs = 0;
	hashmap_clear(&f->by_key);
	hashmap_clear(&f->pair_by_key);
}

struct folded_row *folded_rows_at(struct folded_rows *f, enum folded_dim dim,
                                     uint32_t row, pid_t tid, pid_t pid)
{
	uint64_t key = fr_key(dim, row, tid), idx;
	if (hashmap_get(&f->by_key, key, &idx))
		return &f->rows[idx];
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct folded_row *r = realloc(f->rows, cap * sizeof *r);
		if (r == NULL)
			return NULL;
		f->rows = r;
		f->cap = cap;
	}
	if (!hashmap_put(&f->by_key, key, f->n))
		return NULL;
	f->rows[f->n] = (struct folded_row){ .dim = dim, .row = row, .tid = tid, .pid = pid };
	return &f->rows[f->n++];
}

/* The pair (line, func)'s number, made if need be; false on OOM. */
static bool fr_pair(struct folded_rows *f, uint32_t line, uint32_t func, uint32_t *out)
{
	uint64_t key = fr_pair_key(line, func), idx;
	if (hashmap_get(&f->pair_by_key, key, &idx)) {
		*out = (uint32_t)idx;
		return true;
	}
	if (f->npairs == f->pairs_cap) {
		size_t cap = f->pairs_cap ? f->pairs_cap * 2 : 16;
		struct folded_pair *p = realloc(f->pairs, cap * sizeof *p);
		if (p == NULL)
			return false;
		f->pairs = p;
		uint32_t *m = realloc(f->pair_moved, cap * sizeof *m);
		if (m == NULL)
			return false;
		f->pair_moved = m;
		f->pairs_cap = cap;
	}
	if (!hashmap_put(&f->pair_by_key, key, f->npairs))
		return false;
	f->pairs[f->npairs] = (struct folded_pair){ line, func };
	*out = (uint32_t)f->npairs++;
	return true;
}

struct folded_row *folded_rows_callee_at(struct folded_rows *f, uint32_t line, uint32_t func,
                                         pid_t tid, pid_t pid)
{
	uint32_t pair;
	return fr_pair(f, line, func, &pair) ? folded_rows_at(f, FOLDED_CALLEE, pair, tid, pid)
	                                     : NULL;
}

void folded_counts_add(struct folded_counts *c, bool own, uint64_t samples,
                       uint64_t samples_win, uint64_t ns, const struct snap_split *split,
                       const struct snap_split *split_win, const struct mem_kept *kept)
{
	c->total += samples;
	c->total_win += samples_win;
	c->total_ns += ns;
	if (!own)
		return;
	c->own += samples;
	c->own_win += samples_win;
	c->own_ns += ns;
	snap_split_add(&c->split, split);
	snap_split_add(&c->split_win, split_win);
	mem_kept_add(&c->kept, kept);
}

void folded_counts_split(struct folded_counts *c, const struct snap_split *d, bool win)
{
	snap_split_add(&c->split, d);
	if (win)
		snap_split_add(&c->split_win, d);
}

static void fr_merge(struct folded_counts *to, const struct folded_counts *c)
{
	to->own += c->own;
	to->total += c->total;
	to->own_win += c->own_win;
	to->total_win += c->total_win;
	to->own_ns += c->own_ns;
	to->total_ns += c->total_ns;
	snap_split_add(&to->split, &c->split);
	snap_split_add(&to->split_win, &c->split_win);
	mem_kept_add(&to->kept, &c->kept);
}

/* Re-key every entry as moved(r) says, merging those that meet. */
static void fr_rekey(struct folded_rows *f, void (*moved)(struct folded_row *r, const void *ctx),
                     const void *ctx)
{
	size_t kept = 0;
	uint64_t idx;
	hashmap_clear(&f->by_key);
	for (size_t i = 0; i < f->n; i++) {
		struct folded_row r = f->rows[i];
		moved(&r, ctx);
		uint64_t key = fr_key(r.dim, r.row, r.tid);
		if (hashmap_get(&f->by_key, key, &idx)) {
			fr_merge(&f->rows[idx].c, &r.c);
			continue;
		}
		f->rows[kept] = r;
		/* Cannot fail: the map held as many keys a moment ago. */
		(void)hashmap_put(&f->by_key, key, kept++);
	}
	f->n = kept;
}

struct fr_renumber {
	enum folded_dim dim;
	const uint32_t *map;
	const uint32_t *pair_moved;
};

static void fr_renumbered(struct folded_row *r, const void *ctx)
{
	const struct fr_renumber *m = ctx;
	if (r->dim == m->dim)
		r->row = m->map[r->row];
	else if (r->dim == FOLDED_CALLEE)
		r->row = m->pair_moved[r->row];
}

/* The pairs' rows of dim by map, merging the pairs that meet:
 * pair_moved[old pair] = its new number.  Cannot fail: the pairs only
 * get fewer. */
static void fr_renumber_pairs(struct folded_rows *f, enum folded_dim dim, const uint32_t *map)
{
	size_t kept = 0;
	uint64_t idx;
	hashmap_clear(&f->pair_by_key);
	for (size_t i = 0; i < f->npairs; i++) {
		struct folded_pair p = f->pairs[i];
		if (dim == FOLDED_FUNC)
			p.func = map[p.func];
		else
			p.line = map[p.line];
		uint64_t key = fr_pair_key(p.line, p.func);
		if (hashmap_get(&f->pair_by_key, key, &idx)) {
			f->pair_moved[i] = (uint32_t)idx;
			continue;
		}
		f->pairs[kept] = p;
		f->pair_moved[i] = (uint32_t)kept;
		(void)hashmap_put(&f->pair_by_key, key, kept++);
	}
	f->npairs = kept;
}

void folded_rows_renumber(struct folded_rows *f, enum folded_dim dim, const uint32_t *map)
{
	fr_renumber_pairs(f, dim, map);
	struct fr_renumber m = { dim, map, f->pair_moved };
	fr_rekey(f, fr_renumbered, &m);
}

struct fr_gone {
	bool (*gone)(void *ctx, pid_t tid);
	void *ctx;
};

static void fr_gone_moved(struct folded_row *r, const void *ctx)
{
	const struct fr_gone *g = ctx;
	if (r->tid > 0 && g->gone(g->ctx, r->tid))
		r->tid = -r->pid;
}

void folded_rows_merge_gone(struct folded_rows *f, bool (*gone)(void *ctx, pid_t tid),
                            void *ctx)
{
	struct fr_gone g = { gone, ctx };
	fr_rekey(f, fr_gone_moved, &g);
}

void folded_rows_close_window(struct folded_rows *f)
{
	for (size_t i = 0; i < f->n; i++) {
		f->rows[i].c.own_win = f->rows[i].c.total_win = 0;
		f->rows[i].c.split_win = (struct snap_split){ 0 };
	}
}

void folded_rows_mark_kept(struct folded_rows *f, const struct mem_kept_clock *clk)
{
	for (size_t i = 0; i < f->n; i++)
		mem_kept_mark(&f->rows[i].c.kept, clk, snap_mem_net(&f->rows[i].c.split));
}
