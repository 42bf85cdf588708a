/* aggregator_folded.c - the aggregator's side of folded_rows.h: what a
 * stack folding into "[other stacks]" was a sample of, in the rows'
 * terms, and those rows in the snapshot. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "clock.h"
#include "profile/aggregator_priv.h"

static uint64_t key2(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* As the sample found them (agg_resolve). */
bool agg_frame_rows(const struct aggregator *a, const struct stack_table *t, uint32_t f,
                    struct agg_frame_rows *out)
{
	const struct stack_frame *sf = &t->frames[f];
	unsigned fold = stack_table_frame_fold(t, f);
	const struct code_info *ci = sf->code_id == STACK_CODE_OTHER
		? NULL : code_table_get(a->codes, sf->code_id);
	uint64_t idx;
	if (ci == NULL && !(fold & STACK_FOLD_FUNC))
		return false;
	out->native = ci != NULL && ci->native;
	out->func = 0;
	if (!(fold & STACK_FOLD_FUNC)) {
		if (!hashmap_get(&a->func_by_key, key2(ci->qualname_sid, ci->filename_sid), &idx))
			return false;
		out->func = (uint32_t)idx;
	}
	out->line = 0;
	if ((fold & STACK_FOLD_NO_LINE) ||
	    (ci != NULL && (ci->native || ci->marker) && sf->line <= 0))
		out->line = AGG_NO_LINE;
	else if (!(fold & STACK_FOLD_LINE)) {
		if (!hashmap_get(&a->line_by_key, key2(ci->filename_sid, (uint32_t)sf->line), &idx))
			return false;
		out->line = (uint32_t)idx;
	}
	return true;
}

/* Count the cell in its thread's entry r: own or only total, total
 * once per cell (stamp). */
static void fold_count(struct aggregator *a, const struct stack_cell *c,
                       struct folded_row *r, bool own)
{
	if (r == NULL || r->stamp == a->folded.serial)
		return; /* OOM: that row's figures stay short */
	r->stamp = a->folded.serial;
	folded_counts_add(&r->c, own, c->samples, c->samples_win, c->ns, &c->split,
	                  &c->split_win, &c->kept);
}

void agg_cell_folds(void *ctx, const struct stack_table *t, const struct stack_cell *c)
{
	struct aggregator *a = ctx;
	bool leaf = true, own_line = false, callee = false;
	uint32_t leaf_func = 0;
	struct agg_frame_rows fr;
	a->folded.serial++;
	for (uint32_t n = c->node; n != STACK_ROOT && n < t->nnodes; n = t->nodes[n].parent) {
		if (!agg_frame_rows(a, t, t->nodes[n].frame, &fr))
			continue;
		/* Its callee: the leaf's function under the line of the first
		 * frame out of native code (agg_caller_line). */
		if (callee && !fr.native) {
			callee = false;
			if (fr.line != AGG_NO_LINE)
				fold_count(a, c, folded_rows_callee_at(&a->folded, fr.line, leaf_func,
				                                       c->tid, c->pid), true);
		}
		if (leaf) {
			callee = fr.native;
			leaf_func = fr.func;
		}
		fold_count(a, c, folded_rows_at(&a->folded, FOLDED_FUNC, fr.func, c->tid, c->pid),
		           leaf);
		leaf = false;
		if (fr.line == AGG_NO_LINE)
			continue;
		fold_count(a, c, folded_rows_at(&a->folded, FOLDED_LINE, fr.line, c->tid, c->pid),
		           !own_line);
		own_line = true;
	}
}

/* d, settled for a sample whose cell is an "[other stacks]" one, goes
 * to its own rows' folded entries too. */
void agg_folded_split(struct aggregator *a, const struct split_item *it,
                      const struct snap_split *d, bool win)
{
	if (it->cell >= a->stacks.ncells || a->stacks.cells[it->cell].node != STACK_OTHER)
		return;
	const struct stack_cell *c = &a->stacks.cells[it->cell];
	struct folded_row *r = folded_rows_at(&a->folded, FOLDED_FUNC, it->func, c->tid, c->pid);
	if (r != NULL)
		folded_counts_split(&r->c, d, win);
	r = it->line == AGG_NO_LINE ? NULL
	    : folded_rows_at(&a->folded, FOLDED_LINE, it->line, c->tid, c->pid);
	if (r != NULL)
		folded_counts_split(&r->c, d, win);
	r = it->caller == AGG_NO_ROW ? NULL
	    : folded_rows_callee_at(&a->folded, it->caller, it->func, c->tid, c->pid);
	if (r != NULL)
		folded_counts_split(&r->c, d, win);
}

static struct snap_counts fold_snap_counts(const struct aggregator *a,
                                           const struct folded_counts *c)
{
	return (struct snap_counts){
		.mem_kept = mem_kept_value(&c->kept, &a->kept_clock, snap_mem_net(&c->split)),
		.own = c->own, .total = c->total,
		.own_win = c->own_win, .total_win = c->total_win,
		.own_s = (double)c->own_ns / NSEC_PER_SEC,
		.total_s = (double)c->total_ns / NSEC_PER_SEC,
		.split = c->split, .split_win = c->split_win,
	};
}

static struct snap_folded_row fold_snap_row(const struct aggregator *a,
                                            const struct folded_row *r)
{
	struct snap_folded_row o = { .tid = r->tid, .pid = r->pid, .caller_file = "",
	                             .c = fold_snap_counts(a, &r->c) };
	uint32_t func = r->row, line = AGG_NO_LINE;
	o.kind = r->dim == FOLDED_FUNC ? SNAP_FOLDED_FUNC
	         : r->dim == FOLDED_LINE ? SNAP_FOLDED_LINE : SNAP_FOLDED_CALLEE;
	if (r->dim == FOLDED_CALLEE) {
		func = a->folded.pairs[r->row].func;
		line = a->folded.pairs[r->row].line;
	}
	if (r->dim == FOLDED_LINE) {
		const struct agg_line *l = &agg_lines(a)[r->row];
		o.name = l->name, o.file = l->file, o.module = l->module;
		o.line = l->line, o.native = l->native, o.other = r->row == 0;
		return o;
	}
	const struct agg_func *f = &agg_funcs(a)[func];
	o.name = f->name, o.file = f->file, o.module = f->module;
	o.line = f->line, o.native = f->native, o.other = func == 0;
	if (line != AGG_NO_LINE) {
		o.caller_file = agg_lines(a)[line].file;
		o.caller_line = agg_lines(a)[line].line;
		o.caller_other = line == 0;
	}
	return o;
}

void agg_snap_folded_rows(struct aggregator *a, struct snapshot *out)
{
	const struct folded_rows *f = &a->folded;
	out->has_folded_rows = true;
	out->stack_folded_rows = f->n ? malloc(f->n * sizeof *out->stack_folded_rows) : NULL;
	out->nstack_folded_rows = 0;
	if (out->stack_folded_rows == NULL)
		return; /* none, or OOM: the "[other stacks]" cells then go untold */
	for (size_t i = 0; i < f->n; i++)
		if (f->rows[i].c.total > 0 || f->rows[i].c.split.mem_shrink > 0)
			out->stack_folded_rows[out->nstack_folded_rows++] =
				fold_snap_row(a, &f->rows[i]);
}
