/* record_loop.c - pytop record's loop (record_loop.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record_loop.h"

#include <signal.h>
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

void record_loop_run(const struct options *o, struct snapshot_source *src)
{
	struct sigaction sa, old[NSTOP_SIGNALS];
	double end = o->duration_s > 0 ? now_s() + o->duration_s : 0;
	const struct timespec nap = { 0, RECORD_POLL_NS };

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal; /* no SA_RESTART: wake the sleep */
	record_stop = 0;
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i], &sa, &old[i]);
	while (!record_stop && src->poll(src->ctx) && (end == 0 || now_s() < end))
		nanosleep(&nap, NULL); /* EINTR is fine: the loop looks again */
	for (size_t i = 0; i < NSTOP_SIGNALS; i++)
		sigaction(stop_signals[i], &old[i], NULL);
}
