/* record_schema.c - a recording's tables and metadata (record_schema.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stdio.h>

#include "record/record_schema.h"

/* WITHOUT ROWID where the key is the row's identity: no second b-tree and
 * no rowid per row.  A samples row is most of a file, so its figures are
 * small integers (SQLite stores 0 and 1 in the record header alone, and
 * others in 1 to 4 bytes; a REAL takes 8): the time in microseconds and
 * the split in units of RECORD_SPLIT_UNIT samples. */
static const char schema_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL);"
	"CREATE TABLE frames(id INTEGER PRIMARY KEY, name INTEGER NOT NULL,"
	" file INTEGER NOT NULL, line INTEGER NOT NULL, first_line INTEGER NOT NULL,"
	" native INTEGER NOT NULL, module INTEGER NOT NULL, other INTEGER NOT NULL);"
	"CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
	" frame INTEGER NOT NULL, depth INTEGER NOT NULL);"
	"CREATE TABLE threads(id INTEGER PRIMARY KEY, tid INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, name INTEGER NOT NULL, first_bucket INTEGER NOT NULL,"
	" last_bucket INTEGER NOT NULL);"
	"CREATE TABLE processes(pid INTEGER PRIMARY KEY, first_bucket INTEGER NOT NULL,"
	" last_bucket INTEGER NOT NULL, ppid INTEGER, command INTEGER, python INTEGER);"
	"CREATE TABLE buckets(id INTEGER PRIMARY KEY, t_start REAL NOT NULL,"
	" t_end REAL NOT NULL, merged INTEGER NOT NULL, rate_hz REAL NOT NULL,"
	" ticks INTEGER NOT NULL, errors INTEGER NOT NULL, dropped INTEGER NOT NULL,"
	" gauges_valid INTEGER NOT NULL, rss INTEGER, rss_peak INTEGER, minflt INTEGER,"
	" majflt INTEGER, cpu_user REAL, cpu_system REAL, os_threads INTEGER);"
	"CREATE TABLE samples(bucket INTEGER NOT NULL, stack INTEGER NOT NULL,"
	" thread INTEGER NOT NULL, samples INTEGER NOT NULL, us INTEGER NOT NULL,"
	" python INTEGER NOT NULL, native INTEGER NOT NULL, system INTEGER NOT NULL,"
	" cpu_wait INTEGER NOT NULL, gil_wait INTEGER NOT NULL, waiting INTEGER NOT NULL,"
	" mem_growth INTEGER NOT NULL, mem_shrink INTEGER NOT NULL,"
	" minflt INTEGER NOT NULL, majflt INTEGER NOT NULL,"
	" PRIMARY KEY(bucket, stack, thread)) WITHOUT ROWID;"
	/* Added within schema 1 (a reader ignores a table it does not know;
	 * replay falls back to meta.delay_s without it): the buckets at
	 * whose end the live view took a snapshot. */
	"CREATE TABLE refreshes(bucket INTEGER PRIMARY KEY);";

bool record_schema_create(sqlite3 *db, const char *path, struct pytop_error *err)
{
	char sql[64];

	snprintf(sql, sizeof sql, "PRAGMA user_version=%d;", RECORD_SCHEMA_VERSION);
	if (sqlite3_exec(db, "BEGIN;", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    !record_meta_text(db, "format", RECORD_FORMAT_NAME) ||
	    !record_meta_int(db, "schema_version", RECORD_SCHEMA_VERSION) ||
	    !record_meta_double(db, "bucket_seconds", RECORD_BUCKET_S) ||
	    !record_meta_double(db, "split_unit", 1.0 / RECORD_SPLIT_PER_SAMPLE) ||
	    sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL) != SQLITE_OK) {
		error_set(err, PYTOP_ERR_FILE, "cannot write the recording %s: %s; check the "
		          "disk and the directory's permissions", path, sqlite3_errmsg(db));
		return false;
	}
	return true;
}

static sqlite3_stmt *meta_stmt(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?);",
	                       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	return st;
}

static bool meta_run(sqlite3_stmt *st)
{
	bool ok = st != NULL && sqlite3_step(st) == SQLITE_DONE;

	sqlite3_finalize(st);
	return ok;
}

bool record_meta_text(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *st = meta_stmt(db, key);

	if (st != NULL)
		sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	return meta_run(st);
}

bool record_meta_double(sqlite3 *db, const char *key, double value)
{
	sqlite3_stmt *st = meta_stmt(db, key);

	if (st != NULL)
		sqlite3_bind_double(st, 2, value);
	return meta_run(st);
}

bool record_meta_int(sqlite3 *db, const char *key, long long value)
{
	sqlite3_stmt *st = meta_stmt(db, key);

	if (st != NULL)
		sqlite3_bind_int64(st, 2, value);
	return meta_run(st);
}
