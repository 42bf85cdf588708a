/* export.h - the profile written in a format other tools read.
 *
 * Each writer is a pure function of a snapshot (its stack table:
 * stack_frames, stack_nodes, stacks) and a little metadata, writing to a
 * FILE*; it reads nothing else, so a live session, a recording or a test
 * fixture all export the same way.  Opening the output file safely is
 * export_file.h's; when to export is export_live.h's.
 */
#ifndef PYTOP_UI_EXPORT_H
#define PYTOP_UI_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "profile/snapshot.h"

/* What a snapshot does not say about the session itself. */
struct export_meta {
	const char *command;        /* the target's command line */
	const char *python_version; /* "3.12.1", "" unknown */
	int rate_hz;                /* requested sampling rate */
	double start_time;          /* CLOCK_REALTIME seconds sampling began */
	double duration_s;          /* seconds covered */
};

enum export_format {
	EXPORT_NONE = 0,
	EXPORT_COLLAPSED,
	EXPORT_SPEEDSCOPE,
	EXPORT_PPROF,
	EXPORT_FLAMEGRAPH,
	/* Needs a recording's time buckets: export_chrome.h, not
	 * export_write (which fails on it); `pytop export FILE` only. */
	EXPORT_CHROME,
};

/* "collapsed" -> EXPORT_COLLAPSED ...; EXPORT_NONE for any other name. */
enum export_format export_format_named(const char *name);
const char *export_format_name(enum export_format f);
/* "collapsed, speedscope, pprof, flamegraph, chrome (...)": for help
 * and errors. */
const char *export_format_list(void);

/* The metadata of a live snapshot: its command and version, the
 * requested rate, and its start as now - elapsed. */
void export_meta_of(const struct snapshot *s, struct export_meta *m);

/* Write s in format f to out.  0, or -1 when writing failed (out's error
 * flag, or no memory: the file is then incomplete). */
int export_write(FILE *out, enum export_format f, const struct snapshot *s,
                 const struct export_meta *m);

/* The writers, one file each. */
int export_collapsed(FILE *out, const struct snapshot *s,
                     const struct export_meta *m);
int export_speedscope(FILE *out, const struct snapshot *s,
                      const struct export_meta *m);
int export_pprof(FILE *out, const struct snapshot *s,
                 const struct export_meta *m);
int export_flamegraph(FILE *out, const struct snapshot *s,
                      const struct export_meta *m);

#endif
