/* perf_rings.h - (--native) one ring buffer per online CPU, fed by the
 * task-clock perf events of every thread of one process, those it starts
 * later included.  Used only by the sampler thread (native_perf.c).
 *
 * Each thread the process has when the rings open gets one event per
 * CPU (pid = the thread, cpu = that CPU: it counts and samples only that
 * thread, only while it runs there), inherited (inherit, inherit_thread)
 * by every thread it starts from then on, and theirs in turn: a thread
 * that lives a few milliseconds is sampled from its first instruction,
 * before pytop has ever listed it.  The kernel maps an inherited event's
 * ring only per CPU (not with cpu -1), so every event of a CPU writes
 * into that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT), as `perf record`
 * does, and the sample's TID says whose it is.
 *
 * The sample period is short (100 us of a thread's CPU time): a thread's
 * events start a whole one when it starts, so a thread that runs less in
 * its life is never sampled.  Each ring holds a sampling period's samples
 * of its CPU (2 MiB per CPU at 100 Hz, at most 64 MiB in all; a longer
 * sample period where the locked-memory allowance maps less).
 *
 * Each sample carries the thread's user registers and stack top and,
 * where the kernel permits it with inherit (Linux 6.12: PERF_SAMPLE_READ
 * with PERF_SAMPLE_TID), the thread's task-clock count on that CPU.  A
 * ring is read without a system call (data_head from its control page);
 * a full ring drops the kernel's newest records (mapped read-write: the
 * reader moves data_tail), never overwrites what is being read.
 */
#ifndef PYTOP_PERF_RINGS_H
#define PYTOP_PERF_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bytes of user stack the kernel copies per sample (from the stack
 * pointer up): the innermost frames, which change; callers beyond it are
 * read from the target's memory by the unwinder (they cannot change
 * until those calls return). */
#define PERF_RINGS_STACK (16u * 1024u)

/* The user registers each sample carries, in perf's order (the kernel
 * writes them by ascending bit): those native_unwind.c's reg_value reads. */
#define PERF_RINGS_NREGS 17
extern const int perf_rings_regs[PERF_RINGS_NREGS];

struct perf_rings;

/* period_ns: the sampling period.  NULL on OOM or when the online CPUs
 * cannot be listed. */
struct perf_rings *perf_rings_new(pid_t pid, uint64_t period_ns);
void perf_rings_free(struct perf_rings *pr);

/* Open the events of every thread of the process that has none of its
 * own yet (listed again until no new one shows up, as a thread started
 * while its parent's events were opening inherits none).  0 when the
 * process's threads have events; -1 with errno (EACCES/EPERM: perf
 * events refused; ESRCH: the process is gone; EPERM from mmap: over the
 * locked-memory allowance) when none could be opened. */
int perf_rings_open(struct perf_rings *pr);
bool perf_rings_is_open(const struct perf_rings *pr);
/* Whether tid was listed when the events opened but its own could not be
 * (out of descriptors, over a limit): it has no samples, nor have the
 * threads it starts. */
bool perf_rings_refused(const struct perf_rings *pr, pid_t tid);
/* Close every event and ring (pytop paused, or the target ran exec). */
void perf_rings_close(struct perf_rings *pr);

size_t perf_rings_count(const struct perf_rings *pr);
/* The events' sample period, CPU time between two samples of a thread on
 * one CPU, set when they open: 100 us, or longer where the rings (the
 * locked-memory allowance) cannot hold a sampling period's samples at
 * that. */
uint64_t perf_rings_sample_ns(const struct perf_rings *pr);
/* Whether samples carry the thread's task-clock count (PERF_SAMPLE_READ);
 * whether kernel-mode samples were refused (perf_event_paranoid 2:
 * a sample that falls in a system call is then not taken). */
bool perf_rings_read_count(const struct perf_rings *pr);
bool perf_rings_user_only(const struct perf_rings *pr);

/* The records of ring i not yet consumed: bytes [tail, head) of data,
 * a ring of size bytes. */
struct perf_ring_span {
	const uint8_t *data;
	uint64_t size, tail, head;
};

/* False when ring i has no events (its CPU refused them). */
bool perf_rings_span(const struct perf_rings *pr, size_t i, struct perf_ring_span *out);
/* Everything up to head read: the kernel may write there again. */
void perf_rings_consume(struct perf_rings *pr, size_t i, uint64_t head);
/* len (<= size) bytes at ring offset off, wrapping. */
void perf_ring_copy(const struct perf_ring_span *s, uint64_t off, void *dst, size_t len);

#endif
