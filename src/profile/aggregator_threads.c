/* aggregator_threads.c - the aggregator's threads (aggregator_priv.h):
 * a thread's row made on first sight, its names and its state from the
 * REC_THREAD, REC_THREAD_PY_NAME, REC_THREADS and REC_PROCESS records,
 * which threads are gone, the gone ones aged out beyond the most recent
 * few, and the listed ones kept, zeroed, by a reset.  What a thread's
 * samples counted is not here: aggregator.c forgets the rows of the
 * threads that went (agg_threads_dropped).
 *
 * Thread state and CPU come from REC_THREADS, a few per second: the state
 * is the latest report's; CPU and GIL shares are per window (snapshot to
 * snapshot).  A window starts at the previous window's last report, so no
 * CPU time falls between two windows; a thread first reported mid-window
 * starts at its first report.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregator_priv.h"
#include "transport/record.h"

/* The thread row for tid, created on first use; NULL on OOM. */
struct agg_thread *agg_thread_row(struct aggregator *a, int32_t tid)
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
		.py_name = hashmap_get(&a->thread_py_names, (uint32_t)tid, &name)
		                   ? (const char *)(uintptr_t)name
		                   : a->empty,
		.top_func = a->empty,
	};
	return t;
}

void agg_ingest_thread(struct aggregator *a, const uint8_t *rec,
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

/* The program's name for a thread: kept like the OS name. */
void agg_ingest_thread_py_name(struct aggregator *a, const uint8_t *rec,
                               size_t size)
{
	struct rec_thread_py_name r;
	if (size < sizeof r) {
		a->bad++;
		return;
	}
	memcpy(&r, rec, sizeof r);
	if (r.name_len > REC_MAX_THREAD_PY_NAME || sizeof r + r.name_len > size) {
		a->bad++;
		return;
	}
	const char *name = strtab_intern(a->strings, (const char *)rec + sizeof r,
	                                 r.name_len, NULL);
	struct agg_thread *t = name != NULL && hashmap_put(&a->thread_py_names,
	                                                   (uint32_t)r.tid, (uintptr_t)name)
	                               ? agg_thread_row(a, r.tid)
	                               : NULL;
	if (t == NULL) {
		a->bad++;
		return;
	}
	t->py_name = name;
}

/* One thread of a REC_THREADS record. */
static void agg_thread_report(struct aggregator *a, pid_t pid,
                              const struct rec_thread_state *r)
{
	if (r->tid <= 0) /* not bound to an OS thread yet */
		return;
	struct agg_thread *t = agg_thread_row(a, r->tid);
	if (t == NULL) {
		a->bad++;
		return;
	}
	if (t->report == a->report_serial) /* listed twice: the first wins */
		return;
	t->report = a->report_serial;
	t->pid = pid;
	t->os_state = r->state;
	t->flags = r->flags;
	struct agg_cpu *c = &t->cpu;
	if (!c->has_base) {
		c->has_base = true;
		c->base_utime = r->utime_ns;
		c->base_stime = r->stime_ns;
	}
	c->utime = r->utime_ns;
	c->stime = r->stime_ns;
	c->gil_win += (r->flags & SAMPLE_HAS_GIL) != 0;
}

void agg_ingest_threads(struct aggregator *a, const uint8_t *rec,
                        size_t size)
{
	struct rec_threads r;
	if (size < sizeof r) {
		a->bad++;
		return;
	}
	memcpy(&r, rec, sizeof r);
	if ((size - sizeof r) / sizeof(struct rec_thread_state) < r.nthreads) {
		a->bad++;
		return;
	}
	if (a->report_serial++ == 0)
		a->win_start_ns = r.time_ns; /* the very first window */
	a->win_last_ns = r.time_ns;
	a->win_reports++;
	/* Each process reports its own threads: a thread is gone when its
	 * own process's latest report left it out. */
	uint64_t nwin = 0;
	(void)hashmap_put(&a->report_by_pid, (uint32_t)r.pid, a->report_serial);
	(void)hashmap_get(&a->reports_win_by_pid, (uint32_t)r.pid, &nwin);
	(void)hashmap_put(&a->reports_win_by_pid, (uint32_t)r.pid, nwin + 1);
	for (uint32_t i = 0; i < r.nthreads; i++) {
		struct rec_thread_state ts;
		memcpy(&ts, rec + sizeof r + i * sizeof ts, sizeof ts);
		agg_thread_report(a, r.pid, &ts);
	}
}

void agg_ingest_process(struct aggregator *a, const uint8_t *rec,
                        size_t size)
{
	pid_t exited;
	if (!proc_table_report(a->procs, rec, size, &exited))
		a->bad++;
	/* No report of its threads will come: they are all gone now. */
	if (exited != 0)
		(void)hashmap_put(&a->report_by_pid, (uint32_t)exited, 0);
}

/* The state at the latest report: R and the GIL say running with or
 * without it; off CPU, asking for the GIL is a wait, anything else idle.
 * A thread the latest report left out is gone; one never reported yet
 * (sampled between two reports) is unknown. */
static bool agg_thread_listed(const struct aggregator *a,
                              const struct agg_thread *t)
{
	uint64_t latest;
	return t->report != 0 &&
	       hashmap_get(&a->report_by_pid, (uint32_t)t->pid, &latest) &&
	       t->report == latest;
}

static bool agg_thread_gone(const struct aggregator *a,
                            const struct agg_thread *t);

enum snap_thread_state agg_thread_state(const struct aggregator *a,
                                               const struct agg_thread *t)
{
	if (t->report == 0)
		return agg_thread_gone(a, t) ? THREAD_GONE : THREAD_UNKNOWN;
	if (!agg_thread_listed(a, t))
		return THREAD_GONE;
	/* Runnable without the GIL and not in a call that released it:
	 * woken to take the GIL, not running native code. */
	bool gil_waiter = (t->flags & SAMPLE_GIL_KNOWN) &&
	                  !(t->flags & (SAMPLE_HAS_GIL | SAMPLE_IN_CALL));
	if (t->os_state == 'R' && !gil_waiter)
		return (t->flags & SAMPLE_HAS_GIL) ? THREAD_RUNNING_GIL
		                                   : THREAD_RUNNING;
	if (t->os_state == 'R')
		return THREAD_GIL_WAIT;
	return (t->flags & SAMPLE_GIL_WAIT) ? THREAD_GIL_WAIT : THREAD_IDLE;
}

/* ---- ageing out threads that are gone -------------------------------------
 * A service that starts a thread per request would otherwise grow the
 * thread table (and its stack cells) without bound.  The
 * AGG_KEEP_GONE_THREADS most recently gone stay listed; older ones go,
 * their cells merging into their process's (agg_threads_dropped).  Their
 * samples stay in every total and in their process's rows. */
#define AGG_KEEP_GONE_THREADS 64

static bool agg_thread_gone(const struct aggregator *a,
                            const struct agg_thread *t)
{
	uint64_t latest;
	if (t->report != 0)
		return !agg_thread_listed(a, t);
	/* Never listed: gone once its process reported after its last
	 * sample without it, or exited. */
	return hashmap_get(&a->report_by_pid, (uint32_t)t->pid, &latest) &&
	       (latest == 0 || latest > t->seen_serial);
}

/* When a gone thread was last known to live, for keeping the latest. */
static uint64_t agg_thread_last(const struct agg_thread *t)
{
	return t->report != 0 ? t->report : t->seen_serial;
}

/* A gone thread and when it was last known to live. */
struct agg_gone {
	uint64_t last;
	size_t index;
};

static int agg_cmp_gone_desc(const void *pa, const void *pb)
{
	const struct agg_gone *x = pa, *y = pb;
	if (x->last != y->last)
		return (x->last < y->last) - (x->last > y->last);
	return (x->index < y->index) - (x->index > y->index);
}

/* Mark in drop[] the gone threads beyond the AGG_KEEP_GONE_THREADS most
 * recently alive (many vanish together, listed in the same last report:
 * ties are cut too).  false when nothing is to go. */
static bool agg_gone_to_drop(const struct aggregator *a, bool *drop)
{
	const struct agg_thread *t = agg_threads(a);
	size_t gone = 0;
	for (size_t i = 0; i < a->threads.n; i++)
		gone += agg_thread_gone(a, &t[i]);
	if (gone <= AGG_KEEP_GONE_THREADS)
		return false;
	struct agg_gone *g = malloc(gone * sizeof *g);
	if (g == NULL)
		return false;
	gone = 0;
	for (size_t i = 0; i < a->threads.n; i++)
		if (agg_thread_gone(a, &t[i]))
			g[gone++] = (struct agg_gone){ agg_thread_last(&t[i]), i };
	qsort(g, gone, sizeof *g, agg_cmp_gone_desc);
	for (size_t k = AGG_KEEP_GONE_THREADS; k < gone; k++)
		drop[g[k].index] = true;
	free(g);
	return true;
}

void agg_age_threads(struct aggregator *a)
{
	bool *drop = a->threads.n ? calloc(a->threads.n, sizeof *drop) : NULL;
	if (drop == NULL || !agg_gone_to_drop(a, drop)) {
		free(drop);
		return;
	}
	struct agg_thread *t = agg_threads(a);
	size_t kept = 0;
	hashmap_clear(&a->thread_by_tid);
	hashmap_clear(&a->thread_names);
	hashmap_clear(&a->thread_py_names);
	for (size_t i = 0; i < a->threads.n; i++) {
		if (drop[i]) {
			agg_settle_lifetime(a, &t[i]);
			agg_thread_free(&t[i]);
			a->threads_dropped++;
			continue;
		}
		t[kept] = t[i];
		(void)hashmap_put(&a->thread_by_tid, (uint32_t)t[kept].tid, kept);
		(void)hashmap_put(&a->thread_names, (uint32_t)t[kept].tid,
		                  (uintptr_t)t[kept].name);
		(void)hashmap_put(&a->thread_py_names, (uint32_t)t[kept].tid,
		                  (uintptr_t)t[kept].py_name);
		kept++;
	}
	a->threads.n = kept;
	free(drop);
	agg_threads_dropped(a);
}

void agg_thread_free(struct agg_thread *t)
{
	split_queue_free(&t->queue);
	stack_memo_free(&t->memo);
	free(t->rows);
	t->rows = NULL;
	t->nrows = t->rows_cap = 0;
}

/* Keep the threads the latest report listed (they are still there; their
 * state and CPU are current figures, not counts), zeroed; drop the rest. */
void agg_reset_threads(struct aggregator *a)
{
	struct agg_thread *t = agg_threads(a);
	size_t kept = 0;
	hashmap_clear(&a->thread_by_tid);
	for (size_t i = 0; i < a->threads.n; i++) {
		/* Queued samples point at rows whose counts are going. */
		split_queue_drop(&t[i].queue);
		if (!agg_thread_listed(a, &t[i])) {
			agg_thread_free(&t[i]);
			continue;
		}
		t[kept] = t[i];
		t[kept].samples = t[kept].samples_win = 0;
		t[kept].py_samples = t[kept].py_samples_win = 0;
		t[kept].split = t[kept].split_win = (struct snap_split){ 0 };
		/* Cannot fail: the table already held more keys. */
		(void)hashmap_put(&a->thread_by_tid, (uint32_t)t[kept].tid,
		                  kept);
		kept++;
	}
	a->threads.n = kept;
}
