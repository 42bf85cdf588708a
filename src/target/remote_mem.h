/* remote_mem.h - the only code that reads another process's memory.
 * Reads never stop, signal or write to the target. */
#ifndef PYTOP_REMOTE_MEM_H
#define PYTOP_REMOTE_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Copy len bytes at remote address addr into buf.  0 on success; -1 on any
 * failure or short read, with errno: ESRCH (process gone), EPERM
 * (permission), EFAULT (unmapped). */
int remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);

/* Scatter read: n ranges in one system call.  Returns how many leading
 * ranges were copied completely (the kernel stops at the first bad one), or
 * -1 with errno when none could be (ESRCH/EPERM/EFAULT). */
int remote_readv(pid_t pid, const struct iovec *local,
                 const struct iovec *remote, int n);

/* Gather read: nremote ranges into one stream spread over nlocal buffers
 * (their lengths add up to the ranges'), in one system call: a range
 * that covers several small ones on one page costs the kernel one page
 * walk instead of one per range (docs/cost.md, "Ranges on one page").
 * Returns how many leading remote ranges were copied completely, or -1
 * with errno as remote_readv.  Both counts must be at most IOV_MAX. */
int remote_readv_gather(pid_t pid, const struct iovec *local, int nlocal,
                        const struct iovec *remote, int nremote);

/* Number of process_vm_readv calls made by this thread (for the benchmark
 * and tests of the per-sample system-call budget). */
uint64_t remote_calls(void);

#endif
