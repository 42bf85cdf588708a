/* record_timeline.h - what a recording says over time besides its
 * samples (record_read.h sums those): where the live view refreshed,
 * the gauges at a bucket's end, and the threads' and processes'
 * lifetimes.  For pytop replay.  Everything is read from the reader's
 * private copy and treated as hostile: times are checked finite, counts
 * capped, strings found by id. */
#ifndef PYTOP_RECORD_TIMELINE_H
#define PYTOP_RECORD_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "record/record_read.h"

/* Index the private copy's buckets by end time, so that the gauges at
 * each refresh are a lookup (the copy is pytop's own, never the user's
 * file).  false when it cannot (the lookups then scan). */
bool record_timeline_index(struct record_reader *r);

/* The ends of the buckets at which the live view took a snapshot,
 * ascending (malloc'd, caller frees *t); *n = 0 for a recording made
 * before they were kept, or with no view.  -1 and *err on a read
 * failure. */
int record_timeline_refreshes(struct record_reader *r, double **t, size_t *n,
                              struct pytop_error *err);

/* The cumulative figures of the last bucket ending at or before `at`
 * (seconds from the start); valid: of the last one whose process could
 * be read (a zombie's last buckets have no memory figures). */
struct record_gauges_at {
	bool found;             /* false: no bucket ends by then */
	double t_end;
	uint64_t ticks, errors, dropped;
	bool valid;             /* the process could be read: the rest holds */
	uint64_t rss, rss_peak, minflt, majflt;
	double cpu_user, cpu_system; /* seconds */
	int threads;
};
bool record_timeline_gauges(struct record_reader *r, double at, bool valid,
                            struct record_gauges_at *g);

/* A thread (tid > 0) and when it had samples: from its first bucket's
 * start to its last bucket's end. */
struct record_life {
	pid_t id, parent;       /* a thread's tid and pid; a process's pid, ppid */
	const char *name;       /* thread: OS name; process: command line */
	const char *python;     /* process: version or why not sampled */
	double first_s, last_s;
};

/* Every thread (or, with processes, every process of -s) of the
 * recording, by id (malloc'd, caller frees; strings live until
 * record_read_close).  -1 and *err on a read failure. */
int record_timeline_threads(struct record_reader *r, struct record_life **v, size_t *n,
                            struct pytop_error *err);
int record_timeline_processes(struct record_reader *r, struct record_life **v, size_t *n,
                              struct pytop_error *err);

#endif
