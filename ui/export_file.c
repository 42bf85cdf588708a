/* export_file.c - creating an export's output file safely (export_file.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SEQ 1000

static void create_error(const char *path, int e, bool force, char *err,
                         size_t errlen)
{
	struct stat st;
	bool known = lstat(path, &st) == 0;

	if (known && S_ISLNK(st.st_mode))
		snprintf(err, errlen, "the output %s is a symbolic link, which pytop "
		         "never writes through; name the file itself", path);
	else if (e == EEXIST && !force)
		snprintf(err, errlen, "the output %s already exists; choose another "
		         "name, or add --force to overwrite it", path);
	else if (e == EISDIR || (known && S_ISDIR(st.st_mode)))
		snprintf(err, errlen, "the output %s is a directory; name a file in it",
		         path);
	else if (e == 0 || (known && !S_ISREG(st.st_mode)))
		snprintf(err, errlen, "the output %s is not a regular file; name a "
		         "new or regular file", path);
	else
		snprintf(err, errlen, "cannot create the output %s: %s; choose a "
		         "directory you can write to", path, strerror(e));
}

/* --force: an existing regular file is truncated, never a link followed
 * or a FIFO or device opened for long (O_NONBLOCK, then checked). */
static int open_forced(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
	              O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ftruncate(fd, 0) != 0) {
		close(fd);
		errno = 0; /* not a regular file: create_error says so */
		return -1;
	}
	return fd;
}

static FILE *fd_stream(int fd, const char *path, char *err, size_t errlen)
{
	FILE *f = fdopen(fd, "w");

	if (f == NULL) {
		snprintf(err, errlen, "cannot write the output %s: %s; free some "
		         "memory", path, strerror(errno));
		close(fd);
		unlink(path);
	}
	return f;
}

FILE *export_file_create(const char *path, bool force, char *err, size_t errlen)
{
	int fd;

	if (path[0] == '\0') {
		snprintf(err, errlen, "the output file name is empty; name a file "
		         "with -o");
		return NULL;
	}
	fd = force ? open_forced(path)
	           : open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	                  O_CLOEXEC, 0644);
	if (fd < 0) {
		create_error(path, errno, force, err, errlen);
		return NULL;
	}
	return fd_stream(fd, path, err, errlen);
}

bool export_file_stamped(const char *path, time_t t, int seq, char *buf,
                         size_t len)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	char stamp[48];
	struct tm tm;
	int n;

	base = base != NULL ? base + 1 : path;
	/* A leading dot names a hidden file, not an extension. */
	dot = base[0] != '\0' ? strchr(base + 1, '.') : NULL;
	if (dot == NULL)
		dot = path + strlen(path);
	gmtime_r(&t, &tm);
	n = (int)strftime(stamp, sizeof stamp, "-%Y%m%dT%H%M%SZ", &tm);
	if (seq > 1)
		snprintf(stamp + n, sizeof stamp - (size_t)n, "-%d", seq);
	n = snprintf(buf, len, "%.*s%s%s", (int)(dot - path), path, stamp, dot);
	return n > 0 && (size_t)n < len;
}

FILE *export_file_create_stamped(const char *path, time_t t, char *made,
                                 size_t madelen, char *err, size_t errlen)
{
	for (int seq = 1; seq <= MAX_SEQ; seq++) {
		int fd;

		if (!export_file_stamped(path, t, seq, made, madelen)) {
			snprintf(err, errlen, "the output name %s is too long to add a "
			         "time stamp to; choose a shorter one", path);
			return NULL;
		}
		fd = open(made, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		          O_CLOEXEC, 0644);
		if (fd >= 0)
			return fd_stream(fd, made, err, errlen);
		/* Taken (by a file, or a planted link): the next name. */
		if (errno != EEXIST) {
			create_error(made, errno, false, err, errlen);
			return NULL;
		}
	}
	snprintf(err, errlen, "%d exports of %s this second already exist; "
	         "remove some", MAX_SEQ, path);
	return NULL;
}

int export_file_close(FILE *f, const char *path, bool write_failed,
                      char *err, size_t errlen)
{
	int e = 0;

	if (fflush(f) != 0 || ferror(f))
		e = errno != 0 ? errno : EIO;
	if (fclose(f) != 0 && e == 0)
		e = errno;
	if (!write_failed && e == 0)
		return 0;
	unlink(path);
	if (e != 0)
		snprintf(err, errlen, "could not write the export %s: %s; free some "
		         "space or choose another directory", path, strerror(e));
	else
		snprintf(err, errlen, "could not write the export %s: out of memory; "
		         "free some memory and export again", path);
	return -1;
}
