/* cpu_split.h - how a thread's CPU time is split between Python, native
 * and system for each of its samples.
 *
 * The kernel tells a thread's user and system time only in clock ticks
 * (/proc/.../stat, 10 ms), and a sample rate of 1 kHz sees ten samples per
 * tick.  So a running sample is queued until the thread's counters move;
 * the system share of that movement, f = dsys / (duser + dsys), is then
 * shared out over the queued samples: first over the native ones (system
 * calls are made from native code: a C function the leaf frame is
 * calling, or code running without the GIL), and only what exceeds them
 * over the Python ones (page faults and signals hit bytecode too).  What
 * is not system stays the sample's own class.  Counters are cumulative, so
 * the error of one tick is repaid by the next: totals do not drift.
 *
 * A step of a counter is 10 ms of that kind of CPU time, most of which may
 * have run before the samples it shows among: a thread 95 % in system
 * calls steps its user time once per 200 ms, among only the samples since
 * its system time last stepped, so shared over just those its user time
 * came out short (a fifth short on test_split's read_file, 40 % on
 * test_split_carry's streams).  So where the thread's run time is known
 * (schedstat, ns) the movement is kept as a carry: each settling adds its
 * step to the carry, takes the system fraction f of the carry, and takes
 * out as much as the thread ran since the previous settling; what is left
 * (at most half a tick, SPLIT_CARRY_MAX_NS) goes into the next settling's
 * f.  Where the run time is not known, f is the movement's own.
 *
 * A running sample is one of a thread in state R: on a CPU, or in the run
 * queue waiting for one.  The scheduler's run time and run-queue delay
 * (schedstat, ns) tell the two apart, but late: the kernel adds a wait
 * when it ends, so one span's figures may hold another span's wait.  So
 * the share is kept right over the thread's life instead: its runnable
 * samples so far, times delay / (run + delay) since the first of them,
 * is how many of them waited for a CPU; each settling gives the queued
 * samples what that figure grew by (w each), and only the rest of each
 * is split as above.  A runnable sample of a thread
 * waiting for the GIL takes its share of the run-queue wait too; the rest
 * of it stays a GIL wait. */
#ifndef PYTOP_CPU_SPLIT_H
#define PYTOP_CPU_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A queued sample: the rows it feeds (opaque to this module); UINT32_MAX
 * = none. */
struct split_item {
	uint32_t cell;                  /* the stack table's cell */
	uint32_t func, line;            /* its own function and line rows, and */
	uint32_t caller;                /* its callee's Python line row if its
	                                   leaf is native (else UINT32_MAX): for
	                                   the folded entries, once the cell
	                                   folds into "[other stacks]" */
	uint32_t win;                   /* the aggregator's window it was counted in */
	bool native;
	bool gil;  /* waiting for the GIL: runnable, so it may wait for a CPU
	              too, but none of the thread's CPU time is shared to it */
};

/* What one sample of each class becomes: fractions of one sample. */
struct split_share {
	double python, native, system;
};

struct split_queue {
	struct split_item *items; /* owned */
	size_t n, cap, n_native, n_gil;
	bool has_last;
	uint64_t last_user, last_sys; /* counters when the queue last emptied */
	bool has_sched;
	uint64_t base_run, base_delay; /* schedstat at the first runnable sample */
	uint64_t run, delay;           /* ... and at the newest one */
	double seen;                   /* runnable samples since the first */
	double waited;                 /* the CPU wait given to them so far */
	bool has_settled_run;
	uint64_t settled_run;          /* run time at the last settling */
	double carry_user, carry_sys;  /* counter movement (ns) the thread's
	                                  run time has not matched yet */
};

/* The most movement carried from one settling to the next: half a tick
 * of the counters (USER_HZ, 100 on every Linux).  A carry moves time
 * later than it ran, across the end of what the thread was doing when it
 * ends (test_split's phases); half a tick kept its figures closest to
 * their truth (p90 1.1 pp against 1.5 with a whole tick and 2.1-2.4
 * without a carry, idle and loaded).  The rest is dropped. */
#define SPLIT_CARRY_MAX_NS 5e6

/* Samples queued beyond this (a thread whose counters never move) are
 * settled with the thread's lifetime ratio. */
#define SPLIT_QUEUE_MAX 4096

/* The shares of a native and of a Python item when a fraction f of the
 * time of n items (n_native of them native) was system time. */
void cpu_split_shares(size_t n, size_t n_native, double f,
                      struct split_share *native_item,
                      struct split_share *python_item);

/* Queue one running sample.  false on OOM (the sample is then not
 * split: the caller counts it as its class). */
bool split_queue_push(struct split_queue *q, struct split_item item);

/* The thread's counters at the newest sample (call split_queue_sched
 * first).  Returns true when the queue is due: the counters moved (*f =
 * the system fraction of the movement, with the carry, see above) or the
 * queue is full (*f = lifetime ratio).  Then the caller
 * applies cpu_split_shares to every item and calls split_queue_clear.
 * Counters that went backwards (the TID names another thread now) start
 * afresh with f = 0. */
bool split_queue_due(struct split_queue *q, uint64_t user_ns,
                     uint64_t sys_ns, double *f);

/* The thread's schedstat counters at the newest sample (0, 0: unknown,
 * ignored).  Counters that went backwards start afresh. */
void split_queue_sched(struct split_queue *q, uint64_t run_ns, uint64_t delay_ns);

/* The share w of each queued sample that waited for a CPU (see above),
 * as far as the counters tell so far; 0 when unknown. */
double split_queue_wait_share(const struct split_queue *q);

/* The same, booked as given: call once per settling, before
 * split_queue_clear. */
double split_queue_take_wait(struct split_queue *q);

/* The lifetime system fraction: for settling what is left at the end. */
double split_queue_lifetime(const struct split_queue *q);

/* Empty the queue (its samples settled). */
void split_queue_clear(struct split_queue *q);

/* Empty the queue of samples that will never settle (their counts were
 * reset): they leave the runnable samples seen too. */
void split_queue_drop(struct split_queue *q);
void split_queue_free(struct split_queue *q);

#endif
