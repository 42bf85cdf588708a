/* proc_maps.c - parsing /proc/PID/maps: which files are mapped where
 * (proc_maps.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/proc_maps.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char deleted_suffix[] = " (deleted)";

static int push_entry(struct proc_maps *m, size_t *cap, struct map_entry *e)
{
	if (m->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct map_entry *nv = realloc(m->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return -1;
		m->v = nv;
		*cap = ncap;
	}
	m->v[m->n++] = *e;
	return 0;
}

static bool parse_line(char *line, struct map_entry *e)
{
	unsigned long long start, end, offset;
	char perms[8];
	int path_at = 0;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms,
	           &offset, &path_at) < 4 || path_at == 0)
		return false;
	memset(e, 0, sizeof(*e));
	e->start = (uintptr_t)start;
	e->end = (uintptr_t)end;
	e->offset = offset;
	snprintf(e->perms, sizeof(e->perms), "%.4s", perms);
	len = strcspn(line + path_at, "\n");
	line[path_at + len] = '\0';
	if (len >= sizeof(deleted_suffix) - 1 &&
	    strcmp(line + path_at + len - (sizeof(deleted_suffix) - 1), deleted_suffix) == 0) {
		e->deleted = true;
		line[path_at + len - (sizeof(deleted_suffix) - 1)] = '\0';
	}
	e->path = strdup(line + path_at);
	return e->path != NULL;
}

int maps_parse(FILE *in, struct proc_maps *out)
{
	char *line = NULL;
	size_t linecap = 0, cap = 0;
	struct map_entry e;

	out->v = NULL;
	out->n = 0;
	while (getline(&line, &linecap, in) > 0) {
		if (!parse_line(line, &e))
			continue;
		if (push_entry(out, &cap, &e) != 0) {
			free(e.path);
			free(line);
			maps_free(out);
			return -1;
		}
	}
	free(line);
	return 0;
}

int maps_load(pid_t pid, struct proc_maps *out)
{
	char path[64];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	rc = maps_parse(f, out);
	fclose(f);
	return rc;
}

void maps_free(struct proc_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct map_entry *maps_first_of(const struct proc_maps *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].offset == 0 && strcmp(m->v[i].path, path) == 0)
			return &m->v[i];
	return NULL;
}

/* libpython3.11.so, libpython3.11d.so.1.0, libpython3.13t.so ... */
static bool is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "libpython", 9) != 0)
		return false;
	p = base + 9;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p) || *p == '.')
		p++;
	while (*p && strchr("mdut", *p))
		p++;
	return strncmp(p - 1, ".so", 3) == 0 || strncmp(p, ".so", 3) == 0;
}

const struct map_entry *maps_find_libpython(const struct proc_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].offset == 0 && is_libpython(m->v[i].path))
			return &m->v[i];
	return NULL;
}
