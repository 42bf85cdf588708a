/* replay_source.c - a recording as a snapshot_source (replay_source.h):
 * which refreshes there are, where the position is, which window is
 * chosen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/replay_source.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_read.h"
#include "record/record_timeline.h"
#include "record/replay_snapshot.h"

struct replay {
	struct record_reader *rd;   /* owned */
	char file[256];
	bool batch;
	double from, to;            /* the range replayed */
	bool to_end;                /* ... up to the live view's last refresh */
	/* The positions: from, then each refresh in (from, to]. */
	double *t;                  /* owned */
	size_t nt;
	size_t pos;                 /* TUI: the position shown; batch: the next */
	bool window;                /* [ ] chose one: */
	size_t wfrom, wto;          /* ... positions, wfrom < wto */
	pid_t tid, pid;             /* filters */
	char failure[512];
};

static bool push_time(struct replay *p, double v)
{
	double *g;

	if (p->nt > 0 && !(v > p->t[p->nt - 1]))
		return true;
	g = realloc(p->t, (p->nt + 1) * sizeof *g);
	if (g == NULL)
		return false;
	p->t = g;
	p->t[p->nt++] = v;
	return true;
}

/* The live refreshes in the range; a recording without them (made
 * before they were kept, or by pytop record) refreshes every -d from
 * its start.  --to between refreshes ends the range with one more. */
static int make_positions(struct replay *p, struct pytop_error *err)
{
	const struct record_info *i = record_read_info(p->rd);
	double *rt;
	size_t n;
	bool ok = true;

	if (record_timeline_refreshes(p->rd, &rt, &n, err) != 0)
		return -1;
	ok = push_time(p, p->from);
	for (size_t k = 0; ok && k < n; k++)
		if (rt[k] > p->from && rt[k] <= p->to)
			ok = push_time(p, rt[k]);
	for (double g = i->delay_s; ok && n == 0 && g < p->to; g += i->delay_s)
		if (g > p->from)
			ok = push_time(p, g);
	if (ok && p->t[p->nt - 1] < p->to)
		ok = push_time(p, p->to);
	free(rt);
	if (!ok) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory reading the recording's "
		          "refreshes; replay a shorter window (--from, --to)");
		return -1;
	}
	return 0;
}

/* [from, to): --from, else the start; --to, else the last refresh (the
 * live view's last snapshot), else the end. */
static int choose_range(struct replay *p, double from, double to, struct pytop_error *err)
{
	const struct record_info *i = record_read_info(p->rd);
	struct snapshot whole;
	double *rt;
	size_t n;

	if (record_timeline_refreshes(p->rd, &rt, &n, err) != 0)
		return -1;
	p->from = from >= 0 ? from : 0;
	p->to = to >= 0 ? to : n > 0 ? rt[n - 1] : i->end_s;
	p->to_end = p->to >= (n > 0 ? rt[n - 1] : i->end_s);
	free(rt);
	/* The checks and messages of pytop export: inside, samples there. */
	if (record_read_window(p->rd, p->from, p->to, &whole, err) != 0)
		return -1;
	snapshot_free(&whole);
	if (p->to > i->end_s)
		p->to = i->end_s;
	return 0;
}

struct replay *replay_open(const char *path, double from, double to, bool batch,
                           struct pytop_error *err)
{
	struct replay *p = calloc(1, sizeof *p);

	if (p == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	snprintf(p->file, sizeof p->file, "%s", path);
	p->batch = batch;
	p->rd = record_read_open(path, err);
	if (p->rd == NULL || choose_range(p, from, to, err) != 0 ||
	    make_positions(p, err) != 0) {
		replay_close(p);
		return NULL;
	}
	(void)record_timeline_index(p->rd); /* only speed is lost without it */
	/* Batch prints the refreshes, not the start (nothing to show). */
	p->pos = batch ? 1 : p->nt - 1;
	return p;
}

void replay_close(struct replay *p)
{
	if (p == NULL)
		return;
	record_read_close(p->rd);
	free(p->t);
	free(p);
}

const char *replay_failure(const struct replay *p)
{
	return p->failure[0] != '\0' ? p->failure : NULL;
}

/* ---- the source ------------------------------------------------------------ */

static bool rp_poll(void *ctx)
{
	struct replay *p = ctx;

	/* Batch: refreshes left.  TUI: the recording never "exits". */
	return p->failure[0] == '\0' && (!p->batch || p->pos < p->nt);
}

static struct replay_span span_at(const struct replay *p, size_t at)
{
	struct replay_span sp = { .from = p->from, .tid = p->tid, .pid = p->pid };

	if (p->window && !p->batch) {
		sp.from = p->t[p->wfrom];
		at = p->wto;
	}
	sp.at = p->t[at];
	sp.prev = at > 0 ? p->t[at - 1] : p->t[0];
	if (sp.prev < sp.from)
		sp.prev = sp.from;
	return sp;
}

/* The TUI's sparklines: the gauges at the refreshes up to `at`. */
static void fill_history(struct replay *p, size_t at, struct snap_replay *r)
{
	size_t first = at + 1 > SNAP_REPLAY_HISTORY ? at + 1 - SNAP_REPLAY_HISTORY : 1;

	r->nhistory = 0;
	for (size_t j = first; j <= at && j < p->nt; j++)
		replay_gauges(p->rd, p->t[j - 1], p->t[j], &r->history[r->nhistory++]);
}

static void rp_take(void *ctx, struct snapshot *out)
{
	struct replay *p = ctx;
	size_t at = p->pos < p->nt ? p->pos : p->nt - 1;
	struct replay_span sp = span_at(p, at);
	struct pytop_error err = { 0 };

	if (replay_snapshot_build(p->rd, &sp, out, &err) != 0) {
		snprintf(p->failure, sizeof p->failure, "%s", err.text);
		memset(out, 0, sizeof *out);
	}
	out->replay.on = true;
	snprintf(out->replay.file, sizeof out->replay.file, "%s", p->file);
	out->replay.extent_s = record_read_info(p->rd)->end_s;
	out->replay.at_s = p->t[at];
	/* Batch: --from or --to given; TUI: [ ] chose one. */
	out->replay.window = p->batch ? p->from > 0 || !p->to_end : p->window;
	out->replay.delay_s = record_read_info(p->rd)->delay_s;
	out->replay.from_s = sp.from;
	out->replay.to_s = sp.at;
	if (p->batch)
		p->pos++;
	else
		fill_history(p, at, &out->replay);
	/* The final figures: the target's end, as live. */
	out->target_exited = record_read_info(p->rd)->exited && p->to_end &&
	                     sp.at >= p->t[p->nt - 1];
	if (out->target_exited)
		out->exit_status = record_read_info(p->rd)->exit_status;
}

static void rp_reset(void *ctx)
{
	(void)ctx; /* a recording's counts cannot be forgotten (the TUI says so) */
}

static void rp_filter_thread(void *ctx, pid_t tid)
{
	((struct replay *)ctx)->tid = tid;
}

static void rp_filter_process(void *ctx, pid_t pid)
{
	((struct replay *)ctx)->pid = pid;
}

static bool rp_step(void *ctx, int by)
{
	struct replay *p = ctx;
	size_t was = p->pos;

	if (by == INT_MIN)
		p->pos = 0;
	else if (by == INT_MAX)
		p->pos = p->nt - 1;
	else if (by < 0)
		p->pos = (size_t)-by > p->pos ? 0 : p->pos - (size_t)-by;
	else
		p->pos = (size_t)by >= p->nt - 1 - p->pos ? p->nt - 1 : p->pos + (size_t)by;
	return p->pos != was;
}

/* The window's ends are positions; one end set alone pairs with the
 * start (from) or the end (to). */
static bool rp_mark(void *ctx, int which)
{
	struct replay *p = ctx;
	size_t f = p->window ? p->wfrom : 0, t = p->window ? p->wto : p->nt - 1;

	if (which == REPLAY_MARK_CLEAR) {
		p->window = false;
		return true;
	}
	if (which == REPLAY_MARK_FROM)
		f = p->pos;
	else
		t = p->pos;
	if (f >= t)
		return false;
	p->window = true;
	p->wfrom = f;
	p->wto = t;
	return true;
}

struct snapshot_source replay_source(struct replay *p)
{
	return (struct snapshot_source){
		.ctx = p, .poll = rp_poll, .take = rp_take, .reset = rp_reset,
		.filter_thread = rp_filter_thread,
		.filter_process = record_read_info(p->rd)->subprocesses ? rp_filter_process : NULL,
		.replay_step = rp_step, .replay_mark = rp_mark,
	};
}
