/* session.h - one profiling session: the target, the sampler thread, the
 * ring and the aggregator, wired together and exposed to the views as a
 * struct snapshot_source.  The views never see anything behind it. */
#ifndef PYTOP_SESSION_H
#define PYTOP_SESSION_H

#include "errors.h"
#include "options.h"
#include "profile/snapshot.h"

struct session;

/* Attach or launch per the options (command already resolved for --demo),
 * find the Python runtime and start sampling.  NULL and *err on failure. */
struct session *session_open(const struct options *o, struct pytop_error *err);

struct snapshot_source session_source(struct session *s);

/* Why pytop runs without its seccomp filter (src/sandbox.h), or NULL when
 * the filter is on. */
const char *session_sandbox_off(const struct session *s);

/* Stop sampling; in launch mode stop the target if it still runs and reap
 * it.  Returns pytop's exit status: the target's in launch mode, else 0.
 * Frees the session. */
int session_close(struct session *s);

#endif
