/* safe_create.c - create a new file that nobody else can have prepared:
 * O_CREAT|O_EXCL|O_NOFOLLOW, in a private mkdtemp directory when the
 * place is shared.  See safe_create.h for the attacks this is against. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/safe_create.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)

/* Error lines stay one line of sane length whatever the directory. */
#define SHOWN_MAX 80

static int create_at(int dirfd, const char *name, const char *shown, const char *fix,
                     struct pytop_error *err)
{
	int fd = openat(dirfd, name, CREATE_FLAGS, 0600);

	if (fd < 0)
		error_set(err, PYTOP_ERR_FILE, "cannot create %.*s%s: %s; %s", SHOWN_MAX, shown,
		          strlen(shown) > SHOWN_MAX ? "..." : "",
		          errno == EEXIST ? "something is already there" : strerror(errno), fix);
	return fd;
}

/* The directory mkdtemp made, opened without following a symlink and
 * checked to be still ours and private: in a shared directory without the
 * sticky bit another user could have renamed it and put their own in its
 * place. */
static int open_own_dir(const char *dir, const char *fix, struct pytop_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	    (st.st_mode & 077) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	error_set(err, PYTOP_ERR_FILE,
	          "the private directory %s was replaced after it was created; %s", dir, fix);
	return -1;
}

static int too_long(const char *dir, size_t need, size_t path_len, const char *fix,
                    struct pytop_error *err)
{
	error_set(err, PYTOP_ERR_FILE,
	          "the directory %.*s%s is too long for a file name in it "
	          "(%zu bytes, at most %zu); %s",
	          SHOWN_MAX, dir, strlen(dir) > SHOWN_MAX ? "..." : "", need, path_len - 1, fix);
	return -1;
}

int safe_create_private(const char *dir, const char *prefix, const char *name,
                        char *path, size_t path_len, const char *fix,
                        struct pytop_error *err)
{
	int n = snprintf(path, path_len, "%s/%sXXXXXX/%s", dir, prefix, name);
	size_t dir_end;
	int dfd, fd;

	if (n < 0 || (size_t)n >= path_len) {
		path[0] = '\0';
		return too_long(dir, n < 0 ? 0 : (size_t)n, path_len, fix, err);
	}
	dir_end = (size_t)n - strlen(name) - 1;
	path[dir_end] = '\0';
	if (mkdtemp(path) == NULL) {
		error_set(err, PYTOP_ERR_FILE, "cannot create a directory in %.*s%s: %s; %s",
		          SHOWN_MAX, dir, strlen(dir) > SHOWN_MAX ? "..." : "", strerror(errno),
		          fix);
		path[0] = '\0';
		return -1;
	}
	dfd = open_own_dir(path, fix, err);
	path[dir_end] = '/';
	fd = dfd >= 0 ? create_at(dfd, name, path, fix, err) : -1;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		path[0] = '\0';
	return fd;
}
