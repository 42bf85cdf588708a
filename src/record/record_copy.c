/* record_copy.c - a private copy of a recording to read (record_copy.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/record_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const companions[] = { "", "-wal", "-shm", "-journal" };
#define NCOMPANIONS (sizeof companions / sizeof companions[0])

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof buf)) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			off += w;
		}
	}
	return n == 0 ? 0 : -1;
}

/* Copy src to dst (new).  1 copied, 0 src absent (when optional), -1
 * failed with errno set. */
static int copy_file(const char *src, const char *dst, bool optional)
{
	struct stat st;
	int in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK), out, rc;

	if (in < 0)
		return optional && errno == ENOENT ? 0 : -1;
	/* A FIFO or a device would block or never end. */
	if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(in);
		errno = EINVAL;
		return -1;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	rc = copy_fd(in, out);
	if (close(out) != 0)
		rc = -1;
	close(in);
	return rc == 0 ? 1 : -1;
}

static int join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s%s", a, b);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int record_copy_make(struct record_copy *c, const char *path, struct pytop_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char wal[PATH_MAX], wal_copy[PATH_MAX];

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/tmp";
	if (snprintf(c->dir, sizeof c->dir, "%s/pytop-export.XXXXXX", tmp) >= (int)sizeof c->dir ||
	    mkdtemp(c->dir) == NULL) {
		error_set(err, PYTOP_ERR_FILE, "cannot make a private directory in %s to read %s: "
		          "%s; set TMPDIR to a writable directory", tmp, path, strerror(errno));
		return -1;
	}
	if (join(c->path, sizeof c->path, c->dir, "/recording") != 0 ||
	    join(wal, sizeof wal, path, "-wal") != 0 ||
	    join(wal_copy, sizeof wal_copy, c->path, "-wal") != 0) {
		error_set(err, PYTOP_ERR_FILE, "the recording's path %s is too long; move it "
		          "to a shorter one", path);
		rmdir(c->dir);
		return -1;
	}
	if (copy_file(path, c->path, false) < 0 || copy_file(wal, wal_copy, true) < 0) {
		error_set(err, PYTOP_ERR_FILE, "cannot read the recording %s: %s; give the path "
		          "of a recording file you can read", path,
		          errno == EINVAL ? "not a regular file" : strerror(errno));
		record_copy_remove(c);
		return -1;
	}
	return 0;
}

void record_copy_remove(struct record_copy *c)
{
	char buf[PATH_MAX];

	for (size_t i = 0; i < NCOMPANIONS; i++)
		if (join(buf, sizeof buf, c->path, companions[i]) == 0)
			unlink(buf);
	rmdir(c->dir);
}
