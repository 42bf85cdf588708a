/* json_replay.h - a replay's JSON line (pytop replay -b --json): the
 * figures a recording does not keep become null, never a 0 that looks
 * measured, and a "replay" object says what the line is of. */
#ifndef PYTOP_UI_JSON_REPLAY_H
#define PYTOP_UI_JSON_REPLAY_H

#include <jansson.h>

#include "profile/snapshot.h"

/* o: the snapshot's object as json_out built it.  0, -1 on OOM. */
int json_replay_mark(json_t *o, const struct snapshot *s);

#endif
