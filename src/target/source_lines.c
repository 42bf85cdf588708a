#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/source_lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "target/target_files.h"

#define MAX_FILES 64
#define MAX_FILE_BYTES (8u << 20) /* a bigger "source" is not one */
#define MAX_LINE_BYTES 4096

struct source_file {
	char *path;  /* owned */
	char *text;  /* owned, NUL-terminated; NULL: could not be read */
	size_t len;
};

struct source_lines {
	pid_t pid;
	struct source_file files[MAX_FILES];
	size_t nfiles;
};

struct source_lines *source_lines_new(pid_t pid)
{
	struct source_lines *s = calloc(1, sizeof(*s));

	if (s != NULL)
		s->pid = pid;
	return s;
}

void source_lines_free(struct source_lines *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].text);
	}
	free(s);
}

/* The whole file, or NULL.  The descriptor is non-blocking and regular
 * (target_files.h), so a read never waits. */
static char *slurp(pid_t pid, const char *path, size_t *len)
{
	int fd = target_file_open(pid, path);
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(MAX_FILE_BYTES + 1);
	while (buf != NULL && n < MAX_FILE_BYTES) {
		ssize_t got = read(fd, buf + n, MAX_FILE_BYTES - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (buf != NULL)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static struct source_file *file_for(struct source_lines *s, const char *path)
{
	struct source_file *f;

	for (size_t i = 0; i < s->nfiles; i++)
		if (strcmp(s->files[i].path, path) == 0)
			return &s->files[i];
	if (s->nfiles == MAX_FILES)
		return NULL;
	f = &s->files[s->nfiles];
	*f = (struct source_file){ .path = strdup(path) };
	if (f->path == NULL)
		return NULL;
	f->text = slurp(s->pid, path, &f->len);
	s->nfiles++;
	return f;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\v';
}

char *source_lines_get(struct source_lines *s, const char *path, int line)
{
	struct source_file *f = file_for(s, path);
	const char *p, *end, *stop;
	char raw[MAX_LINE_BYTES + 1], *out;
	size_t n;

	if (f == NULL || f->text == NULL || line < 1)
		return NULL;
	p = f->text;
	stop = f->text + f->len;
	for (int i = 1; i < line; i++) {
		p = memchr(p, '\n', (size_t)(stop - p));
		if (p == NULL)
			return NULL;
		p++;
	}
	end = memchr(p, '\n', (size_t)(stop - p));
	if (end == NULL)
		end = stop;
	while (p < end && blank(*p))
		p++;
	while (end > p && blank(end[-1]))
		end--;
	n = (size_t)(end - p) < MAX_LINE_BYTES ? (size_t)(end - p) : MAX_LINE_BYTES;
	memcpy(raw, p, n);
	raw[n] = '\0';
	out = malloc(4 * n + 1); /* every byte may become \xNN */
	if (out != NULL)
		escape_text(out, 4 * n + 1, raw);
	return out;
}
