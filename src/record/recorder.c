/* recorder.c - the session's recording (recorder.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/record_file.h"
#include "record/record_model.h"
#include "record/record_schema.h"
#include "record/record_writer.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* At close the writer is the only one left working: how long to wait
 * for room for the last bucket. */
#define CLOSE_WAIT_S 30.0

struct recorder {
	char path[4096];
	sqlite3 *db;                 /* until the writer takes it */
	struct record_writer *writer; /* owned */
	struct record_model *model;  /* owned */
	double last_end;             /* the last bucket's end */
	double next_boundary;
	uint64_t prev_ticks;
	uint32_t pending_merged;     /* boundaries passed since the last bucket */
	bool pending_refresh;        /* a snapshot was taken since the last bucket */
	uint64_t merged;
	uint64_t samples, buckets;   /* written so far */
	char failure[512];           /* "" while all is well */
};

struct recorder *recorder_open(const char *path, bool force, struct pytop_error *err)
{
	struct recorder *r = calloc(1, sizeof *r);

	if (r == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	snprintf(r->path, sizeof r->path, "%s", path);
	r->model = record_model_new();
	r->db = r->model != NULL ? record_file_create(path, force, err) : NULL;
	if (r->model == NULL)
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
	if (r->db == NULL) {
		record_model_free(r->model);
		free(r);
		return NULL;
	}
	return r;
}

static bool write_options(sqlite3 *db, const struct options *o)
{
	return record_meta_int(db, "rate_hz", o->rate_hz) &&
	       record_meta_double(db, "delay_s", o->delay_s) &&
	       record_meta_int(db, "idle", o->idle) &&
	       record_meta_int(db, "no_split", o->no_split) &&
	       record_meta_int(db, "native", o->native) &&
	       record_meta_int(db, "native_all", o->native_all) &&
	       record_meta_int(db, "subprocesses", o->subprocesses) &&
	       record_meta_double(db, "duration_limit", o->duration_s);
}

bool recorder_start(struct recorder *r, const struct options *o,
                    const struct recorder_target *t, struct pytop_error *err)
{
	sqlite3 *db = r->db;
	bool ok = sqlite3_exec(db, "BEGIN;", NULL, NULL, NULL) == SQLITE_OK &&
	          record_meta_text(db, "pytop_version", PACKAGE_VERSION) &&
	          record_meta_int(db, "pid", t->pid) &&
	          record_meta_text(db, "mode", t->launched ? "launch" : "attach") &&
	          record_meta_text(db, "command", t->command) &&
	          record_meta_text(db, "python_version", t->python_version) &&
	          record_meta_double(db, "started", t->started) &&
	          record_meta_int(db, "complete", 0) &&
	          write_options(db, o) &&
	          sqlite3_exec(db, "COMMIT;", NULL, NULL, NULL) == SQLITE_OK;

	if (!ok) {
		error_set(err, PYTOP_ERR_FILE, "cannot write the recording %s: %s; check the "
		          "disk", r->path, sqlite3_errmsg(db));
		return false;
	}
	r->db = NULL;
	r->writer = record_writer_start(db, r->path, err);
	r->next_boundary = RECORD_BUCKET_S;
	return r->writer != NULL;
}

static void stop_with(struct recorder *r, const char *why)
{
	if (r->failure[0] == '\0')
		snprintf(r->failure, sizeof r->failure, "%s", why);
}

/* Take a bucket ending at now and queue it (room was checked). */
static void take(struct recorder *r, struct aggregator *agg, double now,
                 const struct rb_gauges *g)
{
	struct rec_bucket *b = record_model_take(r->model, agg);
	double span = now - r->last_end;
	uint64_t samples = 0;

	if (b == NULL) {
		stop_with(r, "the recording stopped: out of memory");
		return;
	}
	b->t_start = r->last_end;
	b->t_end = now;
	b->merged = r->pending_merged;
	b->refresh = r->pending_refresh;
	b->gauges = *g;
	b->rate_hz = span > 0 && g->ticks >= r->prev_ticks
	             ? (double)(g->ticks - r->prev_ticks) / span : 0;
	for (size_t i = 0; i < b->nrows; i++)
		samples += b->rows[i].samples;
	if (!record_writer_push(r->writer, b)) {
		record_bucket_free(b);
		stop_with(r, record_writer_failure(r->writer) != NULL
		             ? record_writer_failure(r->writer)
		             : "the recording stopped: its writer is gone");
		return;
	}
	r->samples += samples;
	r->buckets++;
	r->prev_ticks = g->ticks;
	r->last_end = now;
	r->pending_merged = 0;
	r->pending_refresh = false;
}

bool recorder_due(const struct recorder *r, double now)
{
	return r != NULL && r->failure[0] == '\0' && now >= r->next_boundary;
}

void recorder_tick(struct recorder *r, struct aggregator *agg, double now,
                   const struct rb_gauges *g)
{
	if (!recorder_due(r, now))
		return;
	/* Late polls skip boundaries rather than bunch buckets up. */
	r->next_boundary += RECORD_BUCKET_S;
	if (r->next_boundary <= now)
		r->next_boundary = now + RECORD_BUCKET_S;
	if (!record_writer_has_room(r->writer)) {
		r->pending_merged++;
		r->merged++;
		return;
	}
	take(r, agg, now, g);
}

void recorder_flush(struct recorder *r, struct aggregator *agg, double now,
                    const struct rb_gauges *g)
{
	if (r == NULL || r->failure[0] != '\0')
		return;
	if (!record_writer_has_room(r->writer)) {
		/* The counts the aggregator forgets next cannot wait. */
		struct timespec ts = { 0, 10000000 };
		double waited = 0;

		while (!record_writer_has_room(r->writer) && waited < CLOSE_WAIT_S &&
		       record_writer_failure(r->writer) == NULL) {
			nanosleep(&ts, NULL);
			waited += 0.01;
		}
	}
	take(r, agg, now, g);
}

void recorder_refresh(struct recorder *r, struct aggregator *agg, double now,
                      const struct rb_gauges *g)
{
	if (r == NULL || r->failure[0] != '\0')
		return;
	r->pending_refresh = true;
	if (!record_writer_has_room(r->writer)) {
		/* As at a boundary: merged into the next bucket, whose end
		 * then stands for this refresh (counted). */
		r->pending_merged++;
		r->merged++;
		return;
	}
	take(r, agg, now, g);
}

uint64_t recorder_merged(const struct recorder *r)
{
	return r != NULL ? r->merged : 0;
}

const char *recorder_failure(const struct recorder *r)
{
	if (r == NULL)
		return NULL;
	if (r->failure[0] != '\0')
		return r->failure;
	return r->writer != NULL ? record_writer_failure(r->writer) : NULL;
}

struct finish_ctx {
	const struct recorder *r;
	const struct recorder_end *end;
};

static bool finish(sqlite3 *db, void *ctx)
{
	const struct finish_ctx *f = ctx;

	return record_meta_double(db, "elapsed", f->end->elapsed) &&
	       record_meta_int(db, "exited", f->end->exited) &&
	       record_meta_int(db, "exit_status", f->end->exit_status) &&
	       record_meta_int(db, "samples", (long long)f->r->samples) &&
	       record_meta_int(db, "buckets", (long long)f->r->buckets) &&
	       record_meta_int(db, "buckets_merged", (long long)f->r->merged) &&
	       record_meta_int(db, "dropped", (long long)f->end->dropped) &&
	       record_meta_int(db, "complete", f->r->failure[0] == '\0');
}

bool recorder_close(struct recorder *r, const struct recorder_end *end,
                    struct pytop_error *err)
{
	struct finish_ctx f = { r, end };
	bool ok = record_writer_stop(r->writer, finish, &f, err);
	if (ok && r->failure[0] != '\0') {
		error_set(err, PYTOP_ERR_FILE, "%s", r->failure);
		ok = false;
	}
	record_model_free(r->model);
	free(r);
	return ok;
}

static bool finish_nothing(sqlite3 *db, void *ctx)
{
	(void)db;
	(void)ctx;
	return true;
}

void recorder_abandon(struct recorder *r)
{
	struct pytop_error ignored;

	if (r == NULL)
		return;
	if (r->writer != NULL)
		(void)record_writer_stop(r->writer, finish_nothing, NULL, &ignored);
	sqlite3_close(r->db);
	/* Made by recorder_open for a session that never ran: nothing in it
	 * is anyone's. */
	unlink(r->path);
	record_model_free(r->model);
	free(r);
}
