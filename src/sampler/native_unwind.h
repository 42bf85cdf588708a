/* native_unwind.h - the native (C) stacks of a target's threads, through
 * ptrace and libunwind, whose accessors here read only the target's
 * memory and registers: unwinding opens no file (native_ehframe.h).  Used
 * only by the sampler thread, which is the tracer (ptrace is per thread).
 *
 * A thread is traced only while one sample of it is taken: PTRACE_SEIZE
 * (which does not stop it), PTRACE_INTERRUPT, wait for the stop, copy its
 * registers and the top of its stack, PTRACE_DETACH (which resumes it),
 * then unwind the copy.  Between samples nothing is attached,
 * so the target's signals, job control, fork and execve behave as without
 * pytop, and if pytop dies in any way the kernel detaches the one thread
 * that may be traced at that moment and lets it run on.
 *
 * Requests are batched: every thread of a tick is interrupted first, then
 * each is unwound and resumed as soon as it stops.  A runnable thread that
 * is waiting for a CPU only stops once the scheduler runs it; waiting for
 * each in turn would cost the sum of those waits per tick (tens of ms with
 * 32 busy threads on 2 CPUs), waiting for all at once costs the longest.
 * A thread that has not stopped by the tick's deadline stays requested and
 * is taken (or, if no longer wanted, just released) at a later collect:
 * it has not run in between, so its stack is still the one asked for.
 *
 * A stopped tracee waits for its tracer: while the sampler thread is
 * stopped (pytop got SIGSTOP), so is any thread it was sampling, and no one
 * else may release it.  Hence the stop lasts only for the copy, and before
 * pytop stops for job control the sampler releases everything
 * (native_unwind_release_all).
 */
#ifndef PYTOP_NATIVE_UNWIND_H
#define PYTOP_NATIVE_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "errors.h"
#include "sampler/native_ehframe.h"
#include "transport/record.h"

#define NATIVE_MAX_FRAMES REC_MAX_NATIVE_FRAMES

struct native_unwind;

/* NULL on OOM. */
struct native_unwind *native_unwind_new(pid_t pid);
/* Releases every thread still requested (waiting for each to stop, for at
 * most a moment; the kernel releases the rest when the sampler exits). */
void native_unwind_free(struct native_unwind *u);

/* Whether the calling thread may trace the process: seizes and releases
 * its main thread once.  -1 and *err (what --native needs) when not. */
int native_unwind_probe(struct native_unwind *u, struct pytop_error *err);

/* Ask thread tid to stop for a sample at the next collect.  False when
 * it cannot be traced (gone, traced by someone else, no permission). */
bool native_unwind_request(struct native_unwind *u, pid_t tid);

/* Called for each requested thread once it stopped and was unwound,
 * before it is resumed: ips[0] is where it was, then return addresses,
 * outermost last. */
typedef void native_unwind_fn(void *ctx, pid_t tid, const uint64_t *ips, int nips);

/* Unwind thread tid from registers and a copy of its stack from
 * stack_base (perf's sample, native_perf.h: no stop); memory outside the
 * copy is read from the target.  Returns the IPs taken, innermost first. */
int native_unwind_copy(struct native_unwind *u, pid_t tid, const struct user_regs_struct *regs,
                       uint64_t stack_base, const uint8_t *stack, size_t stack_len,
                       uint64_t *ips, int max);

/* Take the requested threads as they stop, until all are taken or
 * deadline_ns (CLOCK_MONOTONIC) passes.  Returns how many were taken. */
int native_unwind_collect(struct native_unwind *u, uint64_t deadline_ns,
                          native_unwind_fn *fn, void *ctx);

/* Release every thread still requested: wait for each to stop (until
 * deadline_ns) and detach it.  Returns how many could not be released (a
 * thread stuck in uninterruptible sleep; they stop when it ends). */
int native_unwind_release_all(struct native_unwind *u, uint64_t deadline_ns);

/* A collect ends early, with the threads not yet taken still requested,
 * once *flag is true (borrowed; NULL: never). */
void native_unwind_set_abort(struct native_unwind *u, const atomic_bool *flag);

/* The modules the unwinder met since the last call, each offered to fn
 * until fn takes it (the sampler's REC_MODULE records). */
void native_unwind_announce_modules(struct native_unwind *u, ehframe_announce_fn *fn, void *ctx);

#endif
