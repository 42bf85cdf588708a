/* crash_stop.h - a launched program must not outlive pytop by accident.
 *
 * When pytop ends normally (quit, the time is up, SIGINT/SIGTERM/SIGHUP)
 * target_terminate stops the program and its descendants.  When pytop
 * dies of a fatal signal (SIGSEGV, SIGABRT, SIGBUS, SIGFPE) nothing of that
 * runs, so while armed this file's handler SIGKILLs the program and every
 * descendant it finds in /proc, then lets pytop die of the signal.  It
 * uses only async-signal-safe calls and static memory.  (SIGKILL of pytop
 * cannot be caught: the program's PR_SET_PDEATHSIG covers that case, and
 * its descendants then run on.)
 */
#ifndef PYTOP_CRASH_STOP_H
#define PYTOP_CRASH_STOP_H

#include <sys/types.h>

/* Install the handlers for the family of `pid` (launch mode only: pytop
 * never signals a process it attached to). */
void crash_stop_arm(pid_t pid);

/* The program has been reaped (its PID may be reused at once): forget
 * it.  The handlers stay (a view may have chained its own to them) and
 * only let pytop die of the signal. */
void crash_stop_disarm(void);

#endif
