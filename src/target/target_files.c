/* target_files.c - open a file on the target's behalf; see target_files.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/target_files.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/* ---- credentials --------------------------------------------------------- */

/* The fourth id of a "Uid:" or "Gid:" line: the file-system one. */
static int fs_id(const char *line, unsigned *out)
{
	unsigned r, e, s;

	return sscanf(line, "%*s %u %u %u %u", &r, &e, &s, out) == 4 ? 0 : -1;
}

static void parse_groups(const char *line, struct target_creds *out)
{
	const char *p = line + strlen("Groups:");
	unsigned g;
	int used;

	while (out->ngroups < TARGET_CREDS_MAX_GROUPS &&
	       sscanf(p, " %u%n", &g, &used) == 1) {
		out->groups[out->ngroups++] = (gid_t)g;
		p += used;
	}
}

int target_creds_read(pid_t pid, struct target_creds *out)
{
	char path[64], line[1024];
	unsigned uid, gid;
	int found = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "Uid:", 4) == 0 && fs_id(line, &uid) == 0)
			found |= 1;
		else if (strncmp(line, "Gid:", 4) == 0 && fs_id(line, &gid) == 0)
			found |= 2;
		else if (strncmp(line, "Groups:", 7) == 0)
			parse_groups(line, out);
	}
	fclose(f);
	if (found != 3) {
		errno = ESRCH; /* gone while we read */
		return -1;
	}
	out->uid = (uid_t)uid;
	out->gid = (gid_t)gid;
	return 0;
}

/* What the calling thread had before it took the target's ids. */
struct saved_creds {
	bool switched;
	uid_t uid;
	gid_t gid;
	gid_t groups[TARGET_CREDS_MAX_GROUPS];
	int ngroups;
};

/* setgroups(2) itself, not glibc's, which applies it to every thread:
 * only the calling thread may change identity, and only for one open. */
static int thread_setgroups(int n, const gid_t *groups)
{
	return (int)syscall(SYS_setgroups, (size_t)n, groups);
}

/* Take cr's file-system ids in this thread (fsuid last: leaving uid 0
 * drops the file capabilities too).  False when we may not (not root):
 * the caller checks the file's mode instead. */
static bool become(const struct target_creds *cr, struct saved_creds *sv)
{
	sv->switched = false;
	if (geteuid() != 0 || cr->uid == 0)
		return false;
	sv->ngroups = getgroups(TARGET_CREDS_MAX_GROUPS, sv->groups);
	if (sv->ngroups < 0 || thread_setgroups(cr->ngroups, cr->groups) != 0)
		return false;
	sv->gid = (gid_t)setfsgid(cr->gid);
	sv->uid = (uid_t)setfsuid(cr->uid);
	sv->switched = (uid_t)setfsuid((uid_t)-1) == cr->uid &&
	               (gid_t)setfsgid((gid_t)-1) == cr->gid;
	return true; /* restore() undoes whatever part took */
}

static void restore(const struct saved_creds *sv)
{
	int saved = errno;

	setfsuid(sv->uid);
	setfsgid(sv->gid);
	(void)thread_setgroups(sv->ngroups, sv->groups);
	errno = saved;
}

static bool in_group(const struct target_creds *cr, gid_t gid)
{
	if (cr->gid == gid)
		return true;
	for (int i = 0; i < cr->ngroups; i++)
		if (cr->groups[i] == gid)
			return true;
	return false;
}

/* Whether cr may read a file of this mode and owner (when pytop could not
 * take cr's ids, it judges by the mode bits). */
static bool may_read(const struct target_creds *cr, const struct stat *st)
{
	if (cr->uid == 0)
		return true;
	if (st->st_uid == cr->uid)
		return (st->st_mode & S_IRUSR) != 0;
	if (in_group(cr, st->st_gid))
		return (st->st_mode & S_IRGRP) != 0;
	return (st->st_mode & S_IROTH) != 0;
}

/* ---- opening ------------------------------------------------------------- */

/* Close fd and fail with err. */
static int fail(int fd, int err)
{
	close(fd);
	errno = err;
	return -1;
}

/* fd if it is a regular file cr may read, else -1 (fd closed). */
static int only_regular(int fd, const struct target_creds *cr)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0)
		return fail(fd, errno);
	if (!S_ISREG(st.st_mode))
		return fail(fd, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
	if (cr != NULL && !may_read(cr, &st))
		return fail(fd, EACCES);
	return fd;
}

/* path resolved as if rootfd were "/": symbolic links and ".." stay
 * inside it, /proc magic links are refused. */
static int open_below(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	/* ENOSYS before Linux 5.6; EPERM from seccomp filters that predate
	 * openat2 (older container runtimes). */
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
	/* Without openat2: relative to the root all the same; an absolute
	 * link inside the path may lead out of it, but the credentials and
	 * the last component's O_NOFOLLOW still hold. */
	while (*path == '/')
		path++;
	return openat(rootfd, *path != '\0' ? path : ".", OPEN_FLAGS);
}

int target_file_open_at(int rootfd, const struct target_creds *cr,
                        const char *path)
{
	struct saved_creds sv = { 0 };
	bool took = cr != NULL && become(cr, &sv);
	int fd;

	if (took && !sv.switched) {
		restore(&sv);
		errno = EPERM; /* half the ids: open nothing */
		return -1;
	}
	fd = open_below(rootfd, path);
	if (took)
		restore(&sv);
	return only_regular(fd, took ? NULL : cr);
}

int target_file_open(pid_t pid, const char *path)
{
	struct target_creds cr;
	char root[64];
	int rootfd, fd, err;

	if (target_creds_read(pid, &cr) != 0)
		return -1;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	fd = target_file_open_at(rootfd, &cr, path);
	err = errno;
	close(rootfd);
	errno = err;
	return fd;
}

int target_exe_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return only_regular(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), NULL);
}

int target_object_open(pid_t pid, uintptr_t start, uintptr_t end,
                       const char *path)
{
	char link[96];
	int fd;

	snprintf(link, sizeof(link), "/proc/%d/map_files/%lx-%lx", (int)pid,
	         (unsigned long)start, (unsigned long)end);
	fd = only_regular(open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC), NULL);
	if (fd >= 0 || (errno != EPERM && errno != EACCES))
		return fd;
	/* map_files needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE). */
	return target_file_open(pid, path);
}
