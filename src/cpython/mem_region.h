/* mem_region.h - the memory of one sampled process's reader: blocks
 * mapped for it alone, handed out in 16-byte steps, never freed one by
 * one, unmapped together when the reader ends.
 *
 * Why not malloc: pytop -s makes and drops a reader per process, each
 * with some 11 MiB of tables (the tick arena, thread slots, the walker's
 * per-slot state, the scatter read's vectors, code checks) of which a
 * process touches a few hundred KiB.  From glibc's heap those tables
 * fragment it (a fork storm took pytop past 22 MiB: freed tables stayed
 * resident between long-lived blocks) unless every block above 128 KiB is
 * mapped on its own, and that global setting (M_MMAP_THRESHOLD) in turn
 * made the heap of everything else grow by megabytes under thread and
 * process churn.  Mapped here, a table costs only the pages the process
 * touches, and all of them go back to the kernel when it ends, whatever
 * the heap does.
 *
 * Only what lives as long as the reader belongs here: what a reader frees
 * and makes again (code names, line tables) stays on malloc. */
#ifndef PYTOP_MEM_REGION_H
#define PYTOP_MEM_REGION_H

#include <stddef.h>

struct mem_block;

struct mem_region {
	struct mem_block *blocks; /* owned: the newest first */
	size_t used, cap;         /* in the newest small-allocation block */
	size_t mapped;            /* bytes mapped, all blocks */
};

void mem_region_init(struct mem_region *m);

/* n zeroed bytes, 16-byte aligned, valid until mem_region_release; NULL
 * when the kernel refuses a mapping (errno set). */
void *mem_region_alloc(struct mem_region *m, size_t n);

/* Unmap every block: everything allocated from m is gone.  m may be
 * initialised again. */
void mem_region_release(struct mem_region *m);

#endif
