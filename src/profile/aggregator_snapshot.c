/* aggregator_snapshot.c - the aggregator's counts into a snapshot (see
 * aggregator.h for what each row counts): the stacks (stack_snapshot.h)
 * and what the folded ones were samples of (folded_rows.h); functions,
 * lines and callees, global or of the filtered thread or process,
 * counted from those (stack_derive.h); threads with their state, CPU and
 * GIL shares over the window; each process's top function, from the
 * stacks too; and the window closed for every cell and thread. */
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


static int agg_cmp_thread(const void *pa, const void *pb)
{
	const struct snap_thread *a = pa, *b = pb;
	return (a->tid > b->tid) - (a->tid < b->tid);
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

/* One process's own samples of one function: all, and in the window. */
struct agg_own {
	pid_t pid;
	uint32_t func;
	uint64_t all, win;
};

/* Add own samples of function row func in process pid; false on OOM. */
static bool agg_own_add(struct hashmap *by_key, struct agg_vec *own, pid_t pid, uint32_t func,
                        uint64_t all, uint64_t win)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | func, idx;
	struct agg_own *o;
	if (!hashmap_get(by_key, key, &idx)) {
		if (!agg_vec_reserve(own, sizeof *o) || !hashmap_put(by_key, key, own->n))
			return false;
		idx = own->n++;
		((struct agg_own *)own->items)[idx] = (struct agg_own){ .pid = pid, .func = func };
	}
	o = &((struct agg_own *)own->items)[idx];
	o->all += all;
	o->win += win;
	return true;
}

/* Every process's own samples per leaf function, from the stack cells
 * and what the folded ones were samples of, in the order first counted;
 * false on OOM. */
static bool agg_process_own(const struct aggregator *a, struct agg_vec *own)
{
	const struct stack_table *t = &a->stacks;
	struct agg_frame_rows fr;
	struct hashmap by_key;
	bool ok = true;
	hashmap_init(&by_key);
	for (size_t i = 0; ok && i < t->ncells; i++) {
		const struct stack_cell *c = &t->cells[i];
		if (c->samples > 0 && c->node > STACK_OTHER && c->node < t->nnodes &&
		    agg_frame_rows(a, t, t->nodes[c->node].frame, &fr))
			ok = agg_own_add(&by_key, own, c->pid, fr.func, c->samples, c->samples_win);
	}
	for (size_t i = 0; ok && i < a->folded.n; i++) {
		const struct folded_row *r = &a->folded.rows[i];
		if (r->dim == FOLDED_FUNC && r->c.own > 0)
			ok = agg_own_add(&by_key, own, r->pid, r->row, r->c.own, r->c.own_win);
	}
	hashmap_destroy(&by_key);
	return ok;
}

/* Each process's most sampled leaf function in the window (since start
 * if it had none in the window); none on OOM. */
static void agg_process_tops(struct aggregator *a, struct snapshot *out)
{
	struct { uint64_t win, all; } *best;
	struct agg_vec own = { NULL, 0, 0 };
	if (out->nprocesses == 0 ||
	    (best = calloc(out->nprocesses, sizeof *best)) == NULL)
		return;
	if (agg_process_own(a, &own))
		for (size_t i = 0; i < own.n; i++) {
			const struct agg_own *o = &((const struct agg_own *)own.items)[i];
			for (size_t k = 0; k < out->nprocesses; k++) {
				struct snap_process *p = &out->processes[k];
				if (p->pid != o->pid)
					continue;
				bool win = o->win > best[k].win;
				if (win || (best[k].win == 0 && o->all > best[k].all))
					p->top_func = agg_funcs(a)[o->func].name;
				if (win)
					best[k].win = o->win;
				if (o->all > best[k].all)
					best[k].all = o->all;
			}
		}
	free(own.items);
	free(best);
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
		qsort(out->funcs, out->nfuncs, sizeof *out->funcs, snapshot_func_cmp);
	if (out->nlines > 1)
		qsort(out->lines, out->nlines, sizeof *out->lines, snapshot_line_cmp);
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

void aggregator_snapshot(struct aggregator *a, struct snapshot *out)
{
	agg_sweep(a);
	agg_settle_gone(a);
	agg_provisional(a, 1);
	proc_table_snapshot(a->procs, a->empty, out);
	agg_process_tops(a, out);
	stack_snapshot_emit(&a->stacks, &a->kept_clock, agg_describe, a, out);
	agg_snap_folded_rows(a, out);
	stack_table_close_window(&a->stacks);
	folded_rows_close_window(&a->folded);
	agg_snap_samples(a, out);
	proc_table_close_window(a->procs);
	agg_snap_derived(a, out);
	/* The windows are closed: the queued samples' windows too. */
	a->win++;
	agg_provisional(a, -1);
	agg_snap_threads(a, out);
	out->folded_funcs = a->folded_funcs;
	out->folded_lines = a->folded_lines;
	agg_snap_strings(out);
}
