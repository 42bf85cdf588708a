/* native_ehframe.h - unwind tables from the .eh_frame_hdr of each module
 * mapped in the target, read from the target's memory: no file is opened.
 *
 * pytop runs as root against other users' processes; a library's path in
 * /proc/PID/maps is one its user can swap (a FIFO would hang an open(), a
 * symbolic link would make root open a file of their choice), and in a
 * container it names a file of the container's image, not the host's.  The
 * loader maps PT_GNU_EH_FRAME (with the .eh_frame it indexes) in a PT_LOAD
 * segment, so the table libunwind needs is in the target's memory already,
 * the kernel's vDSO image included.  Objects without one get no table: the
 * unwinder then falls back to the frame-pointer chain. */
#ifndef PYTOP_NATIVE_EHFRAME_H
#define PYTOP_NATIVE_EHFRAME_H

#include <libunwind.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "target/proc_maps.h"

/* One module's address range and, when it has one, its table; and what
 * the consumer needs to symbolize it from its file (REC_MODULE). */
struct ehframe_module {
	uint64_t lo, hi;   /* [lo, hi): its PT_LOAD segments, or one mapping */
	bool ok;           /* di describes its .eh_frame_hdr */
	bool announced;    /* its REC_MODULE is in the ring */
	unw_dyn_info_t di; /* UNW_INFO_FORMAT_REMOTE_TABLE, in the target */
	uint64_t map_start, map_end, offset; /* the mapping at its start */
	char *path;        /* owned: its path in the target's maps */
};

struct ehframe_tables {
	pid_t pid;
	struct proc_maps maps;        /* last snapshot, owned */
	bool have_maps;
	uint64_t maps_at_ns;          /* when it was read (CLOCK_MONOTONIC) */
	struct ehframe_module *mods;  /* owned, sorted by lo, disjoint */
	size_t n, cap;
};

void ehframe_init(struct ehframe_tables *t, pid_t pid);
void ehframe_free(struct ehframe_tables *t);

/* The table of the module ip is in (borrowed: valid until the next call),
 * or NULL when that module has none or ip is in no module.  Modules are
 * read once and kept; /proc/PID/maps is read again only for an ip outside
 * every mapping of the last snapshot (a library loaded since), at most
 * once per EHFRAME_MAPS_INTERVAL_NS. */
const unw_dyn_info_t *ehframe_find(struct ehframe_tables *t, uint64_t ip);

#define EHFRAME_MAPS_INTERVAL_NS 100000000ull

/* Called for each module found since it was last asked; returns whether
 * the module reached its reader (else it is offered again next time). */
typedef bool ehframe_announce_fn(void *ctx, const struct ehframe_module *m);
void ehframe_announce(struct ehframe_tables *t, ehframe_announce_fn *fn, void *ctx);

#endif
