/* proc_maps.h - the target's memory map (/proc/PID/maps): which files are
 * mapped where, to locate the interpreter binary or libpython. */
#ifndef PYTOP_PROC_MAPS_H
#define PYTOP_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct map_entry {
	uintptr_t start, end;
	uint64_t offset;  /* file offset of the first mapped byte */
	char perms[5];    /* "r-xp" */
	char *path;       /* owned; "" for anonymous; " (deleted)" stripped */
	bool deleted;
};

struct proc_maps {
	struct map_entry *v; /* owned, sorted by start as the kernel lists them */
	size_t n;
};

/* Parse a maps text stream.  0 on success, -1 on allocation failure.
 * Malformed lines are skipped. */
int maps_parse(FILE *in, struct proc_maps *out);
/* Read /proc/PID/maps. -1 with errno on failure (ENOENT: no such process). */
int maps_load(pid_t pid, struct proc_maps *out);
void maps_free(struct proc_maps *m);

/* The lowest mapping of `path` with file offset 0 (its load address), or
 * NULL. */
const struct map_entry *maps_first_of(const struct proc_maps *m, const char *path);
/* First mapped object whose file name looks like libpythonX.Y[suffix].so,
 * or NULL.  Never matches e.g. libboost_python. */
const struct map_entry *maps_find_libpython(const struct proc_maps *m);

#endif
