/* record_bucket.h - one bucket of a recording as it goes from the
 * consumer thread (record_model.c builds it) to the writer thread
 * (record_writer.c writes it): the definitions new since the last
 * bucket, then the bucket's figures.  Plain data, owned by whoever holds
 * the bucket; record_bucket_free frees it whole. */
#ifndef PYTOP_RECORD_BUCKET_H
#define PYTOP_RECORD_BUCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

struct rb_string {
	uint32_t id;
	char *text;          /* owned */
};

struct rb_frame {
	uint32_t id;
	uint32_t name, file, module; /* string ids */
	int line, first_line;
	bool native, other;
};

struct rb_stack {
	uint32_t id, parent, frame, depth; /* parent 0: the root */
};

struct rb_thread {
	uint32_t id;
	pid_t tid, pid;      /* tid -pid: the gone threads of pid */
	uint32_t name;       /* string id: its OS name, "" unknown */
};

/* The samples of one thread whose whole stack was `stack`, in the bucket
 * (the stack table's cell figures since the last bucket). */
struct rb_row {
	uint32_t stack, thread;
	uint64_t samples, ns;
	struct snap_split split;
};

/* -s: what the follower said of a process, once it has said it. */
struct rb_process {
	pid_t pid, ppid;
	uint32_t command, python; /* string ids */
};

/* A thread with rows in the bucket: its lifetime reaches it. */
struct rb_seen {
	uint32_t thread;
	pid_t pid;
};

/* The whole process and the sampler at the bucket's end (cumulative). */
struct rb_gauges {
	bool valid;          /* the process could be read */
	uint64_t rss, rss_peak, minflt, majflt;
	uint64_t utime_ns, stime_ns;
	int threads;
	uint64_t ticks, errors, dropped;
};

struct rec_bucket {
	uint32_t id;
	double t_start, t_end; /* seconds since sampling started */
	uint32_t merged;       /* later buckets folded into this one because
	                          the writer was behind */
	struct rb_string *strings; size_t nstrings, strings_cap;
	struct rb_frame *frames;   size_t nframes, frames_cap;
	struct rb_stack *stacks;   size_t nstacks, stacks_cap;
	struct rb_thread *threads; size_t nthreads, threads_cap;
	struct rb_row *rows;       size_t nrows, rows_cap;
	struct rb_seen *seen;      size_t nseen, seen_cap;
	struct rb_process *processes; size_t nprocesses, processes_cap;
	struct rb_gauges gauges;
	double rate_hz;        /* ticks per second over the bucket */
	bool refresh;          /* a view took a snapshot at t_end: replay's
	                          refreshes fall where the live ones did */
};

void record_bucket_free(struct rec_bucket *b);

#endif
