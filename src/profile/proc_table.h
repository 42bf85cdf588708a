/* proc_table.h - the aggregator's process rows (-s): one per process of
 * the followed family, from REC_PROCESS records, with per-window CPU and
 * the samples counted for it.  Consumer thread only.
 *
 * Exited processes stay listed (state exited) until more than
 * PROC_TABLE_KEEP_EXITED have exited; then the oldest exits are dropped,
 * so thousands of short-lived children cost a bounded table.  Their
 * samples stay in every total.
 */
#ifndef PYTOP_PROC_TABLE_H
#define PYTOP_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/record.h"
#include "profile/snapshot.h"
#include "profile/strtab.h"

#define PROC_TABLE_KEEP_EXITED 32

struct proc_table;

struct proc_table *proc_table_new(struct strtab *strings); /* strings borrowed */
void proc_table_free(struct proc_table *pt);

/* One REC_PROCESS (size checked); false if malformed or out of memory.
 * *exited is set to the PID when the record says the process exited,
 * else to 0. */
bool proc_table_report(struct proc_table *pt, const void *rec, size_t size,
                       pid_t *exited);

/* Count one sample of pid's (nothing if pid is not listed). */
void proc_table_sample(struct proc_table *pt, pid_t pid, bool python_stack);

/* Python-stack samples of pid since start and in this window (0 if not
 * listed), for percentages under a process filter. */
void proc_table_py_samples(const struct proc_table *pt, pid_t pid,
                           uint64_t *total, uint64_t *win);

/* Fill out->processes in tree order (a parent before its children, by
 * PID; depth set) and close the CPU window.  top_func is left "" for the
 * caller.  On OOM the array is NULL with count 0.  The sample window
 * stays open: proc_table_py_samples may still read it. */
void proc_table_snapshot(struct proc_table *pt, const char *empty, struct snapshot *out);

/* Close the sample window (samples_win and the Python-stack ones), once
 * the snapshot has read both. */
void proc_table_close_window(struct proc_table *pt);

/* What a REC_PROCESS said of pid: its parent, command line and Python
 * version or why it is not sampled (strings interned, valid until the
 * next sweep).  false when pid is not listed. */
bool proc_table_describe(const struct proc_table *pt, pid_t pid, pid_t *ppid,
                         const char **command, const char **python);

/* Zero the counts (the `r` key) and drop exited processes. */
void proc_table_reset(struct proc_table *pt);

#endif
