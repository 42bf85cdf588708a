/* scatter.h - one process_vm_readv built from ranges that several owners
 * (the thread list, the frame walker's guesses, the code checks) queue
 * into it.  Each optional range names a flag that says whether it
 * arrived: the kernel stops at the first unreadable range, and everything
 * after it is then marked missing.
 *
 * The kernel's cost is per range (a page walk under the target's mmap
 * lock each), not per byte: ranges that lie on one page are read as one
 * range covering them all, the bytes between them sunk into a scratch
 * page.  That changes nothing of what arrives: a page is readable whole
 * or not at all, and the merged range takes the place of the page's
 * first range in the read's order.  It does move a range's read earlier
 * within the call: an owner whose ranges must be read after those queued
 * so far (a code's fingerprint after the stack that names it) puts a
 * scatter_barrier between them. */
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
	/* The merged read, rebuilt by every scatter_read (scatter.c). */
	struct iovec *glocal, *gremote; /* 2 * cap and cap */
	uint32_t *read_as;            /* per range: its range in the merged read */
	uint32_t *epoch_of;           /* per range: barriers queued before it */
	uint32_t epoch;               /* barriers queued so far this read */
	uint32_t *next;               /* per range: the next range of its page */
	uint32_t *head, *tail;        /* per page group: its first and last range */
	uintptr_t *gpage;             /* per page group: the page */
	uint32_t *gepoch;             /* per page group: its ranges' epoch */
	uint32_t *pages;              /* open addressing: page group + 1, or 0 */
	uint32_t *order;              /* one group's ranges, by address */
	size_t pages_mask, page;
	unsigned page_shift;          /* page == 1 << page_shift */
	uint8_t *sink;                /* one page: the bytes between ranges */
	size_t ranges_read;           /* by the last scatter_read */
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
/* Ranges queued from now on are read after every range queued so far:
 * none joins a page's range begun before the barrier. */
void scatter_barrier(struct scatter *s);
/* Read every queued range in one system call.  Returns how many leading
 * ranges arrived (0 when none, errno set by remote_readv).  A range after
 * the first missing one may still arrive, on a page read before it: its
 * flag says so. */
size_t scatter_read(struct scatter *s, pid_t pid);
/* The ranges the last scatter_read asked the kernel for. */
size_t scatter_ranges_read(const struct scatter *s);

#endif
