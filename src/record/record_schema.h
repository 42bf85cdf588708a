/* record_schema.h - the tables of a recording (SQLite), their version,
 * and the session's metadata.  The schema is documented for readers in
 * man/pytop.1.in (RECORDINGS); a change to it bumps RECORD_SCHEMA_VERSION
 * (PRAGMA user_version, and meta.schema_version). */
#ifndef PYTOP_RECORD_SCHEMA_H
#define PYTOP_RECORD_SCHEMA_H

#include <sqlite3.h>

#include "errors.h"

#define RECORD_SCHEMA_VERSION 1
#define RECORD_FORMAT_NAME "pytop recording"
#define RECORD_BUCKET_S 0.1
/* samples.python ... waiting count 1/10000 of a sample each: four
 * digits of a share that the views show to one decimal of a percent. */
#define RECORD_SPLIT_PER_SAMPLE 10000.0

/* Create every table in an empty database and set its version; false and
 * *err (naming `path`) on failure. */
bool record_schema_create(sqlite3 *db, const char *path, struct pytop_error *err);

/* meta(key, value): set one text or number value.  false on failure. */
bool record_meta_text(sqlite3 *db, const char *key, const char *value);
bool record_meta_double(sqlite3 *db, const char *key, double value);
bool record_meta_int(sqlite3 *db, const char *key, long long value);

#endif
