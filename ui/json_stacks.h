/* json_stacks.h - --json --stacks: the snapshot's stacks in the JSON
 * line, off by default because they can be large:
 *   frames: [{name, file, line, first_line, kind, module}] every frame of
 *           the stacks, indexed from 0; kind is python, native or other
 *           ("[other stacks]", the stacks folded away, and "[other]",
 *           the one frame of folded rows whose code objects went)
 *   stacks: [{frames, tid, pid, samples, samples_win, seconds, python,
 *           native, system, waiting, cpu_wait, gil_wait, mem_growth,
 *           mem_shrink, minflt, majflt}] one per stack and thread with
 *           samples since start; frames are indices into "frames",
 *           outermost first (the innermost frame's function has the
 *           samples as own); counted like "functions" (the thread or
 *           process filter applies) */
#ifndef PYTOP_UI_JSON_STACKS_H
#define PYTOP_UI_JSON_STACKS_H

#include <jansson.h>

#include "profile/snapshot.h"

/* Add "frames" and "stacks" to o; 0, or -1 on OOM. */
int json_stacks_add(json_t *o, const struct snapshot *s);

#endif
