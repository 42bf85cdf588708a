/* snapshot_builder.h - fixed snapshots for the view tests, built the way
 * the engine hands them over: every array malloc'd (one spare zeroed
 * entry, as the engine's), so that snapshot_free and the TUI state, which
 * takes ownership, free them.  The strings the fixtures put in are static:
 * snapshot_free does not free them (no owned string copy is set). */
#ifndef PYTOP_TESTS_SNAPSHOT_BUILDER_H
#define PYTOP_TESTS_SNAPSHOT_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

/* A snapshot of pid with command and Python version set, samples
 * counted, no rows. */
struct snapshot sb_snapshot(pid_t pid, const char *command,
                            const char *python_version, uint64_t samples);

/* Give s n zeroed rows of each kind, replacing any it had; returns the
 * array for the fixture to fill. */
struct snap_func *sb_funcs(struct snapshot *s, size_t n);
struct snap_line *sb_lines(struct snapshot *s, size_t n);
struct snap_thread *sb_threads(struct snapshot *s, size_t n);
struct snap_process *sb_processes(struct snapshot *s, size_t n);

/* The same, filled with copies of rows. */
void sb_set_threads(struct snapshot *s, const struct snap_thread *rows,
                    size_t n);
void sb_set_processes(struct snapshot *s, const struct snap_process *rows,
                      size_t n);

#endif
