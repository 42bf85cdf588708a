/* record_loop.c - pytop record's loop (record_loop.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record_loop.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Polled every 50 ms: the recording's 100 ms buckets are taken at polls. */
#define RECORD_POLL_NS 50000000L

/* Set by SIGINT/SIGTERM/SIGHUP; a handler can only reach a global. */
static volatile sig_atomic_t record_stop;

static void on_signal(int sig)
{
	(void)sig;
	record_stop = 1;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP_SIGNALS (sizeof stop_signals / sizeof stop_signals[0])

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A snapshot for whoever wants one now: a time-stamped export, --push's
 * period (its source wrapper sees every snapshot taken), the final
 * export.  Returns what exporting returned (0 when not asked). */
static int take(struct snapshot_source *src, struct export_live *el, bool stamped, bool final)
{
	struct snapshot s;
	int rc = 0;

	memset(&s, 0, sizeof s);
	src->take(src->ctx, &s);
	if (stamped || final) {
		rc = stamped ? export_live_stamped(el, &s) : export_live_final(el, &s);
		fprintf(stderr, "pytop: %s\n", el->said);
	}
	snapshot_free(&s);
	return rc;
}

int record_loop_run(const struct options *o, struct snapshot_source *src,
                    struct export_live *el, bool take_each_second)
{
	struct sigaction sa, old[NSTOP_SIGNALS];
	double end = o->duration_s > 0 ? now_s() + o->duration_s : 0;
	double next_take = now_s() + 1;
	const struct timespec nap = { 0, RECORD_POLL_NS };
	int rc = 0;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal; /* no SA_RESTART: wake the sleep */
	record_stop = 0;
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i], &sa, &old[i]);
	while (!record_stop && src->poll(src->ctx) && (end == 0 || now_s() < end)) {
		bool stamped = export_live_due(el, now_s());

		if (stamped || (take_each_second && now_s() >= next_take)) {
			if (take(src, el, stamped, false) != 0)
				rc = -1;
			next_take = now_s() + 1;
		}
		nanosleep(&nap, NULL); /* EINTR is fine: the loop looks again */
	}
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i], &old[i], NULL);
	if (export_live_on(el) && take(src, el, false, true) != 0)
		rc = -1;
	return rc;
}
