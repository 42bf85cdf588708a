/* job_control.h - pytop's own job control: SIGTSTP (Ctrl-Z), SIGTTIN and
 * SIGTTOU stop pytop only once the sampler has released every thread of
 * the target it was sampling.
 *
 * With --native the sampler is the ptrace tracer of the thread it samples,
 * and a traced thread in its sample's stop waits for its tracer: had pytop
 * stopped with it held, the target would stay frozen for as long as pytop
 * is stopped.  So each of these signals is caught: the handler asks the
 * sampler to release everything and pause (sampler_pause), stops pytop
 * with the signal's default action (so the shell sees the usual stop, and
 * an orphaned process group ignores it as for any program), and on
 * SIGCONT resumes sampling.  The terminal is the view's business: the TUI
 * chains its own SIGTSTP handler in front of this one (ui/crt.c).
 *
 * SIGSTOP cannot be caught: it may catch the threads of the sample in
 * progress, which then stay stopped until pytop continues (the kernel lets
 * no one but their tracer release them); native_unwind.h keeps that
 * window as short as it can. */
#ifndef PYTOP_JOB_CONTROL_H
#define PYTOP_JOB_CONTROL_H

struct sampler;

/* Install the handlers for s, on the main thread: the handler does its
 * work there (another thread that receives a signal passes it on), so it
 * interrupts the same thread as the view's own handlers. */
void job_control_install(struct sampler *s);

/* Put back the handlers found at install, if s installed them. */
void job_control_remove(struct sampler *s);

#endif
