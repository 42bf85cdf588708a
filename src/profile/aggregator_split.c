/* aggregator_split.c - the aggregator's split (aggregator.h: "The
 * split"): each sample's memory charged at once and its time classified,
 * runnable samples queued per thread until its CPU counters move
 * (cpu_split.h), then settled; every share goes to the sample's stack
 * cell (or, once the cell folded into "[other stacks]", its rows'
 * entries: folded_rows.h), its thread and the total.  Memory given back
 * goes to the thread's previous sample; kept-memory marks at each
 * boundary. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>

#include "profile/aggregator_priv.h"
#include "transport/record.h"

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
 * lands in the code that does it.  Either is in the window the sample
 * telling it counts in (it->win): the memory was given back then,
 * whichever window the previous sample counted in. */
static void agg_charge_shrink(struct aggregator *a, struct agg_thread *t,
                              const struct rec_sample *s, const struct split_item *it)
{
	struct snap_split d = { .mem_shrink = s->mem_shrink };
	struct split_item prev;

	if (s->mem_shrink > 0) {
		bool to_prev = agg_prev_item(a, t, &prev);
		prev.win = it->win;
		agg_split_apply(a, t, to_prev ? &prev : it, &d);
	}
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
void agg_split_sample(struct aggregator *a, struct agg_thread *t,
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
