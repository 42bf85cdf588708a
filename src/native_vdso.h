/* native_vdso.h - the unwind table of the target's vDSO.  The kernel maps
 * its vDSO image without a file behind it, so libunwind-ptrace, which
 * opens the file of the mapping an address is in, finds no unwind
 * information there, and every sample taken inside clock_gettime() and
 * friends would lose its callers.  The image carries its own
 * .eh_frame_hdr; this points libunwind at it in the target's memory. */
#ifndef PYTOP_NATIVE_VDSO_H
#define PYTOP_NATIVE_VDSO_H

#include <libunwind.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vdso_table {
	bool loaded;          /* vdso_table_load ran (found or not) */
	bool ok;              /* di describes the vDSO's table */
	uint64_t lo, hi;      /* the [vdso] mapping in the target */
	unw_dyn_info_t di;    /* UNW_INFO_FORMAT_REMOTE_TABLE */
};

/* Find pid's [vdso] mapping and its .eh_frame_hdr (once; later calls
 * return the first answer).  false when there is none or it is not in the
 * form the kernel builds (datarel sdata4 binary search table). */
bool vdso_table_load(struct vdso_table *t, pid_t pid);

/* Is ip inside the vDSO, with a table to unwind it? */
static inline bool vdso_table_has(const struct vdso_table *t, uint64_t ip)
{
	return t->ok && ip >= t->lo && ip < t->hi;
}

#endif
