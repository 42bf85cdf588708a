/* cpu_split.c - sharing a thread's system time, known per clock tick, over
 * its queued samples, native ones first (cpu_split.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/cpu_split.h"

#include <stdlib.h>

void cpu_split_shares(size_t n, size_t n_native, double f,
                      struct split_share *native_item,
                      struct split_share *python_item)
{
	double sys = (f < 0 ? 0 : f > 1 ? 1 : f) * (double)n;
	size_t n_python = n - n_native;
	double on_native = n_native == 0 ? 0 : sys < (double)n_native ? sys : (double)n_native;
	double on_python = n_python == 0 ? 0 : (sys - on_native) / (double)n_python;

	if (on_python > 1)
		on_python = 1;
	*native_item = (struct split_share){
		.native = n_native ? 1 - on_native / (double)n_native : 0,
		.system = n_native ? on_native / (double)n_native : 0,
	};
	*python_item = (struct split_share){
		.python = 1 - on_python,
		.system = on_python,
	};
}

bool split_queue_push(struct split_queue *q, struct split_item item)
{
	if (q->n == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 16;
		struct split_item *nv = realloc(q->items, ncap * sizeof(*nv));

		if (nv == NULL)
			return false;
		q->items = nv;
		q->cap = ncap;
	}
	q->items[q->n++] = item;
	q->seen += q->has_sched;
	q->n_native += item.native;
	q->n_gil += item.gil;
	return true;
}

double split_queue_lifetime(const struct split_queue *q)
{
	uint64_t all = q->last_user + q->last_sys;

	return all ? (double)q->last_sys / (double)all : 0;
}

/* Start measuring settlings by the run time from its newest reading. */
static void split_carry_restart(struct split_queue *q)
{
	q->has_settled_run = q->has_sched;
	q->settled_run = q->run;
	q->carry_user = q->carry_sys = 0;
}

/* The system fraction of a movement of du, ds with the carry, the carry
 * then less what the thread ran since the last settling (cpu_split.h). */
static double split_carry_f(struct split_queue *q, uint64_t du, uint64_t ds)
{
	double moved, ran, take, f;

	if (!q->has_settled_run || q->run < q->settled_run) {
		split_carry_restart(q);
		return (double)ds / (double)(du + ds);
	}
	q->carry_user += (double)du;
	q->carry_sys += (double)ds;
	moved = q->carry_user + q->carry_sys;
	f = q->carry_sys / moved;
	ran = (double)(q->run - q->settled_run);
	take = ran < moved ? ran : moved;
	q->carry_user -= take * (1 - f);
	q->carry_sys -= take * f;
	moved -= take;
	if (moved > SPLIT_CARRY_MAX_NS) {
		q->carry_user *= SPLIT_CARRY_MAX_NS / moved;
		q->carry_sys *= SPLIT_CARRY_MAX_NS / moved;
	}
	q->settled_run = q->run;
	return f;
}

bool split_queue_due(struct split_queue *q, uint64_t user_ns, uint64_t sys_ns,
                     double *f)
{
	uint64_t du, ds;

	if (!q->has_last || user_ns < q->last_user || sys_ns < q->last_sys) {
		bool restart = q->has_last;

		q->has_last = true;
		q->last_user = user_ns;
		q->last_sys = sys_ns;
		split_carry_restart(q);
		*f = 0;
		return restart && q->n > 0;
	}
	du = user_ns - q->last_user;
	ds = sys_ns - q->last_sys;
	if (du + ds == 0) {
		*f = split_queue_lifetime(q);
		return q->n >= SPLIT_QUEUE_MAX;
	}
	*f = split_carry_f(q, du, ds);
	q->last_user = user_ns;
	q->last_sys = sys_ns;
	return true;
}

void split_queue_sched(struct split_queue *q, uint64_t run_ns, uint64_t delay_ns)
{
	if (run_ns == 0 && delay_ns == 0)
		return;
	if (!q->has_sched || run_ns < q->run || delay_ns < q->delay) {
		/* First sight, or another thread behind the TID: its queued
		 * samples are the first of the new life. */
		q->has_sched = true;
		q->base_run = run_ns;
		q->base_delay = delay_ns;
		q->seen = (double)q->n;
		q->waited = 0;
		q->run = run_ns;
		split_carry_restart(q);
	}
	q->run = run_ns;
	q->delay = delay_ns;
}

double split_queue_wait_share(const struct split_queue *q)
{
	uint64_t dr = q->run - q->base_run, dd = q->delay - q->base_delay;
	double ratio, w;

	if (!q->has_sched || q->n == 0)
		return 0;
	if (dr + dd == 0) { /* not moved yet: its life so far */
		dr = q->run;
		dd = q->delay;
	}
	ratio = dr + dd ? (double)dd / (double)(dr + dd) : 0;
	w = (ratio * q->seen - q->waited) / (double)q->n;
	return w < 0 ? 0 : w > 1 ? 1 : w;
}

double split_queue_take_wait(struct split_queue *q)
{
	double w = split_queue_wait_share(q);

	q->waited += w * (double)q->n;
	return w;
}

void split_queue_clear(struct split_queue *q)
{
	q->n = q->n_native = q->n_gil = 0;
}

void split_queue_drop(struct split_queue *q)
{
	q->seen = q->seen > (double)q->n ? q->seen - (double)q->n : 0;
	split_queue_clear(q);
}

void split_queue_free(struct split_queue *q)
{
	free(q->items);
	*q = (struct split_queue){ 0 };
}
