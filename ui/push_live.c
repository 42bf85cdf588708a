/* push_live.c - --push's periods in a live session (push_live.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "push_live.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export.h"
#include "push_url.h"

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int push_live_open(struct push_live *pl, const struct options *o, char *err,
                   size_t errlen)
{
	memset(pl, 0, sizeof *pl);
	if (o->push_url == NULL)
		return 0;
	if (push_url_base(o->push_url, pl->base, sizeof pl->base, err, errlen) != 0)
		return -1;
	if (!push_period_init(&pl->period)) {
		snprintf(err, errlen, "no memory for --push; free some and retry");
		return -1;
	}
	pl->client = push_client_start(err, errlen);
	if (pl->client == NULL) {
		push_period_destroy(&pl->period);
		return -1;
	}
	if (o->push_app != NULL)
		snprintf(pl->app, sizeof pl->app, "%s", o->push_app);
	pl->o = o;
	pl->from = (int64_t)time(NULL);
	pl->next_due = mono_now() + o->push_every_s;
	pl->status.on = true;
	return 0;
}

bool push_live_on(const struct push_live *pl)
{
	return pl->o != NULL;
}

/* The period's pprof, queued; a new period starts.  s gives the
 * identity (command, version, rate). */
static void end_period(struct push_live *pl, const struct snapshot *s)
{
	int64_t until = (int64_t)time(NULL);
	struct snapshot view;
	struct export_meta m = { 0 };
	char *body = NULL, *url;
	size_t len = 0;
	FILE *f;

	/* Whole seconds, and a period is never empty of time. */
	if (until <= pl->from)
		until = pl->from + 1;
	if (pl->app[0] == '\0')
		push_url_app_of(s->command, pl->app, sizeof pl->app);
	push_period_view(&pl->period, s, &view);
	m.command = s->command;
	m.python_version = s->python_version;
	m.rate_hz = s->requested_hz;
	m.start_time = (double)pl->from;
	m.duration_s = (double)(until - pl->from);
	f = open_memstream(&body, &len);
	if (f != NULL && export_write(f, EXPORT_PPROF, &view, &m) != 0) {
		fclose(f);
		free(body);
		body = NULL;
	} else if (f != NULL && fclose(f) != 0) {
		free(body);
		body = NULL;
	}
	url = push_url_ingest(pl->base, pl->app, pl->o->push_labels,
	                      pl->o->npush_labels, pl->from, until,
	                      s->requested_hz);
	/* NULL url or body (no memory) is counted as dropped. */
	push_client_enqueue(pl->client, url, body, len);
	pl->from = until;
	push_period_clear(&pl->period);
}

static void note_status(struct push_live *pl, struct snapshot *s)
{
	push_client_status(pl->client, &pl->status);
	s->push = pl->status;
}

/* The views' take: the window joins the period, which ends when due. */
static void push_take(void *ctx, struct snapshot *out)
{
	struct push_live *pl = ctx;
	double now = mono_now();

	pl->inner.take(pl->inner.ctx, out);
	push_period_add(&pl->period, out);
	if (now >= pl->next_due) {
		/* A late loop skips missed periods rather than bunching them. */
		while (pl->next_due <= now)
			pl->next_due += pl->o->push_every_s;
		end_period(pl, out);
	}
	note_status(pl, out);
}

/* Before counts are forgotten, what they hold since the last snapshot
 * joins the period. */
static void keep_window(struct push_live *pl)
{
	struct snapshot s;

	pl->inner.take(pl->inner.ctx, &s);
	push_period_add(&pl->period, &s);
	snapshot_free(&s);
}

static bool push_poll(void *ctx)
{
	struct push_live *pl = ctx;

	return pl->inner.poll(pl->inner.ctx);
}

static void push_reset(void *ctx)
{
	struct push_live *pl = ctx;

	keep_window(pl);
	pl->inner.reset(pl->inner.ctx);
}

static void push_show_native_all(void *ctx, bool on)
{
	struct push_live *pl = ctx;

	keep_window(pl);
	pl->inner.show_native_all(pl->inner.ctx, on);
}

static void push_filter_thread(void *ctx, pid_t tid)
{
	struct push_live *pl = ctx;

	pl->inner.filter_thread(pl->inner.ctx, tid);
}

static void push_filter_process(void *ctx, pid_t pid)
{
	struct push_live *pl = ctx;

	pl->inner.filter_process(pl->inner.ctx, pid);
}

static void push_set_window(void *ctx, double seconds)
{
	struct push_live *pl = ctx;

	pl->inner.set_window(pl->inner.ctx, seconds);
}

struct snapshot_source push_live_source(struct push_live *pl,
                                        struct snapshot_source inner)
{
	struct snapshot_source w = {
		.ctx = pl, .poll = push_poll, .take = push_take, .reset = push_reset,
		.filter_thread = inner.filter_thread ? push_filter_thread : NULL,
		.show_native_all = inner.show_native_all ? push_show_native_all : NULL,
		.filter_process = inner.filter_process ? push_filter_process : NULL,
		.set_window = inner.set_window ? push_set_window : NULL,
	};

	if (!push_live_on(pl))
		return inner;
	pl->inner = inner;
	return w;
}

size_t push_live_close(struct push_live *pl, bool take_last)
{
	size_t left;

	if (!push_live_on(pl))
		return 0;
	if (take_last && pl->inner.take != NULL) {
		struct snapshot s;

		pl->inner.take(pl->inner.ctx, &s);
		push_period_add(&pl->period, &s);
		end_period(pl, &s);
		snapshot_free(&s);
	}
	left = push_client_finish(pl->client, PUSH_EXIT_WAIT_S);
	if (left > 0)
		fprintf(stderr, "pytop: push: gave up on %zu period%s after %.0f s "
		        "at exit (%s); check the server at %s\n", left,
		        left == 1 ? "" : "s", PUSH_EXIT_WAIT_S,
		        pl->status.last_error[0] ? pl->status.last_error : "no answer",
		        pl->o->push_url);
	push_period_destroy(&pl->period);
	pl->o = NULL;
	return left;
}
