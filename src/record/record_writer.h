/* record_writer.h - the recording's writer thread: buckets come through a
 * bounded queue from the consumer thread and are written to SQLite, what
 * is queued in one transaction every RECORD_COMMIT_S (so a kill -9 of
 * pytop loses at most the last ~0.6 s: never more than a second).  A
 * commit per 100 ms bucket wrote the same b-tree pages five times as
 * often, for nothing a reader could use.  Neither thread ever waits for the other's disk: when the
 * queue is full the consumer does not take a bucket, and its figures
 * stay in the aggregator to be merged into the next one. */
#ifndef PYTOP_RECORD_WRITER_H
#define PYTOP_RECORD_WRITER_H

#include <stdbool.h>
#include <sqlite3.h>

#include "errors.h"
#include "record/record_bucket.h"

#define RECORD_QUEUE_BUCKETS 64 /* 6.4 s of 100 ms buckets */
#define RECORD_COMMIT_S 0.5

struct record_writer;

/* Takes db (owned from now on, closed by record_writer_stop).  NULL and
 * *err when the thread or the statements cannot be made (db closed). */
struct record_writer *record_writer_start(sqlite3 *db, const char *path,
                                          struct pytop_error *err);

/* Room for one more bucket?  (Only the consumer pushes, so a yes holds.) */
bool record_writer_has_room(struct record_writer *w);

/* Queue b (owned by the writer from now on); false when full or failed
 * (b still the caller's). */
bool record_writer_push(struct record_writer *w, struct rec_bucket *b);

/* A write failed (disk full, I/O error): its line, else NULL.  Nothing
 * more is written then. */
const char *record_writer_failure(struct record_writer *w);

/* Called on the writer's connection in its last transaction. */
typedef bool (*record_finish)(sqlite3 *db, void *ctx);

/* Write what is queued, then finish() in the same last transaction, and
 * close the database.  true when every write succeeded; else *err.
 * Frees w. */
bool record_writer_stop(struct record_writer *w, record_finish finish, void *ctx,
                        struct pytop_error *err);

#endif
