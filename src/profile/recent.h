/* recent.h - the "last N seconds" view of the profile: the cumulative
 * counts of every function and line remembered at refreshes about
 * RECENT_STEP_S apart (or more), so that a snapshot's counts can be turned into
 * those of the last N seconds exactly (the difference of two cumulative
 * counts), a long-running service not dominated by its history.
 *
 * Memory is bounded: frames older than RECENT_MAX_S are dropped, so at
 * most 70 frames of one count record per
 * row are kept. */
#ifndef PYTOP_PROFILE_RECENT_H
#define PYTOP_PROFILE_RECENT_H

#include <stdbool.h>

#include "profile/snapshot.h"

#define RECENT_STEP_S 1.0  /* frames at least this far apart */
#define RECENT_MAX_S 60.0  /* the longest window */

struct recent;

struct recent *recent_new(void); /* NULL when out of memory */
void recent_free(struct recent *r);

/* Remember s's cumulative counts, taken at s->elapsed_s.  A snapshot whose
 * counts started again (r, a thread or process filter, --native's n)
 * forgets the frames before it.  false when out of memory (the frame is
 * then not kept; the window covers less). */
bool recent_push(struct recent *r, const struct snapshot *s);

/* Turn s's function and line counts and split into those of
 * at most the last `seconds`: the difference from the newest frame at
 * least that old, else the oldest; s->recent_samples is set to the
 * samples among them (s->samples stays since start).  s must have been
 * pushed last.
 * Returns the seconds the counts now cover (0: no earlier frame, s is
 * unchanged). */
double recent_window(const struct recent *r, struct snapshot *s,
                     double seconds);

#endif
