/* native_threads.h - the threads of a process that has no Python runtime
 * (pytop --native on a C program), listed from /proc/PID/task each tick
 * and described like Python threads with no Python frame, so the sampler
 * treats both kinds of target alike. */
#ifndef PYTOP_NATIVE_THREADS_H
#define PYTOP_NATIVE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "target/proc_threads.h"
#include "cpython/py_reader.h"

struct native_threads;

struct native_threads *native_threads_new(pid_t pid); /* NULL on OOM */
void native_threads_free(struct native_threads *nt);

/* List the threads and read their state; status PY_THREAD_OK for those
 * to sample (on a CPU, or any but uninterruptible ones with `idle`).
 * Returns the number of threads, -1 when the process is gone. */
int native_threads_sample(struct native_threads *nt, struct proc_threads *pt, bool idle);
const struct py_thread_sample *native_threads_get(const struct native_threads *nt, size_t i);

#endif
