/* proc_threads.h - per-thread kernel facts of the target, read from
 * /proc/PID/task/TID/stat through descriptors kept open (a pread on a kept
 * descriptor costs a third of open+read+close). */
#ifndef PYTOP_PROC_THREADS_H
#define PYTOP_PROC_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_threads;

struct proc_threads *proc_threads_new(pid_t pid);
void proc_threads_free(struct proc_threads *pt);

struct proc_thread_stat {
	char state;        /* 'R', 'S', 'D', ...; 0 when gone or unreadable */
	uint64_t utime_ns; /* user CPU time (clock-tick resolution) */
	uint64_t stime_ns; /* system CPU time */
	uint64_t minflt, majflt; /* the thread's page faults since its previous
	                            read (0 at the first read) */
	bool faults_known;       /* the two above are a real difference (not
	                            the first read, the line whole) */
	uint64_t rss_bytes;      /* the whole process's resident set */
	uint64_t start_stack;    /* where the program's stack starts: an exec
	                            (a new program) moves it */
	/* State R only (runnable: on a CPU or in the run queue waiting for
	 * one), from /proc/PID/task/TID/schedstat: the time the thread has
	 * run and the time it has waited in the run queue, cumulative, in
	 * ns.  The kernel adds run-queue delay when the wait ends. */
	bool sched_known;
	uint64_t run_ns, delay_ns;
};

/* Read thread tid's /proc stat: one pread on a kept descriptor, and a
 * second one of its schedstat when it is runnable and that is due: at
 * its first runnable read, when its CPU time in stat moved (the tick at
 * which the split settles its queued samples with these figures), and
 * at least every 10 ms (sched_known says whether it was read).  Fault
 * deltas assume one reader per thread (the sampler). */
void proc_threads_read(struct proc_threads *pt, pid_t tid, struct proc_thread_stat *out);

/* The same without the wchan shortcut (proc_threads_light_sleepers): a
 * stat read whatever the thread did. */
void proc_threads_read_stat(struct proc_threads *pt, pid_t tid, struct proc_thread_stat *out);

/* When on, a thread asleep at its last stat read, under 100 ms ago, whose
 * /proc/PID/task/TID/wchan still names a wait, is not read again: its
 * state and times are those of that read, its faults unknown (a sleeping
 * thread neither runs nor faults; one woken since shows wchan "0").  For
 * the ticks that sample running threads only (no --idle). */
void proc_threads_light_sleepers(struct proc_threads *pt, bool on);

/* Read schedstat at every runnable read (--native by perf events pairs a
 * thread's samples by its run time at each tick). */
void proc_threads_sched_every_read(struct proc_threads *pt, bool on);

/* The fields of one /proc/.../stat line that proc_threads_read uses, in
 * the kernel's units. */
struct proc_stat_line {
	char state;
	uint64_t minflt, majflt;
	uint64_t utime_ticks, stime_ticks;
	uint64_t rss_pages;
	uint64_t start_stack;
};

/* Parse one NUL-terminated stat line (hostile: comm is the target's).
 * false when malformed; out->state is kept when the line is only
 * malformed after it, as proc_threads_read reports it. */
bool proc_threads_parse_stat(const char *line, struct proc_stat_line *out);

/* Parse a schedstat line ("run_ns delay_ns timeslices"): false when
 * malformed. */
bool proc_threads_parse_schedstat(const char *line, uint64_t *run_ns, uint64_t *delay_ns);

/* Whether thread tid is blocked in futex(2), and on which word (*uaddr),
 * from /proc/PID/task/TID/syscall through a kept descriptor.  Meant for
 * threads off CPU, a few times a second: the kernel waits for the thread
 * to be off CPU before it answers. */
bool proc_threads_futex(struct proc_threads *pt, pid_t tid, uint64_t *uaddr);

/* Parse one NUL-terminated /proc/.../syscall line: true with the futex
 * word in *uaddr when the thread is in futex(2). */
bool proc_threads_parse_syscall(const char *line, uint64_t *uaddr);

/* Where thread tid is blocked: its user stack pointer and program counter
 * from /proc/PID/task/TID/syscall (kept descriptor), false when it is
 * running or unreadable.  While it stays blocked its user stack cannot
 * change, so it can be unwound from there without stopping it. */
bool proc_threads_blocked_at(struct proc_threads *pt, pid_t tid, uint64_t *sp, uint64_t *pc);

/* Parse one NUL-terminated /proc/.../syscall line ("NR a1 ... a6 sp pc",
 * "-1 sp pc" or "running"): true with its last two fields. */
bool proc_threads_parse_blocked(const char *line, uint64_t *sp, uint64_t *pc);

/* The thread's OS name (comm), NUL-terminated, "" when unknown. */
void proc_threads_name(pid_t pid, pid_t tid, char name[16]);

/* Whether process pid has ended: no longer in /proc, dead, or a zombie
 * none of whose threads lives on.  A zombie stays in /proc until its
 * parent reaps it, which a busy supervisor or a container without a proper
 * init may never do; a zombie leader whose other threads still run (its
 * main thread called pthread_exit) has not ended.  Opens and reads /proc
 * files: a few times a second, not per thread per tick. */
bool proc_threads_ended(pid_t pid);

/* Thread tid as the target knows it (CPython's native_thread_id: its
 * gettid() inside its own PID namespace) -> the same thread's ID in pytop's
 * namespace, the one /proc, ptrace and the host's tools use.  The identity
 * when both namespaces are the same; for a target in a container, looked
 * up in a map rebuilt from /proc/PID/task/ * /status (NSpid) only when a
 * TID is not in it (new threads), at most every 20 ms.  0 when no thread
 * of the process has that ID (a torn or hostile thread state). */
pid_t proc_threads_host_tid(struct proc_threads *pt, pid_t tid);

/* Close descriptors of threads not touched since the last call (threads
 * that exited); call once per tick after all proc_threads_state calls. */
void proc_threads_sweep(struct proc_threads *pt);

#endif
