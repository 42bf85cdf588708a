/* native_perf.h - (--native, its default way) the target's user registers
 * and the top of its user stack, copied by the kernel at a perf event's
 * sample: no thread is ever stopped.  Used only by the sampler thread.
 *
 * The events are perf_rings.h's: task-clock (it fires only while a thread
 * runs), once per sample period of a thread's CPU time on a CPU (100 us,
 * or longer where the rings cannot hold a tick's samples at that), on
 * every thread of the target, those it starts later included
 * (inherited): a thread that lives a millisecond has samples by the first
 * tick that lists it.  A thread's first sample period of CPU (its
 * start-up) has no sample: a tick then is not sampled.
 * Each ring's samples are sorted by thread here; a thread keeps its newest
 * and its task-clock count on each CPU.  A thread off CPU (--idle) has no
 * fresh sample: the sampler unwinds it from where /proc says it is blocked
 * (sampler.c).
 *
 * A runnable thread (state R) is sampled by the CPU time it ran, as the
 * truth a profile is read against: once per sampling period of its CPU
 * time (its task-clock counts, summed over the CPUs, at its newest
 * samples; without the count in the samples, before Linux 6.12, a sample
 * period per sample), at the first tick after it ran another period (the
 * first is due at its first sample: a thread that lives less than a
 * period is sampled once if a tick finds it running after that).  At
 * the other ticks it has been waiting for a CPU since, and its stack has
 * not moved: sampling it then too would count that wait as if it ran
 * (wall time runnable, which on a busy machine comes in the scheduler's
 * slices of milliseconds, the same stack over and over: issue 14's Python
 * line shares 5-8 points off under load).  It is not counted in
 * native_missed either: nothing was missed.  (The ptrace path leaves such
 * a thread out too, as it does not stop within the tick, but counts it
 * there.)
 *
 * Pairing with the Python stack read at a tick: the newest sample of the
 * thread.  A runnable thread takes it only if it ran at most one and a
 * half sample periods of CPU time between the sample and the end of the
 * Python stack's read (one, and half as much for the task-clock timer's
 * lateness and the read itself): the sample is at most that old by the
 * wall clock, or else the CPU time it ran since is bounded by the two
 * parts: up to the first tick that looked at it (its wall-clock age then,
 * and at most one sample period, as a thread that ran a whole one more on
 * that CPU would have a newer sample: unless samples were lost or only
 * user-mode ones are taken), and since (the scheduler's run time,
 * schedstat, which the sampler reads at each tick).  The native stack is
 * then at most that far behind the Python one, whether the thread ran all
 * along or sat in the run queue since it was preempted; a short C call
 * loses that much at its start, not a whole sampling period.  A thread
 * that moved to another CPU since may have run up to one sample period
 * more there unseen.  Anything else is no native stack this tick
 * (native_missed): never a stale one.
 */
#ifndef PYTOP_NATIVE_PERF_H
#define PYTOP_NATIVE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "errors.h"

#include "sampler/perf_rings.h"

#define NATIVE_PERF_STACK PERF_RINGS_STACK

/* One thread's newest sample, owned by native_perf. */
struct native_perf_sample {
	pid_t tid;
	uint64_t time_ns;            /* CLOCK_MONOTONIC of the sample */
	uint64_t cpu_ns;             /* its task-clock counts summed: CPU time
	                                since its events were opened */
	struct user_regs_struct regs; /* those perf sampled; the rest 0 */
	uint64_t stack_base;         /* target address of stack[0] (= sp) */
	size_t stack_len;            /* bytes the kernel could copy */
	uint8_t *stack;              /* NATIVE_PERF_STACK bytes */
};

struct native_perf;

/* NULL on OOM. */
/* period_ns: the sampling period (the events sample a fraction of it). */
struct native_perf *native_perf_new(pid_t pid, uint64_t period_ns);
void native_perf_free(struct native_perf *np);

/* Whether perf events may sample the process: opens (and keeps) the
 * events of all its threads.  -1 and *err (why, and what would permit
 * it) when not. */
int native_perf_probe(struct native_perf *np, struct pytop_error *err);

/* Start a tick's list of threads (the events are opened again first if
 * they were closed); native_perf_watch each thread of it;
 * native_perf_end forgets the threads neither listed nor sampled since
 * the tick before. */
void native_perf_begin(struct native_perf *np);
void native_perf_watch(struct native_perf *np, pid_t tid);
void native_perf_end(struct native_perf *np);

/* Close every event (pytop paused for job control: the target should not
 * pay for samples nobody reads; or the target ran exec); the next tick
 * opens them afresh, the CPU-time references too.  np may be NULL. */
void native_perf_close_all(struct native_perf *np);

/* Read every ring, keeping each thread's newest sample. */
void native_perf_drain(struct native_perf *np);

/* Whether runnable thread tid is sampled this tick, and with which
 * native stack (see the rules above). */
enum native_perf_pairing {
	NATIVE_PERF_PAIRED,  /* *out: the sample to pair with its Python stack */
	NATIVE_PERF_NOT_DUE, /* it did not run a sampling period of CPU since
	                        it was last due: not sampled this tick */
	NATIVE_PERF_MISSED,  /* due, but no sample young enough (or none) */
};

/* For a Python stack whose read ended at read_ns, the thread's scheduler
 * run time then run_ns (schedstat); a period that came due is used up by
 * this call. */
enum native_perf_pairing native_perf_pair(struct native_perf *np, pid_t tid, uint64_t read_ns,
                                          uint64_t run_ns,
                                          const struct native_perf_sample **out);

#endif
