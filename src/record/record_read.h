/* record_read.h - reading a recording back (pytop export FILE): the
 * stacks of a window of its 100 ms buckets as a snapshot's stack table.
 *
 * The user's file is never written: it is copied (with its -wal, which a
 * crashed recorder leaves) into a private directory, and SQLite recovers
 * the WAL there.  Everything in the file is treated as hostile: ids are
 * mapped, never used as indices, and a node whose parent is not an
 * earlier stack is left unusable (export_stacks.h skips it).
 */
#ifndef PYTOP_RECORD_READ_H
#define PYTOP_RECORD_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "profile/snapshot.h"

struct record_reader;

/* What the recording says of its session and its extent. */
struct record_info {
	char command[256];
	char python_version[16];
	int rate_hz;            /* requested */
	double started;         /* CLOCK_REALTIME seconds sampling began */
	double end_s;           /* the last bucket's end, seconds from start */
	unsigned long long samples; /* in all buckets */
	/* The session's, from meta (a value the file lacks: its default). */
	pid_t pid;              /* 0 unknown */
	double delay_s;         /* -d, the views' refresh interval (1) */
	bool idle, no_split, native, subprocesses; /* the options (false) */
	bool exited;            /* the target ended during the recording */
	int exit_status;        /* when exited; -1 unknown */
};

/* Open and check `path` (SQLite, a pytop recording, a schema this pytop
 * reads, not damaged, holding samples); NULL and *err otherwise. */
struct record_reader *record_read_open(const char *path, struct pytop_error *err);
const struct record_info *record_read_info(const struct record_reader *r);

/* The buckets starting in [from, to) (seconds from the recording's start)
 * as *out's stack table, samples and session fields; out is zeroed first
 * and freed with snapshot_free.  -1 and *err on a window outside the
 * recording or a read failure. */
int record_read_window(struct record_reader *r, double from, double to,
                       struct snapshot *out, struct pytop_error *err);

/* record_read_window without its refusal of a window with no samples
 * (a replay shows an idle second as such). */
int record_read_span(struct record_reader *r, double from, double to,
                     struct snapshot *out, struct pytop_error *err);

/* For the other readers of the record room (record_timeline.c): the
 * open database, a string of the file by id ("" unknown), and the
 * damaged-file error. */
struct sqlite3;
struct sqlite3 *record_read_db(struct record_reader *r);
const char *record_read_string(const struct record_reader *r, int64_t id);
void record_read_damaged(struct record_reader *r, struct pytop_error *err);

/* One thread's figures in one bucket: its dominant stack (the one with
 * most samples) as a node of the last record_read_window's snapshot (0:
 * a stack that snapshot does not have), and all its samples there. */
struct record_slice {
	double t_start, t_end;  /* seconds from the recording's start */
	pid_t pid, tid;
	uint32_t node;
	unsigned long long samples;
	const char *thread_name; /* the reader's, "" unknown */
};

/* The window's slices, by process, thread, then time (malloc'd, caller
 * frees *out; the names live until record_read_close).  Call after
 * record_read_window with the same window.  -1 and *err on failure. */
int record_read_slices(struct record_reader *r, double from, double to,
                       struct record_slice **out, size_t *n, struct pytop_error *err);

/* Closes the database and removes the private copy. */
void record_read_close(struct record_reader *r);

#endif
