/* push_live.h - --push in a live session: which samples make a period,
 * when a period ends, and handing it to the push thread.
 *
 * push_live wraps the session's snapshot source: every snapshot the
 * views take adds its window to the period (push_period.h), and the
 * first one taken once --push-every seconds have passed ends it: its
 * profile is written as pprof (export.h) and queued for the push thread
 * (push_client.h), on the views' thread, which never waits for the
 * network.  Periods are contiguous: each one's `from` is the last one's
 * `until` (Unix seconds).  The reset and n keys forget counts, so a
 * snapshot is taken first and its window kept.  Each snapshot carries
 * the push health (snapshot.push) for the header and the JSON.
 */
#ifndef PYTOP_UI_PUSH_LIVE_H
#define PYTOP_UI_PUSH_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "profile/snapshot.h"
#include "push_client.h"
#include "push_period.h"

/* How long pytop waits at exit for the last periods to go. */
#define PUSH_EXIT_WAIT_S 5.0

struct push_live {
	const struct options *o;     /* NULL: no --push */
	struct push_client *client;
	struct push_period period;
	struct snapshot_source inner;
	char base[2048];             /* http(s)://HOST/PATH/ingest */
	char app[128];               /* --app, or the command's name */
	double next_due;             /* CLOCK_MONOTONIC seconds */
	int64_t from;                /* the period's start, Unix seconds */
	struct snap_push status;     /* as of the last snapshot */
};

/* Check --push's URL and start the push thread.  0 (also without
 * --push), or -1 with the one-line error in err[errlen] (a usage error:
 * exit 2). */
int push_live_open(struct push_live *pl, const struct options *o, char *err,
                   size_t errlen);

bool push_live_on(const struct push_live *pl);

/* The source the views use: inner, wrapped when pushing.  pl must
 * outlive it. */
struct snapshot_source push_live_source(struct push_live *pl,
                                        struct snapshot_source inner);

/* At exit: with take_last (the views ran), a last snapshot closes the
 * last period, which is queued; then at most PUSH_EXIT_WAIT_S for the
 * queue to empty, and the thread ends.  Says on stderr what could not be
 * sent.  Returns how many periods were not sent.  Nothing without
 * --push. */
size_t push_live_close(struct push_live *pl, bool take_last);

#endif
