/* native_perf.h - (--native) the target's user registers and the top of
 * its user stack, copied by the kernel at a perf event's sample: no thread
 * is ever stopped.  Used only by the sampler thread.
 *
 * One software event per sampled target thread (task-clock: it fires only
 * while the thread runs, once per sample period of its CPU time: a
 * quarter of the sampling period, not under 100 us), each with its own
 * ring buffer mapped read-write (the reader moves data_tail; a full ring
 * drops the kernel's newest records, never overwrites what is being
 * read).  A thread off CPU (--idle) has no fresh sample: the sampler
 * unwinds it from where /proc says it is blocked (sampler.c).
 *
 * A runnable thread (state R) is sampled by the CPU time it ran, as the
 * truth a profile is read against: once per sampling period of its CPU
 * time (its task-clock count, in its newest perf sample), at the first
 * tick after it ran another period.  At the other ticks it has been
 * waiting for a CPU since, and its stack has not moved: sampling it then
 * too would count that wait as if it ran (wall time runnable, which on a
 * busy machine comes in the scheduler's slices of milliseconds, the same
 * stack over and over: issue 14's Python line shares 5-8 points off under
 * load).  It is not counted in native_missed either: nothing was missed.
 * (The ptrace path leaves such a thread out too, as it does not stop
 * within the tick, but counts it there.)
 *
 * Pairing with the Python stack read at a tick: the newest sample of the
 * thread.  A runnable thread (state R: on a CPU or waiting for one) takes
 * it only if it ran at most one and a half sample periods of CPU time
 * between the sample and the end of the Python stack's read (one, and
 * half as much for the task-clock timer's lateness and the read itself):
 * the sample is at most that old by the wall clock, or else the thread's
 * task-clock count now (one read) is at most that far past the count in
 * the sample.  The native stack is then at most that far behind the
 * Python one, whether the thread ran all along or sat in the run queue
 * since it was preempted; a short C call loses that much at its start,
 * not a whole sampling period.  Anything else is no native stack this
 * tick (native_missed): never a stale one.
 */
#ifndef PYTOP_NATIVE_PERF_H
#define PYTOP_NATIVE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "errors.h"

/* Bytes of user stack the kernel copies per sample (from the stack
 * pointer up): the innermost frames, which change; callers beyond it are
 * read from the target's memory by the unwinder (they cannot change
 * until those calls return). */
#define NATIVE_PERF_STACK (16u * 1024u)

/* One thread's newest sample, owned by native_perf. */
struct native_perf_sample {
	pid_t tid;
	uint64_t time_ns;            /* CLOCK_MONOTONIC of the sample */
	uint64_t cpu_ns;             /* its task-clock count: CPU time since
	                                the event was opened */
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

/* Whether perf events may sample the process: opens (and keeps) its main
 * thread's.  -1 and *err (why, and what would permit it) when not. */
int native_perf_probe(struct native_perf *np, struct pytop_error *err);

/* Start a tick's list of threads; native_perf_watch each thread of it,
 * with `open` for those to sample now (their event is opened the first
 * time: false when refused or gone; a thread that never runs never costs
 * an event, a descriptor and a ring); native_perf_end closes the events
 * of threads no longer listed. */
void native_perf_begin(struct native_perf *np);
bool native_perf_watch(struct native_perf *np, pid_t tid, bool open);
void native_perf_end(struct native_perf *np);

/* Close every event (pytop paused for job control: the target should not
 * pay for samples nobody reads); the next tick opens them afresh, its
 * CPU-time reference too.  np may be NULL. */
void native_perf_close_all(struct native_perf *np);

/* Read every watched thread's ring, keeping its newest sample. */
void native_perf_drain(struct native_perf *np);

/* Whether runnable thread tid is sampled this tick, and with which
 * native stack (see the rules above). */
enum native_perf_pairing {
	NATIVE_PERF_PAIRED,  /* *out: the sample to pair with its Python stack */
	NATIVE_PERF_NOT_DUE, /* it did not run a sampling period of CPU since
	                        it was last due: not sampled this tick */
	NATIVE_PERF_MISSED,  /* due, but no sample young enough (or none) */
};

/* For a Python stack whose read ended at read_ns; a period that came due
 * is used up by this call. */
enum native_perf_pairing native_perf_pair(struct native_perf *np, pid_t tid, uint64_t read_ns,
                                          const struct native_perf_sample **out);

#endif
