/* record_file.c - creating a recording's file (record_file.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/record_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/record_schema.h"

/* SQLite's companions of a database file: a planted one would be read as
 * part of the recording (a journal is replayed into it), so they are
 * refused like the file itself. */
static const char *const companions[] = { "-wal", "-shm", "-journal" };
#define NCOMPANIONS (sizeof companions / sizeof companions[0])

/* Whether path exists (as anything, a dangling symlink included); an
 * existing one is unlinked when `force` (a directory never is). */
static bool clear_path(const char *path, bool force, struct pytop_error *err)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return true;
	if (S_ISDIR(st.st_mode)) {
		error_set(err, PYTOP_ERR_FILE, "the recording's path %s is a directory; give a "
		          "file name (e.g. %s/run.pytop)", path, path);
		return false;
	}
	if (!force) {
		error_set(err, PYTOP_ERR_FILE, "%s already exists%s; choose another name, or add "
		          "--force to replace it", path, S_ISLNK(st.st_mode) ? " (a symlink)" : "");
		return false;
	}
	if (unlink(path) != 0) {
		error_set(err, PYTOP_ERR_FILE, "cannot replace %s: %s; choose another name",
		          path, strerror(errno));
		return false;
	}
	return true;
}

static bool clear_companions(const char *path, bool force, struct pytop_error *err)
{
	char buf[4096];

	for (size_t i = 0; i < NCOMPANIONS; i++) {
		int n = snprintf(buf, sizeof buf, "%s%s", path, companions[i]);

		if (n < 0 || (size_t)n >= sizeof buf) {
			error_set(err, PYTOP_ERR_FILE, "the recording's path is too long; "
			          "choose a shorter one");
			return false;
		}
		if (!clear_path(buf, force, err))
			return false;
	}
	return true;
}

/* The new file, made by us alone: O_EXCL fails on anything there, a
 * symlink included, so a file planted after the check is not followed. */
static int create_new(const char *path, struct pytop_error *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		error_set(err, PYTOP_ERR_FILE, "cannot create the recording %s: %s; choose a "
		          "directory you can write to", path, strerror(errno));
	return fd;
}

/* SQLite opens by name: the name must still be the file we made. */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && S_ISREG(b.st_mode) &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static sqlite3 *open_db(const char *path, int fd, struct pytop_error *err)
{
	sqlite3 *db = NULL;
	/* NOMUTEX: one thread at a time uses the connection (the consumer
	 * until the writer starts, then the writer alone); the serialized
	 * mode's lock around every bind and step was a sixth of the writer's
	 * time. */
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
	                         SQLITE_OPEN_NOMUTEX, NULL);

	if (rc != SQLITE_OK || !same_file(fd, path)) {
		error_set(err, PYTOP_ERR_FILE, "cannot open the recording %s: %s; choose another "
		          "path", path, rc != SQLITE_OK ? sqlite3_errstr(rc)
		                                         : "it was replaced while being created");
		sqlite3_close(db);
		return NULL;
	}
	/* Another program holding the file (a reader checkpointing) makes the
	 * writer wait, not fail: buckets merge meanwhile. */
	sqlite3_busy_timeout(db, 10000);
	/* WAL: a commit is an append, and a reader (or a kill -9) never sees
	 * half a transaction.  NORMAL: no fsync per commit; a commit survives
	 * pytop's death, only the machine's loses the last ones. */
	if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
	                 NULL, NULL, NULL) != SQLITE_OK) {
		error_set(err, PYTOP_ERR_FILE, "cannot set up the recording %s: %s; choose a "
		          "local file system", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

sqlite3 *record_file_create(const char *path, bool force, struct pytop_error *err)
{
	sqlite3 *db;
	int fd;

	if (path[0] == '\0') {
		error_set(err, PYTOP_ERR_FILE, "the recording's file name is empty; give one "
		          "(e.g. -o run.pytop)");
		return NULL;
	}
	if (!clear_companions(path, force, err) || !clear_path(path, force, err))
		return NULL;
	fd = create_new(path, err);
	if (fd < 0)
		return NULL;
	db = open_db(path, fd, err);
	if (db != NULL && !record_schema_create(db, path, err)) {
		sqlite3_close(db);
		db = NULL;
	}
	/* Ours, made above (and still the same file): nothing of anyone's
	 * is lost. */
	if (db == NULL && same_file(fd, path))
		unlink(path);
	close(fd);
	return db;
}
