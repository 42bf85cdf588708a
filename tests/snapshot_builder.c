/* snapshot_builder.c - see snapshot_builder.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "snapshot_builder.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct snapshot sb_snapshot(pid_t pid, const char *command,
                            const char *python_version, uint64_t samples)
{
	struct snapshot s;

	memset(&s, 0, sizeof s);
	s.pid = pid;
	snprintf(s.command, sizeof s.command, "%s", command);
	snprintf(s.python_version, sizeof s.python_version, "%s",
	         python_version);
	s.samples = samples;
	return s;
}

/* n zeroed entries of size bytes and a spare one, in place of *old. */
static void *rows(void *old, size_t n, size_t size)
{
	void *p;

	free(old);
	p = calloc(n + 1, size);
	cr_assert_not_null(p);
	return p;
}

struct snap_func *sb_funcs(struct snapshot *s, size_t n)
{
	s->funcs = rows(s->funcs, n, sizeof *s->funcs);
	s->nfuncs = n;
	return s->funcs;
}

struct snap_line *sb_lines(struct snapshot *s, size_t n)
{
	s->lines = rows(s->lines, n, sizeof *s->lines);
	s->nlines = n;
	return s->lines;
}

struct snap_thread *sb_threads(struct snapshot *s, size_t n)
{
	s->threads = rows(s->threads, n, sizeof *s->threads);
	s->nthreads = n;
	return s->threads;
}

struct snap_process *sb_processes(struct snapshot *s, size_t n)
{
	s->processes = rows(s->processes, n, sizeof *s->processes);
	s->nprocesses = n;
	return s->processes;
}

void sb_set_threads(struct snapshot *s, const struct snap_thread *t,
                    size_t n)
{
	memcpy(sb_threads(s, n), t, n * sizeof *t);
}

void sb_set_processes(struct snapshot *s, const struct snap_process *p,
                      size_t n)
{
	memcpy(sb_processes(s, n), p, n * sizeof *p);
}
