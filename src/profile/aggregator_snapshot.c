/* aggregator_snapshot.c - the aggregator's counts into a snapshot (see
 * aggregator.h for what each row counts): the stacks (stack_snapshot.h)
 * and what the folded ones were samples of (folded_rows.h); functions,
 * lines and callees, global or of the filtered thread or process,
 * counted from those (stack_derive.h); threads with their state, CPU and
 * GIL shares over the window; and the window closed for every row.  The
 * row counters' own figures are kept for the tests' cross-check
 * (agg_snapshot_counted) until they go. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "profile/aggregator_priv.h"
#include "profile/stack_derive.h"
#include "profile/stack_snapshot.h"
#include "transport/record.h"

static struct snap_counts agg_snap_counts(const struct aggregator *a,
                                          const struct agg_counts *c)
{
	return (struct snap_counts){
		.mem_kept = mem_kept_value(&c->kept, &a->kept_clock, snap_mem_net(&c->split)),
		.own = c->own,
		.total = c->total,
		.own_win = c->own_win,
		.total_win = c->total_win,
		.own_s = (double)c->own_ns / NSEC_PER_SEC,
		.total_s = (double)c->total_ns / NSEC_PER_SEC,
		.split = c->split,
		.split_win = c->split_win,
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

/* The counters a snapshot row shows for global row i: the global ones,
 * or under a thread filter that thread's (NULL: it has none for row i). */
struct agg_view {
	const struct agg_counts **by_row; /* owned; NULL = unfiltered */
};

/* Map every global row to the filtered thread's counters.  false on OOM. */
static bool agg_view_filtered(const struct agg_vec *trows, size_t nrows,
                              pid_t tid, struct agg_view *v)
{
	v->by_row = nrows ? calloc(nrows, sizeof *v->by_row) : NULL;
	if (nrows && v->by_row == NULL)
		return false;
	const struct agg_trow *r = agg_trows(trows);
	for (size_t i = 0; i < trows->n; i++)
		if (r[i].tid == tid && r[i].row < nrows)
			v->by_row[r[i].row] = &r[i].c;
	return true;
}

static const struct agg_counts *agg_view_get(const struct agg_view *v,
                                             const struct agg_counts *global,
                                             size_t i)
{
	return v->by_row != NULL ? v->by_row[i] : global;
}

static void agg_close_window(struct agg_counts *c)
{
	c->own_win = c->total_win = 0;
	c->split_win = (struct snap_split){ 0 };
}

/* The window closes for every row, filtered or not. */
static void agg_close_row_windows(struct agg_vec *trows)
{
	struct agg_trow *r = agg_trows(trows);
	for (size_t i = 0; i < trows->n; i++)
		agg_close_window(&r[i].c);
}

static void agg_snap_funcs(struct aggregator *a, const struct agg_view *v,
                           struct snapshot *out)
{
	struct agg_func *f = agg_funcs(a);
	size_t live = 0;
	for (size_t i = 0; i < a->funcs.n; i++) {
		const struct agg_counts *c = agg_view_get(v, &f[i].c, i);
		live += c != NULL && c->total > 0;
	}
	out->funcs = live ? malloc(live * sizeof *out->funcs) : NULL;
	out->nfuncs = 0;
	for (size_t i = 0; i < a->funcs.n; i++) {
		const struct agg_counts *c = agg_view_get(v, &f[i].c, i);
		if (c != NULL && c->total > 0 && out->funcs != NULL)
			out->funcs[out->nfuncs++] = (struct snap_func){
				.name = f[i].name,
				.file = f[i].file,
				.line = f[i].line,
				.c = agg_snap_counts(a, c),
				.native = f[i].native,
				.module = f[i].module,
				.other = i == 0,
			};
		agg_close_window(&f[i].c);
	}
	agg_close_row_windows(&a->tfuncs);
	agg_close_row_windows(&a->pfuncs);
	if (out->nfuncs > 1)
		qsort(out->funcs, out->nfuncs, sizeof *out->funcs,
		      agg_cmp_func);
}

static void agg_snap_lines(struct aggregator *a, const struct agg_view *v,
                           struct snapshot *out)
{
	struct agg_line *l = agg_lines(a);
	size_t live = 0;
	for (size_t i = 0; i < a->lines.n; i++) {
		const struct agg_counts *c = agg_view_get(v, &l[i].c, i);
		live += c != NULL && c->total > 0;
	}
	out->lines = live ? malloc(live * sizeof *out->lines) : NULL;
	out->nlines = 0;
	for (size_t i = 0; i < a->lines.n; i++) {
		const struct agg_counts *c = agg_view_get(v, &l[i].c, i);
		if (c != NULL && c->total > 0 && out->lines != NULL)
			out->lines[out->nlines++] = (struct snap_line){
				.name = l[i].name,
				.file = l[i].file,
				.line = l[i].line,
				.c = agg_snap_counts(a, c),
				.native = l[i].native,
				.module = l[i].module,
				.other = i == 0,
			};
		agg_close_window(&l[i].c);
	}
	agg_close_row_windows(&a->tlines);
	agg_close_row_windows(&a->plines);
	if (out->nlines > 1)
		qsort(out->lines, out->nlines, sizeof *out->lines,
		      agg_cmp_line);
}

static void agg_snap_callees(struct aggregator *a, const struct agg_view *v,
                             struct snapshot *out)
{
	struct agg_callee *c = agg_callees(a);
	size_t live = 0;
	for (size_t i = 0; i < a->callees.n; i++) {
		const struct agg_counts *k = agg_view_get(v, &c[i].c, i);
		live += k != NULL && k->own > 0;
	}
	out->callees = live ? malloc(live * sizeof *out->callees) : NULL;
	out->ncallees = 0;
	for (size_t i = 0; i < a->callees.n; i++) {
		const struct agg_counts *k = agg_view_get(v, &c[i].c, i);
		const struct agg_line *caller = &agg_lines(a)[c[i].line];
		const struct agg_func *f = &agg_funcs(a)[c[i].func];
		if (k != NULL && k->own > 0 && out->callees != NULL)
			out->callees[out->ncallees++] = (struct snap_callee){
				.caller_file = caller->file,
				.caller_line = caller->line,
				.name = f->name, .file = f->file,
				.line = f->line, .module = f->module,
				.c = agg_snap_counts(a, k),
			};
		agg_close_window(&c[i].c);
	}
	agg_close_row_windows(&a->tcallees);
	agg_close_row_windows(&a->pcallees);
	if (out->ncallees > 1)
		qsort(out->callees, out->ncallees, sizeof *out->callees,
		      snapshot_callee_cmp);
}

static double agg_cpu_pct(uint64_t now, uint64_t base, uint64_t span_ns)
{
	/* A smaller figure means the TID now names another thread. */
	return now > base ? 100.0 * (double)(now - base) / (double)span_ns : 0;
}

/* Turn the window's reports into percentages and start the next window
 * at its last report.  A window without reports (refreshes faster than
 * reports) keeps the previous figures. */
static void agg_close_cpu_window(struct aggregator *a)
{
	if (a->win_reports == 0)
		return;
	uint64_t span = a->win_last_ns > a->win_start_ns
	                ? a->win_last_ns - a->win_start_ns : 0;
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++) {
		struct agg_cpu *c = &t[i].cpu;
		bool known = span > 0 && c->has_base;
		c->user_pct = known ? agg_cpu_pct(c->utime, c->base_utime, span)
		                    : 0;
		c->sys_pct = known ? agg_cpu_pct(c->stime, c->base_stime, span)
		                   : 0;
		/* of its own process's reports: each process reports apart */
		uint64_t nwin = 0;
		(void)hashmap_get(&a->reports_win_by_pid, (uint32_t)t[i].pid, &nwin);
		c->gil_pct = nwin ? 100.0 * c->gil_win / (double)nwin : 0;
		c->base_utime = c->utime;
		c->base_stime = c->stime;
		c->gil_win = 0;
	}
	a->win_start_ns = a->win_last_ns;
	a->win_reports = 0;
	hashmap_clear(&a->reports_win_by_pid);
}

static void agg_snap_threads(struct aggregator *a, struct snapshot *out)
{
	agg_close_cpu_window(a);
	agg_age_threads(a);
	struct agg_thread *t = agg_threads(a);
	size_t n = a->threads.n;
	out->threads = n ? malloc(n * sizeof *out->threads) : NULL;
	out->nthreads = out->threads != NULL ? n : 0;
	for (size_t i = 0; i < n; i++) {
		if (out->threads != NULL)
			out->threads[i] = (struct snap_thread){
				.tid = t[i].tid,
				.name = t[i].name,
				.py_name = t[i].py_name,
				.samples = t[i].samples,
				.samples_win = t[i].samples_win,
				.running = t[i].running,
				.top_func = t[i].top_func,
				.state = agg_thread_state(a, &t[i]),
				.os_state = t[i].os_state,
				.cpu_user_pct = t[i].cpu.user_pct,
				.cpu_sys_pct = t[i].cpu.sys_pct,
				.gil_pct = t[i].cpu.gil_pct,
			};
		t[i].samples_win = 0;
	}
	if (out->nthreads > 1)
		qsort(out->threads, out->nthreads, sizeof *out->threads,
		      agg_cmp_thread);
}

/* What 100 % is: every sample with a Python stack, or the filtered
 * thread's; closes the sample window of both. */
static void agg_snap_samples(struct aggregator *a, struct snapshot *out)
{
	uint64_t idx;
	out->samples = a->samples;
	out->samples_win = a->samples_win;
	out->split = a->split;
	out->split_win = a->split_win;
	if (a->filter == 0 && a->pfilter != 0)
		proc_table_py_samples(a->procs, a->pfilter, &out->samples,
		                      &out->samples_win);
	if (a->filter != 0) {
		out->samples = out->samples_win = 0;
		out->split = out->split_win = (struct snap_split){ 0 };
		if (hashmap_get(&a->thread_by_tid, (uint32_t)a->filter, &idx)) {
			const struct agg_thread *ft = &agg_threads(a)[idx];
			out->samples = ft->py_samples;
			out->samples_win = ft->py_samples_win;
			out->split = ft->split;
			out->split_win = ft->split_win;
		}
	}
	a->samples_win = 0;
	a->split_win = (struct snap_split){ 0 };
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++) {
		t[i].py_samples_win = 0;
		t[i].split_win = (struct snap_split){ 0 };
	}
}

/* Each process's most sampled leaf function in the window (since start
 * if it had none in the window). */
static void agg_process_tops(struct aggregator *a, struct snapshot *out)
{
	const struct agg_trow *r = agg_trows(&a->pfuncs);
	struct { uint64_t win, all; } *best;
	if (out->nprocesses == 0 ||
	    (best = calloc(out->nprocesses, sizeof *best)) == NULL)
		return;
	for (size_t i = 0; i < a->pfuncs.n; i++)
		for (size_t k = 0; k < out->nprocesses; k++) {
			struct snap_process *p = &out->processes[k];
			if (p->pid != r[i].tid)
				continue;
			bool win = r[i].c.own_win > best[k].win;
			if (win || (best[k].win == 0 && r[i].c.own > best[k].all))
				p->top_func = agg_funcs(a)[r[i].row].name;
			if (win)
				best[k].win = r[i].c.own_win;
			if (r[i].c.own > best[k].all)
				best[k].all = r[i].c.own;
		}
	free(best);
}

/* The per-thread or per-process rows the filters select, if any. */
static bool agg_filtered_views(struct aggregator *a, struct agg_view *fv,
                               struct agg_view *lv, struct agg_view *cv)
{
	if (a->filter != 0)
		return agg_view_filtered(&a->tfuncs, a->funcs.n, a->filter, fv) &&
		       agg_view_filtered(&a->tlines, a->lines.n, a->filter, lv) &&
		       agg_view_filtered(&a->tcallees, a->callees.n, a->filter, cv);
	if (a->pfilter != 0)
		return agg_view_filtered(&a->pfuncs, a->funcs.n, a->pfilter, fv) &&
		       agg_view_filtered(&a->plines, a->lines.n, a->pfilter, lv) &&
		       agg_view_filtered(&a->pcallees, a->callees.n, a->pfilter, cv);
	return true;
}

/* "[other]" sums its rows' totals: a sample with two folded functions on
 * its stack counts twice there, so cap it at what 100 % is. */
static void agg_clamp_other(struct snap_counts *c, const struct snapshot *s)
{
	if (c->total > s->samples)
		c->total = s->samples;
	if (c->total_win > s->samples_win)
		c->total_win = s->samples_win;
}

/* The rows' strings copied into the snapshot: the string table they come
 * from is replaced at the next sweep.  Without memory for them, no rows. */
static void agg_snap_strings(struct snapshot *out)
{
	if (!snapshot_own_strings(out))
		snapshot_free(out);
}

/* A stack frame's function, for the snapshot (stack_snapshot.h). */
static bool agg_describe(void *ctx, uint32_t code_id, int line, struct snap_frame *out)
{
	return aggregator_describe_frame(ctx, code_id, line, out);
}

/* A thread that is gone moves its counters no more: what it left queued
 * is settled with its lifetime ratios now, not at the end of the run. */
static void agg_settle_gone(struct aggregator *a)
{
	struct agg_thread *t = agg_threads(a);
	for (size_t i = 0; i < a->threads.n; i++)
		if (t[i].queue.n > 0 && agg_thread_state(a, &t[i]) == THREAD_GONE)
			agg_settle_lifetime(a, &t[i]);
}

/* The row counters' functions, lines and callees into `to` (its rows
 * only), their windows closed. */
static void agg_snap_counted(struct aggregator *a, struct snapshot *to)
{
	struct agg_view fv = { NULL }, lv = { NULL }, cv = { NULL };
	/* Without memory for the filter's map, no rows rather than the
	 * wrong ones. */
	bool ok = agg_filtered_views(a, &fv, &lv, &cv);
	agg_snap_funcs(a, &fv, to);
	agg_snap_lines(a, &lv, to);
	agg_snap_callees(a, &cv, to);
	if (!ok) {
		free(to->funcs);
		free(to->lines);
		free(to->callees);
		to->funcs = NULL;
		to->lines = NULL;
		to->callees = NULL;
		to->nfuncs = to->nlines = to->ncallees = 0;
	}
	free(fv.by_row);
	free(lv.by_row);
	free(cv.by_row);
}

/* Keep the rows of d that have samples (callees: own ones), sorted, as
 * out's; d's arrays move into out. */
static void agg_take_derived(struct stack_derived *d, struct snapshot *out)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].c.total > 0)
			d->funcs[n++] = d->funcs[i];
	out->funcs = n ? d->funcs : NULL;
	out->nfuncs = n;
	if (n == 0)
		free(d->funcs);
	n = 0;
	for (size_t i = 0; i < d->nlines; i++)
		if (d->lines[i].c.total > 0)
			d->lines[n++] = d->lines[i];
	out->lines = n ? d->lines : NULL;
	out->nlines = n;
	if (n == 0)
		free(d->lines);
	n = 0;
	for (size_t i = 0; i < d->ncallees; i++)
		if (d->callees[i].c.own > 0)
			d->callees[n++] = d->callees[i];
	out->callees = n ? d->callees : NULL;
	out->ncallees = n;
	if (n == 0)
		free(d->callees);
	*d = (struct stack_derived){ .funcs = NULL };
	if (out->nfuncs > 1)
		qsort(out->funcs, out->nfuncs, sizeof *out->funcs, agg_cmp_func);
	if (out->nlines > 1)
		qsort(out->lines, out->nlines, sizeof *out->lines, agg_cmp_line);
	if (out->ncallees > 1)
		qsort(out->callees, out->ncallees, sizeof *out->callees, snapshot_callee_cmp);
}

/* Functions, lines and callees counted from out's stacks, as the
 * filters select; none on OOM. */
static void agg_snap_derived(const struct aggregator *a, struct snapshot *out)
{
	struct stack_derived d;
	if (stack_derive(out, a->filter, a->filter ? 0 : a->pfilter, &d))
		agg_take_derived(&d, out);
}

static void agg_snapshot_rows(struct aggregator *a, struct snapshot *out,
                              struct snapshot *counted)
{
	struct snapshot scratch = { .funcs = NULL };
	agg_sweep(a);
	agg_settle_gone(a);
	agg_provisional(a, 1);
	proc_table_snapshot(a->procs, a->empty, out);
	agg_process_tops(a, out);
	agg_snap_counted(a, counted != NULL ? counted : &scratch);
	snapshot_free(&scratch);
	stack_snapshot_emit(&a->stacks, &a->kept_clock, agg_describe, a, out);
	agg_snap_folded_rows(a, out);
	stack_table_close_window(&a->stacks);
	folded_rows_close_window(&a->folded);
	agg_snap_samples(a, out);
	agg_snap_derived(a, out);
	/* The windows are closed: the queued samples' windows too. */
	a->win++;
	agg_provisional(a, -1);
	agg_snap_threads(a, out);
	/* The counters' "[other]" adds up its rows' totals: at most 100 %.
	 * The stacks' counts a sample once. */
	for (size_t i = 0; counted != NULL && i < counted->nfuncs; i++)
		if (counted->funcs[i].other)
			agg_clamp_other(&counted->funcs[i].c, out);
	for (size_t i = 0; counted != NULL && i < counted->nlines; i++)
		if (counted->lines[i].other)
			agg_clamp_other(&counted->lines[i].c, out);
	out->folded_funcs = a->folded_funcs;
	out->folded_lines = a->folded_lines;
	agg_snap_strings(out);
}

void aggregator_snapshot(struct aggregator *a, struct snapshot *out)
{
	agg_snapshot_rows(a, out, NULL);
}

void agg_snapshot_counted(struct aggregator *a, struct snapshot *out)
{
	struct snapshot counted = { .funcs = NULL };
	agg_snapshot_rows(a, out, &counted);
	free(out->funcs);
	free(out->lines);
	free(out->callees);
	out->funcs = counted.funcs;
	out->nfuncs = counted.nfuncs;
	out->lines = counted.lines;
	out->nlines = counted.nlines;
	out->callees = counted.callees;
	out->ncallees = counted.ncallees;
}

