/* record_file.h - the recording's file made safely: a new file nobody
 * prepared (O_CREAT|O_EXCL|O_NOFOLLOW; an existing path only replaced
 * with `force`, and then unlinked, never followed), opened by SQLite
 * without following symlinks, checked to be the file just made, in WAL
 * mode with its schema. */
#ifndef PYTOP_RECORD_FILE_H
#define PYTOP_RECORD_FILE_H

#include <stdbool.h>
#include <sqlite3.h>

#include "errors.h"

/* The open database, or NULL and *err (one line naming the path, the
 * problem and the fix). */
sqlite3 *record_file_create(const char *path, bool force, struct pytop_error *err);

#endif
