/* source_file.c - read, check and split a source file of the target. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "source_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/target_files.h"

/* ---- reading ----------------------------------------------------------- */

/* Double *buf; on failure free it and set errno to EFBIG. */
static int grow(char **buf, size_t *cap)
{
	char *more = *cap > SOURCE_FILE_MAX_BYTES ? NULL
	             : realloc(*buf, *cap * 2);

	if (more == NULL) {
		free(*buf);
		*buf = NULL;
		errno = EFBIG;
		return -1;
	}
	*buf = more;
	*cap *= 2;
	return 0;
}

/* The bytes of an open regular file (malloc'd, *len and *mtime set), or
 * NULL with errno set (EFBIG: too large; EISDIR / EINVAL: not a regular
 * file). */
static char *read_all(int fd, size_t *len, double *mtime)
{
	struct stat st;
	size_t cap, n = 0;
	char *buf;

	if (fstat(fd, &st) != 0)
		return NULL;
	if (S_ISDIR(st.st_mode) || !S_ISREG(st.st_mode)) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	if ((unsigned long long)st.st_size > SOURCE_FILE_MAX_BYTES) {
		errno = EFBIG;
		return NULL;
	}
	*mtime = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
	/* Room to see the end of file without growing, unless the file
	 * grows while we read (or its size is not known). */
	cap = (size_t)st.st_size + 4097;
	buf = malloc(cap);
	while (buf != NULL) {
		ssize_t got;

		if (n + 1 == cap && grow(&buf, &cap) != 0)
			return NULL; /* it grew past the limit while we read */
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return NULL;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (buf != NULL) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Read path below rootfd with cr's rights (NULL: ours); returns the bytes
 * or NULL with errno set. */
static char *read_below(int rootfd, const struct target_creds *cr,
                        const char *path, size_t *len, double *mtime)
{
	int fd = target_file_open_at(rootfd, cr, path);
	char *data;
	int err;

	if (fd < 0)
		return NULL;
	data = read_all(fd, len, mtime);
	err = errno;
	close(fd);
	errno = err;
	return data;
}

static const char *why(int err)
{
	switch (err) {
	case EFBIG:
		return "file too large";
	case EISDIR:
		return "a directory";
	case EINVAL:
		return "not a regular file";
	case ELOOP:
		return "a symbolic link, not followed";
	case EACCES:
	case EPERM:
		return "the target's user may not read it";
	case EXDEV:
		return "outside the target's root";
	default:
		return strerror(err);
	}
}

/* ---- splitting --------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, cap;
};

static int out_put(struct out *o, char c)
{
	if (o->len == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 4096;
		char *b = realloc(o->buf, cap);

		if (b == NULL)
			return -1;
		o->buf = b;
		o->cap = cap;
	}
	o->buf[o->len++] = c;
	return 0;
}

/* Bytes of the UTF-8 sequence a lead byte starts (1 for anything else:
 * invalid bytes are shown as '?' later anyway). */
static size_t seq_len(unsigned char c)
{
	return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* After a cut, drop a character whose bytes did not all make it. */
static void trim_partial(struct out *o, size_t start)
{
	size_t p = o->len;

	while (p > start && o->len - p < 4 &&
	       ((unsigned char)o->buf[p - 1] & 0xc0) == 0x80)
		p--;
	if (p > start && p - 1 + seq_len((unsigned char)o->buf[p - 1]) >
	    o->len)
		o->len = p - 1;
}

/* Copy one line [s, end) into o: tabs to the next stop, a trailing CR
 * dropped, at most SOURCE_LINE_MAX bytes ending on a character boundary,
 * then a NUL. */
static int put_line(struct out *o, const char *s, const char *end)
{
	size_t start = o->len, col = 0;

	if (end > s && end[-1] == '\r')
		end--;
	for (; s < end && o->len - start < SOURCE_LINE_MAX; s++) {
		int rc = 0;

		if (*s == '\t')
			do
				rc |= out_put(o, ' ');
			while (++col % SOURCE_TAB_STOP != 0);
		else
			rc = out_put(o, *s);
		if (rc != 0)
			return -1;
		/* Columns: one per character, not per continuation byte. */
		if (*s != '\t' && ((unsigned char)*s & 0xc0) != 0x80)
			col++;
	}
	if (o->len - start > SOURCE_LINE_MAX)
		o->len = start + SOURCE_LINE_MAX;
	if (s < end)
		trim_partial(o, start);
	return out_put(o, '\0');
}

static int split_lines(struct source_file *sf, const char *data, size_t len)
{
	struct out o = { NULL, 0, 0 };
	size_t n = 0;
	const char *p = data, *end = data + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl != NULL ? nl : end;

		if (put_line(&o, p, stop) != 0)
			goto fail;
		n++;
		p = nl != NULL ? nl + 1 : end;
	}
	sf->lines = calloc(n + 1, sizeof sf->lines[0]);
	if (sf->lines == NULL)
		goto fail;
	sf->data = o.buf;
	for (size_t i = 0, off = 0; i < n; i++) {
		sf->lines[i] = o.buf + off;
		off += strlen(o.buf + off) + 1;
	}
	sf->nlines = n;
	return 0;
fail:
	free(o.buf);
	return -1;
}

/* ---- loading ----------------------------------------------------------- */

static int load_bytes(struct source_file *sf, const char *from,
                      const char *data, size_t len)
{
	if (memchr(data, '\0', len) != NULL) {
		snprintf(sf->reason, sizeof sf->reason, "%s: binary file "
		         "(NUL bytes)", from);
		return -1;
	}
	if (split_lines(sf, data, len) != 0) {
		snprintf(sf->reason, sizeof sf->reason, "%s: out of memory",
		         from);
		return -1;
	}
	snprintf(sf->from, sizeof sf->from, "%s", from);
	sf->loaded = true;
	return 0;
}

/* "<string>", "<frozen ...>": code that has no file. */
static bool no_file(struct source_file *sf, const char *path)
{
	if (path != NULL && path[0] == '/')
		return false;
	snprintf(sf->reason, sizeof sf->reason, "no file on disk for \"%s\"",
	         path != NULL ? path : "");
	return true;
}

/* Load path as seen from the directory root (NULL: "/") with cr's rights.
 * Nothing is read from anywhere else: a file missing in the target's
 * mount namespace must not be shown from ours. */
static int load_in(struct source_file *sf, const char *root,
                   const struct target_creds *cr, const char *path)
{
	char from[sizeof sf->from];
	size_t len = 0;
	double mtime = 0;
	char *data;
	int rootfd, rc, err;

	snprintf(from, sizeof from, "%s%s", root != NULL ? root : "", path);
	rootfd = open(root != NULL ? root : "/", O_PATH | O_DIRECTORY |
	              O_CLOEXEC);
	if (rootfd < 0) {
		snprintf(sf->reason, sizeof sf->reason, "%s: cannot enter the "
		         "target's root %s (%s)", path, root != NULL ? root : "/",
		         strerror(errno));
		return -1;
	}
	data = read_below(rootfd, cr, path, &len, &mtime);
	err = errno;
	close(rootfd);
	if (data == NULL) {
		snprintf(sf->reason, sizeof sf->reason, "%s: %s", path,
		         why(err));
		return -1;
	}
	rc = load_bytes(sf, from, data, len);
	sf->mtime = mtime;
	free(data);
	return rc;
}

int source_file_load(struct source_file *sf, const char *root,
                     const char *path)
{
	memset(sf, 0, sizeof *sf);
	if (no_file(sf, path))
		return -1;
	return load_in(sf, root, NULL, path);
}

int source_file_load_pid(struct source_file *sf, pid_t pid,
                         const char *path)
{
	struct target_creds cr;
	char root[64];

	memset(sf, 0, sizeof *sf);
	if (no_file(sf, path))
		return -1;
	if (pid <= 0)
		return load_in(sf, NULL, NULL, path);
	if (target_creds_read(pid, &cr) != 0) {
		snprintf(sf->reason, sizeof sf->reason, "%s: process %d is "
		         "gone (%s)", path, (int)pid, strerror(errno));
		return -1;
	}
	snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
	return load_in(sf, root, &cr, path);
}

const char *source_file_line(const struct source_file *sf, int line)
{
	if (line < 1 || (size_t)line > sf->nlines)
		return NULL;
	return sf->lines[line - 1];
}

void source_file_free(struct source_file *sf)
{
	free(sf->data);
	free(sf->lines);
	memset(sf, 0, sizeof *sf);
}

/* ---- the extent of a function ------------------------------------------ */

static size_t indent_of(const char *s)
{
	return strspn(s, " \f");
}

static bool starts_def(const char *t)
{
	return strncmp(t, "def ", 4) == 0 || strncmp(t, "async def ", 10) == 0
	       || strncmp(t, "class ", 6) == 0;
}

int source_file_block_end(const struct source_file *sf, int first)
{
	const char *head = source_file_line(sf, first);
	size_t base;
	bool seen_def;
	int end = first;

	if (head == NULL)
		return first;
	base = indent_of(head);
	seen_def = starts_def(head + base);
	for (int i = first + 1; (size_t)i <= sf->nlines; i++) {
		const char *s = sf->lines[i - 1];
		size_t ind = indent_of(s);
		const char *t = s + ind;

		if (*t == '\0' || *t == '#')
			continue; /* blank or comment: says nothing */
		if (ind > base || strchr(")]}", *t) != NULL) {
			end = i; /* the body, or the end of a long signature */
			continue;
		}
		/* Decorators above the def line are the function's too. */
		if (!seen_def && (*t == '@' || starts_def(t))) {
			seen_def = starts_def(t);
			end = i;
			continue;
		}
		break;
	}
	return end;
}
