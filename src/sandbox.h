/* sandbox.h - the seccomp filter that stops pytop from writing into any
 * process.  Once the target is attached or launched, pytop has no use for
 * process_vm_writev, for the ptrace requests that change a tracee (poke
 * memory or registers, set signals or options, resume it with a signal),
 * for starting programs or processes, or for changing the system; the
 * filter makes each of them fail with EPERM in every pytop thread, so a bug
 * or a hostile target that steers pytop into one cannot make it happen.
 * The launched program and its children never inherit the filter: it is
 * installed after the fork, in pytop alone. */
#ifndef PYTOP_SANDBOX_H
#define PYTOP_SANDBOX_H

#include <sys/types.h>

#include "errors.h"

/* Install the filter on every thread of the calling process (existing ones
 * and those it starts later).  attached: the target in attach mode, which
 * pytop must not signal either (signal 0, "are you alive", stays allowed);
 * 0 in launch mode, where pytop ends the program it started.  0 on
 * success; -1 with *err naming why the kernel refused it (no seccomp
 * support, say) and the fix: pytop then goes on without it, and says so. */
int sandbox_install(pid_t attached, struct pytop_error *err);

#endif
