/* stack_fixture.h - snapshots with stacks for the call tree, flame
 * graph and batch --tree tests: stacks written as "main:1 handle:11
 * parse:21" (outermost first; "!" alone: "[other stacks]"), appended to
 * the snapshot's stack arrays (malloc'd, so snapshot_free and the TUI
 * state free them).  Functions are in "app.py", those named lib_* in
 * "/usr/lib/python3/lib.py"; a function's first line is its frame's
 * line rounded down to ten, plus one.  Each stack's split is 3/4 Python, 1/4
 * native, 4 KiB of Mem+ per sample; the snapshot's samples and its
 * funcs (one row per function, for the lines view) follow. */
#ifndef PYTOP_TESTS_STACK_FIXTURE_H
#define PYTOP_TESTS_STACK_FIXTURE_H

#include <stdint.h>
#include <sys/types.h>

#include "profile/snapshot.h"

void sf_stack(struct snapshot *s, const char *frames, uint64_t samples,
              pid_t tid, pid_t pid);

#endif
