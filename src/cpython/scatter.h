/* scatter.h - one process_vm_readv built from ranges that several owners
 * (the thread list, the frame walker's guesses, the code checks) queue
 * into it.  Each optional range names a flag that says whether it
 * arrived: the kernel stops at the first unreadable range, and everything
 * after it is then marked missing. */
#ifndef PYTOP_SCATTER_H
#define PYTOP_SCATTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "cpython/mem_region.h"

struct scatter {
	struct iovec *local, *remote; /* cap each, in the reader's mem_region */
	bool **arrived;               /* likewise: per range, its owner's flag or NULL */
	size_t n, cap;
};

/* The vectors come from mem and go with it. */
int scatter_init(struct scatter *s, struct mem_region *mem, size_t cap);
void scatter_reset(struct scatter *s);
/* Room for `more` ranges? */
bool scatter_room(const struct scatter *s, size_t more);
/* Queue [addr, addr + len) into buf; *arrived (if not NULL) is set true
 * now and false by scatter_read when the range does not arrive.  The
 * caller checks scatter_room first. */
void scatter_add(struct scatter *s, void *buf, uintptr_t addr, size_t len,
                 bool *arrived);
/* Read every queued range in one system call.  Returns how many leading
 * ranges arrived (0 when none, errno set by remote_readv). */
size_t scatter_read(struct scatter *s, pid_t pid);

#endif
