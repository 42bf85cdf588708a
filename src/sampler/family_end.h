/* family_end.h - (-s) the followed family's last word.  The follower
 * reports a process's exit at its next scan, but once the target is gone
 * the sampler stops forwarding: processes that ended with it would stay
 * "running" in the final figures.  So the sampler remembers who was last
 * reported alive and, when it stops because the target is gone, sends an
 * exit record (REC_PROCESS, PROC_EXITED) for each of them that has ended.
 * Liveness is decided here, on the producer side: nothing after the ring
 * looks at the target's processes. */
#ifndef PYTOP_FAMILY_END_H
#define PYTOP_FAMILY_END_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/ring.h"

struct family_end {
	struct family_member {
		int32_t pid, ppid;
	} *v;          /* owned: processes last reported alive */
	size_t n, cap;
};

void family_end_init(struct family_end *f);
void family_end_free(struct family_end *f);

/* A REC_PROCESS on its way to the ring (hostile sizes are ignored). */
void family_end_note(struct family_end *f, const void *rec, size_t len);

/* Push an exit record for every noted process that has ended (gone, or a
 * zombie none of whose threads lives); returns how many were pushed. */
size_t family_end_report(struct family_end *f, struct ring *ring, uint64_t now_ns);

#endif
