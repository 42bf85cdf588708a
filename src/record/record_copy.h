/* record_copy.h - a private copy of a recording to read.
 *
 * After a crash the recording's last commits are in FILE-wal, and SQLite
 * needs write access to recover them (a read-only connection sees only
 * what was checkpointed).  Rather than write beside the user's file, it
 * and its -wal are copied into a new mkdtemp directory (mode 0700) where
 * SQLite may do as it likes; the -shm index is rebuilt from the WAL.
 */
#ifndef PYTOP_RECORD_COPY_H
#define PYTOP_RECORD_COPY_H

#include <limits.h>

#include "errors.h"

struct record_copy {
	char dir[PATH_MAX];  /* the private directory */
	char path[PATH_MAX]; /* the copy of the database in it */
};

/* Copy `path` (a regular file) and path-wal if there is one; 0, or -1 and
 * *err naming path (nothing is left behind then). */
int record_copy_make(struct record_copy *c, const char *path, struct pytop_error *err);

/* Remove the copy, its companions and the directory. */
void record_copy_remove(struct record_copy *c);

#endif
