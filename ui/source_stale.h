/* source_stale.h - whether the source file the lines view shows may no
 * longer be the text the target compiled: the file was written after the
 * process started, or the function's first line no longer begins it.
 * Line numbers in the profile then may not match the text shown, and the
 * view says so. */
#ifndef PYTOP_UI_SOURCE_STALE_H
#define PYTOP_UI_SOURCE_STALE_H

#include <stddef.h>

#include "source_file.h"

enum source_stale {
	SOURCE_CURRENT = 0, /* nothing says it changed */
	SOURCE_NEWER,       /* modified after the process started */
	SOURCE_DEF_MOVED,   /* its first line does not define the function */
};

/* The verdict for the function `qualname` whose code starts at line
 * `first` of the loaded file sf, in a process started at `started`
 * (CLOCK_REALTIME seconds; 0 unknown: the time is not compared).  Module
 * code and comprehensions have no line of their own to check; a
 * "<lambda>" line must hold the word lambda; other names need their
 * "def NAME", "async def NAME" or "class NAME" at `first`, or below the
 * decorators that start there. */
enum source_stale source_stale(const struct source_file *sf, double started,
                               const char *qualname, int first);

/* One line saying why, for the view's note ("" when current). */
void source_stale_reason(enum source_stale why, const struct source_file *sf,
                         double started, const char *qualname, int first,
                         char *buf, size_t size);

#endif
