/* export_live.h - when a live session writes its profile (-o FILE
 * --format FMT): once when pytop ends, into FILE (created when pytop
 * starts, so a bad path is said before anything runs and nothing can be
 * planted there meanwhile); and, into time-stamped siblings of FILE, on
 * SIGUSR1, every --export-every seconds and on the TUI's e key.
 *
 * Exports run on the views' thread, from snapshots: the sampler never
 * waits for one (a slow disk delays the next refresh, not a sample).
 */
#ifndef PYTOP_UI_EXPORT_LIVE_H
#define PYTOP_UI_EXPORT_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "export.h"
#include "options.h"

struct export_live {
	enum export_format format;  /* EXPORT_NONE: no -o, nothing to do */
	const char *output;         /* -o, borrowed from the options */
	FILE *final;                /* -o's file, open until pytop ends */
	double every_s;             /* --export-every, 0 = never */
	double next_every;          /* CLOCK_MONOTONIC seconds */
	char said[512];             /* the last export's outcome, one line */
};

/* Check -o/--format and create -o's file; with them, SIGUSR1 asks for an
 * export from now on.  0 (also without -o), or -1 with the one-line
 * error in err[errlen]. */
int export_live_open(struct export_live *el, const struct options *o,
                     char *err, size_t errlen);

bool export_live_on(const struct export_live *el);

/* Whether a time-stamped export is asked for now (SIGUSR1 received, or
 * the period is over); consumes the request. */
bool export_live_due(struct export_live *el, double now_mono);

/* Write s into a new time-stamped sibling of -o's file.  0, or -1; either
 * way el->said says what happened ("wrote FILE (N stacks, T ms)"). */
int export_live_stamped(struct export_live *el, const struct snapshot *s);

/* Write s into -o's file and close it (once; later calls do nothing).
 * 0, or -1 with el->said naming the problem. */
int export_live_final(struct export_live *el, const struct snapshot *s);

/* Let go: -o's file, if never written, is removed; SIGUSR1 back to its
 * default. */
void export_live_close(struct export_live *el);

#endif
