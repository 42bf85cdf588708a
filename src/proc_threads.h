/* proc_threads.h - per-thread kernel facts of the target, read from
 * /proc/PID/task/TID/stat through descriptors kept open (a pread on a kept
 * descriptor costs a third of open+read+close). */
#ifndef PYTOP_PROC_THREADS_H
#define PYTOP_PROC_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct proc_threads;

struct proc_threads *proc_threads_new(pid_t pid);
void proc_threads_free(struct proc_threads *pt);

/* Scheduler state letter of thread tid ('R', 'S', 'D', ...), or 0 when the
 * thread is gone or unreadable. */
char proc_threads_state(struct proc_threads *pt, pid_t tid);

/* The thread's OS name (comm), NUL-terminated, "" when unknown. */
void proc_threads_name(pid_t pid, pid_t tid, char name[16]);

/* Close descriptors of threads not touched since the last call (threads
 * that exited); call once per tick after all proc_threads_state calls. */
void proc_threads_sweep(struct proc_threads *pt);

#endif
