/* export_chrome.h - Chrome's Trace Event Format (JSON object form, as
 * chrome://tracing, Perfetto's UI and speedscope import it): one timeline
 * per thread from a recording's 100 ms buckets.
 *
 * A snapshot has no time axis, so this writer takes, besides the snapshot
 * whose stack table names the frames, each thread's dominant stack per
 * bucket: it is only available from `pytop export FILE` (a live --format
 * chrome is refused by export_live.c).
 */
#ifndef PYTOP_UI_EXPORT_CHROME_H
#define PYTOP_UI_EXPORT_CHROME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "export.h"

/* One thread's bucket: the node of its dominant stack in the snapshot's
 * stack table (0 or an unusable node: shown as a gap) and its samples. */
struct chrome_slice {
	double t_start, t_end;   /* seconds from the start */
	pid_t pid, tid;
	uint32_t node;
	uint64_t samples;
	const char *thread_name; /* "" unknown */
};

/* Slices sorted by pid, tid, then t_start.  Per thread, consecutive
 * buckets whose dominant stacks share outer frames extend those frames'
 * complete ("X") events, so the events nest by construction; thread and
 * process names are metadata ("M") events; a "samples" counter ("C") per
 * thread and bucket.  0, or -1 when writing failed or no memory. */
int export_chrome(FILE *out, const struct snapshot *s, const struct export_meta *m,
                  const struct chrome_slice *sl, size_t n);

#endif
