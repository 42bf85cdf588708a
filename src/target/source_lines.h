/* source_lines.h - lines of the target's source files, read as the target
 * sees them (target_files.h) and kept per file for the life of the cache,
 * so that a stack with many frames in one file reads it once. */
#ifndef PYTOP_SOURCE_LINES_H
#define PYTOP_SOURCE_LINES_H

#include <sys/types.h>

struct source_lines;

struct source_lines *source_lines_new(pid_t pid);
void source_lines_free(struct source_lines *s);

/* Line `line` (from 1) of `path`, without its leading and trailing white
 * space (as a traceback prints it), escaped for a terminal (escape.h):
 * owned by the caller.  NULL when the file cannot be read, is too big, or
 * has no such line. */
char *source_lines_get(struct source_lines *s, const char *path, int line);

#endif
