/* remote_mem.c - the only reads of another process's memory
 * (process_vm_readv), counted (remote_mem.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/remote_mem.h"

#include <errno.h>
#include <limits.h>
#include <sys/uio.h>

static _Thread_local uint64_t calls;

uint64_t remote_calls(void) { return calls; }

int remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)addr, .iov_len = len };
	ssize_t got;

	if (addr == 0) {
		errno = EFAULT;
		return -1;
	}
	calls++;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got == (ssize_t)len)
		return 0;
	if (got >= 0)
		errno = EFAULT;
	return -1;
}

int remote_readv(pid_t pid, const struct iovec *local,
                 const struct iovec *remote, int n)
{
	int done = 0;

	/* The kernel takes at most IOV_MAX ranges per call. */
	while (done < n) {
		int m = n - done < IOV_MAX ? n - done : IOV_MAX, i;
		size_t want = 0;
		ssize_t got;

		calls++;
		got = process_vm_readv(pid, local + done, (unsigned long)m,
		                       remote + done, (unsigned long)m, 0);
		if (got < 0)
			return done > 0 ? done : -1;
		/* The kernel never splits an element, so count whole leading ones. */
		for (i = 0; i < m; i++) {
			want += remote[done + i].iov_len;
			if ((size_t)got < want)
				return done + i;
		}
		done += m;
	}
	return n;
}

int remote_readv_gather(pid_t pid, const struct iovec *local, int nlocal,
                        const struct iovec *remote, int nremote)
{
	size_t want = 0;
	ssize_t got;
	int i;

	if (nlocal > IOV_MAX || nremote > IOV_MAX) {
		errno = EINVAL;
		return -1;
	}
	calls++;
	got = process_vm_readv(pid, local, (unsigned long)nlocal, remote,
	                       (unsigned long)nremote, 0);
	if (got < 0)
		return -1;
	for (i = 0; i < nremote; i++) {
		want += remote[i].iov_len;
		if ((size_t)got < want)
			break;
	}
	return i;
}
