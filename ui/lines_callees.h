/* lines_callees.h - with --native, the native functions a Python line
 * called, as rows under that line in the lines view: its hottest
 * LINES_CALLEES_SHOWN leaf functions by own samples, then one row summing
 * the rest.  Their figures are shares of all samples, like the line's, so
 * a line's callees add up to at most its %Total (its own samples may
 * have ended on a native frame with a source line of its own). */
#ifndef PYTOP_UI_LINES_CALLEES_H
#define PYTOP_UI_LINES_CALLEES_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"

#define LINES_CALLEES_SHOWN 5
#define LINES_CALLEE_TEXT 512

struct lines_callee_row {
	char text[LINES_CALLEE_TEXT]; /* "    -> deflate_slow  libz.so.1" */
	struct snap_counts c;         /* the callee's, or the rest's sum */
};

/* The rows the callees of file:line take: 0 to LINES_CALLEES_SHOWN + 1. */
size_t lines_callees_count(const struct snapshot *s, const char *file,
                           int line);

/* Fill out[0 .. lines_callees_count()) for file:line.  The labels are
 * indented like caller_text (the line's source) and marked with an arrow
 * (UTF-8) or "->". */
void lines_callees_fill(const struct snapshot *s, const char *file, int line,
                        const char *caller_text, bool utf8,
                        struct lines_callee_row *out);

/* The other way round, for a native function without source lines (no
 * debug info): the Python lines whose own samples ended in it (name in
 * file, as the snapshot's functions name it), most first, each labelled
 * with the calling function and its file:line.  Count, then fill. */
size_t lines_callers_count(const struct snapshot *s, const char *name,
                           const char *file);
void lines_callers_fill(const struct snapshot *s, const char *name,
                        const char *file, bool utf8,
                        struct lines_callee_row *out);

#endif
