/* source_file.h - one source file of the target, read from disk for the
 * lines view, split into lines ready to show: tabs expanded, each line
 * cut to a sane length at a character boundary.  Whatever goes wrong
 * (missing, not a file, binary, too big) leaves an empty file and a
 * reason to show instead. */
#ifndef PYTOP_UI_SOURCE_FILE_H
#define PYTOP_UI_SOURCE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Larger files are not loaded (a source file that size is generated). */
#define SOURCE_FILE_MAX_BYTES (16u << 20)
/* Bytes kept of one line after tab expansion (the screen is narrower). */
#define SOURCE_LINE_MAX 1024
#define SOURCE_TAB_STOP 8

struct source_file {
	char *data;      /* owns: the lines, NUL-separated */
	char **lines;    /* owns the array: lines[i] is line i + 1 */
	size_t nlines;
	bool loaded;
	char reason[4352]; /* when !loaded: why, for "source not available:" */
	char from[4096];  /* when loaded: the path actually read */
	double mtime;     /* when loaded: its modification time
	                     (CLOCK_REALTIME seconds) */
};

/* Read path as seen from the directory root (NULL: "/"), never from
 * anywhere else, with pytop's own rights and the rules of
 * src/target/target_files.h (no symbolic link as the last component, regular
 * files only).  Returns 0, or -1 with sf->reason set. */
int source_file_load(struct source_file *sf, const char *root,
                     const char *path);

/* Read path as process pid sees it: inside its /proc/PID/root, with its
 * file-system credentials, so that a file it may not read (or one that
 * exists only outside its mount namespace) is never shown as its source.
 * pid <= 0: as source_file_load with no root. */
int source_file_load_pid(struct source_file *sf, pid_t pid,
                         const char *path);

/* Line number (1-based) as text, or NULL past the end. */
const char *source_file_line(const struct source_file *sf, int line);

/* The last line of the function starting at first: the header, then every
 * line indented deeper than the first, blank and comment lines included
 * (trailing ones are not).  Lines closing brackets at the first line's
 * indent (a long signature) belong to the header.  Returns first when the
 * file does not reach that far or has no body there. */
int source_file_block_end(const struct source_file *sf, int first);

void source_file_free(struct source_file *sf);

#endif
