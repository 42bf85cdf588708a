/* fuzz_proc.c - libFuzzer target for the /proc (and cgroup) text parsers:
 * thread and process stat lines, the syscall line, the joined command
 * line, status's VmHWM, memory.max, and the maps parser with its lookups.
 * The texts come from the kernel but carry the target's own strings
 * (comm, argv, mapped file names), so they are fuzzed as hostile.
 *
 * Input: one byte choosing the parser, then the file's text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/proc_children.h"
#include "target/proc_gauges.h"
#include "target/proc_maps.h"
#include "target/proc_threads.h"

enum { P_THREAD_STAT, P_SYSCALL, P_CHILD_STAT, P_CMDLINE, P_STATUS,
       P_MEMORY_MAX, P_MAPS, P_COUNT };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct proc_children *children;

/* A NUL-terminated heap copy of exactly len + 1 bytes (ASan sees any read
 * past the NUL). */
static char *text_copy(const uint8_t *p, size_t len)
{
	char *s = malloc(len + 1);

	if (s != NULL) {
		memcpy(s, p, len);
		s[len] = '\0';
	}
	return s;
}

static void fuzz_maps(const uint8_t *p, size_t len)
{
	FILE *in = fmemopen((void *)p, len, "r");
	struct proc_maps m;

	if (in == NULL)
		return;
	if (maps_parse(in, &m) == 0) {
		const struct map_entry *lib = maps_find_libpython(&m);

		for (size_t i = 0; i < m.n; i++)
			if (m.v[i].path == NULL || strlen(m.v[i].perms) > 4)
				abort();
		if (lib != NULL)
			(void)maps_first_of(&m, lib->path);
		if (m.n > 0)
			(void)maps_first_of(&m, m.v[m.n - 1].path);
		maps_free(&m);
	}
	fclose(in);
}

static void fuzz_stream(const uint8_t *p, size_t len)
{
	FILE *in = fmemopen((void *)p, len, "r");

	if (in == NULL)
		return;
	(void)proc_gauges_parse_hwm(in);
	fclose(in);
}

static void fuzz_text(int which, char *s, size_t len)
{
	struct proc_stat_line line;
	struct proc_child child;
	uint64_t uaddr;

	switch (which) {
	case P_THREAD_STAT:
		(void)proc_threads_parse_stat(s, &line);
		break;
	case P_SYSCALL:
		(void)proc_threads_parse_syscall(s, &uaddr);
		(void)proc_threads_parse_schedstat(s, &uaddr, &uaddr);
		break;
	case P_CHILD_STAT:
		(void)proc_children_parse_stat(children, 4242, s, &child);
		break;
	case P_MEMORY_MAX:
		(void)proc_gauges_parse_max(s);
		(void)proc_gauges_parse_throttled(s);
		break;
	case P_CMDLINE:
		proc_children_join_cmdline(s, len);
		/* Trailing separators are gone. */
		if (s[0] != '\0' && s[strlen(s) - 1] == ' ')
			abort();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int which;
	char *s;

	if (size < 1)
		return 0;
	if (children == NULL && (children = proc_children_new()) == NULL)
		abort();
	which = data[0] % P_COUNT;
	data++;
	size--;
	if (which == P_MAPS) {
		fuzz_maps(data, size);
		return 0;
	}
	if (which == P_STATUS) {
		fuzz_stream(data, size);
		return 0;
	}
	s = text_copy(data, size);
	if (s != NULL)
		fuzz_text(which, s, size);
	free(s);
	return 0;
}
