/* push_client.h - the thread that POSTs pushed periods (libcurl).
 *
 * The views' thread hands it a finished request (URL and pprof body) and
 * never waits: the queue holds PUSH_QUEUE_MAX periods, and one handed in
 * while it is full is dropped and counted.  A connection error, a 5xx or
 * a 429 is retried with exponential backoff and jitter, up to
 * PUSH_MAX_TRIES tries; any other answer that is not 2xx gives the period
 * up at once (counted as failed).  Connect and total timeouts are set, so
 * a server that hangs cannot hold the queue.
 */
#ifndef PYTOP_UI_PUSH_CLIENT_H
#define PYTOP_UI_PUSH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "profile/snapshot.h"

#define PUSH_QUEUE_MAX 8
#define PUSH_MAX_TRIES 6
#define PUSH_CONNECT_TIMEOUT_S 5
#define PUSH_TOTAL_TIMEOUT_S 20

struct push_client;

/* Start the thread.  NULL with the one-line error in err[errlen]. */
struct push_client *push_client_start(char *err, size_t errlen);

/* Queue a request; the client owns url and body from now on (also when
 * it drops them: false, counted). */
bool push_client_enqueue(struct push_client *c, char *url, char *body,
                         size_t len);

/* The health so far, into out (out->on set). */
void push_client_status(struct push_client *c, struct snap_push *out);

/* Wait at most timeout_s for the queue to empty, then stop the thread
 * (a request under way is cut off) and free c.  Returns how many periods
 * were not sent then (queued or under way). */
size_t push_client_finish(struct push_client *c, double timeout_s);

#endif
