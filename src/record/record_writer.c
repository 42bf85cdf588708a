/* record_writer.c - the writer thread (record_writer.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif

#include "record/record_writer.h"
#include "record/record_schema.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	ST_STRING, ST_FRAME, ST_STACK, ST_THREAD, ST_THREAD_SEEN, ST_PROCESS,
	ST_BUCKET, ST_SAMPLE, ST_DESCRIBE, ST_REFRESH, NSTMT
};

static const char *const stmt_sql[NSTMT] = {
	[ST_STRING] = "INSERT INTO strings(id, text) VALUES(?,?);",
	[ST_FRAME] = "INSERT INTO frames(id, name, file, line, first_line, native, module, other)"
	             " VALUES(?,?,?,?,?,?,?,?);",
	[ST_STACK] = "INSERT INTO stacks(id, parent, frame, depth) VALUES(?,?,?,?);",
	[ST_THREAD] = "INSERT INTO threads(id, tid, pid, name, first_bucket, last_bucket)"
	              " VALUES(?,?,?,?,?,?);",
	[ST_THREAD_SEEN] = "UPDATE threads SET last_bucket=?2 WHERE id=?1;",
	[ST_PROCESS] = "INSERT INTO processes(pid, first_bucket, last_bucket) VALUES(?1,?2,?2)"
	               " ON CONFLICT(pid) DO UPDATE SET last_bucket=excluded.last_bucket;",
	[ST_BUCKET] = "INSERT INTO buckets(id, t_start, t_end, merged, rate_hz, ticks, errors,"
	              " dropped, gauges_valid, rss, rss_peak, minflt, majflt, cpu_user,"
	              " cpu_system, os_threads) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);",
	[ST_DESCRIBE] = "UPDATE processes SET ppid=?2, command=?3, python=?4 WHERE pid=?1;",
	[ST_SAMPLE] = "INSERT INTO samples(bucket, stack, thread, samples, us, python, native,"
	              " system, cpu_wait, gil_wait, waiting, mem_growth, mem_shrink, minflt,"
	              " majflt) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?);",
	[ST_REFRESH] = "INSERT INTO refreshes(bucket) VALUES(?);",
};

struct record_writer {
	sqlite3 *db;                  /* owned */
	sqlite3_stmt *st[NSTMT];      /* owned */
	char path[4096];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct rec_bucket *q[RECORD_QUEUE_BUCKETS]; /* under mu */
	size_t head, n;               /* under mu */
	bool stop;                    /* under mu */
	atomic_bool failed;
	char failure[512];            /* set before failed, by the thread */
};

/* ---- one bucket --------------------------------------------------------- */

static bool step(sqlite3_stmt *st)
{
	bool ok = sqlite3_step(st) == SQLITE_DONE;

	sqlite3_reset(st);
	return ok;
}

static bool write_defs(struct record_writer *w, const struct rec_bucket *b)
{
	sqlite3_stmt *s;
	bool ok = true;

	s = w->st[ST_STRING];
	for (size_t i = 0; ok && i < b->nstrings; i++) {
		sqlite3_bind_int64(s, 1, b->strings[i].id);
		sqlite3_bind_text(s, 2, b->strings[i].text, -1, SQLITE_STATIC);
		ok = step(s);
	}
	s = w->st[ST_FRAME];
	for (size_t i = 0; ok && i < b->nframes; i++) {
		const struct rb_frame *f = &b->frames[i];

		sqlite3_bind_int64(s, 1, f->id);
		sqlite3_bind_int64(s, 2, f->name);
		sqlite3_bind_int64(s, 3, f->file);
		sqlite3_bind_int(s, 4, f->line);
		sqlite3_bind_int(s, 5, f->first_line);
		sqlite3_bind_int(s, 6, f->native);
		sqlite3_bind_int64(s, 7, f->module);
		sqlite3_bind_int(s, 8, f->other);
		ok = step(s);
	}
	s = w->st[ST_STACK];
	for (size_t i = 0; ok && i < b->nstacks; i++) {
		sqlite3_bind_int64(s, 1, b->stacks[i].id);
		sqlite3_bind_int64(s, 2, b->stacks[i].parent);
		sqlite3_bind_int64(s, 3, b->stacks[i].frame);
		sqlite3_bind_int64(s, 4, b->stacks[i].depth);
		ok = step(s);
	}
	return ok;
}

static bool add_threads(struct record_writer *w, const struct rec_bucket *b)
{
	sqlite3_stmt *s = w->st[ST_THREAD];
	bool ok = true;

	for (size_t i = 0; ok && i < b->nthreads; i++) {
		const struct rb_thread *t = &b->threads[i];

		sqlite3_bind_int64(s, 1, t->id);
		sqlite3_bind_int64(s, 2, t->tid);
		sqlite3_bind_int64(s, 3, t->pid);
		sqlite3_bind_int64(s, 4, t->name);
		sqlite3_bind_int64(s, 5, b->id);
		sqlite3_bind_int64(s, 6, b->id);
		ok = step(s);
	}
	return ok;
}

/* The lifetimes of the threads with rows here (and their processes)
 * reach this bucket. */
static bool threads_seen(struct record_writer *w, const struct rec_bucket *b)
{
	bool ok = true;

	for (size_t i = 0; ok && i < b->nseen; i++) {
		pid_t pid = b->seen[i].pid;

		sqlite3_bind_int64(w->st[ST_THREAD_SEEN], 1, b->seen[i].thread);
		sqlite3_bind_int64(w->st[ST_THREAD_SEEN], 2, b->id);
		sqlite3_bind_int64(w->st[ST_PROCESS], 1, pid > 0 ? pid : -pid);
		sqlite3_bind_int64(w->st[ST_PROCESS], 2, b->id);
		ok = step(w->st[ST_THREAD_SEEN]) && step(w->st[ST_PROCESS]);
	}
	for (size_t i = 0; ok && i < b->nprocesses; i++) {
		const struct rb_process *p = &b->processes[i];

		sqlite3_bind_int64(w->st[ST_DESCRIBE], 1, p->pid);
		sqlite3_bind_int64(w->st[ST_DESCRIBE], 2, p->ppid);
		sqlite3_bind_int64(w->st[ST_DESCRIBE], 3, p->command);
		sqlite3_bind_int64(w->st[ST_DESCRIBE], 4, p->python);
		ok = step(w->st[ST_DESCRIBE]);
	}
	return ok;
}

static sqlite3_int64 split_units(double samples)
{
	return llround(samples * RECORD_SPLIT_PER_SAMPLE);
}

static bool write_rows(struct record_writer *w, const struct rec_bucket *b)
{
	sqlite3_stmt *s = w->st[ST_SAMPLE];
	bool ok = true;

	for (size_t i = 0; ok && i < b->nrows; i++) {
		const struct rb_row *r = &b->rows[i];

		sqlite3_bind_int64(s, 1, b->id);
		sqlite3_bind_int64(s, 2, r->stack);
		sqlite3_bind_int64(s, 3, r->thread);
		sqlite3_bind_int64(s, 4, (sqlite3_int64)r->samples);
		sqlite3_bind_int64(s, 5, (sqlite3_int64)((r->ns + 500) / 1000));
		sqlite3_bind_int64(s, 6, split_units(r->split.python));
		sqlite3_bind_int64(s, 7, split_units(r->split.native));
		sqlite3_bind_int64(s, 8, split_units(r->split.system));
		sqlite3_bind_int64(s, 9, split_units(r->split.cpu_wait));
		sqlite3_bind_int64(s, 10, split_units(r->split.gil_wait));
		sqlite3_bind_int64(s, 11, split_units(r->split.waiting));
		sqlite3_bind_int64(s, 12, (sqlite3_int64)r->split.mem_growth);
		sqlite3_bind_int64(s, 13, (sqlite3_int64)r->split.mem_shrink);
		sqlite3_bind_int64(s, 14, (sqlite3_int64)r->split.minflt);
		sqlite3_bind_int64(s, 15, (sqlite3_int64)r->split.majflt);
		ok = step(s);
	}
	return ok;
}

static bool write_bucket_row(struct record_writer *w, const struct rec_bucket *b)
{
	sqlite3_stmt *s = w->st[ST_BUCKET];
	const struct rb_gauges *g = &b->gauges;

	sqlite3_bind_int64(s, 1, b->id);
	sqlite3_bind_double(s, 2, b->t_start);
	sqlite3_bind_double(s, 3, b->t_end);
	sqlite3_bind_int64(s, 4, b->merged);
	sqlite3_bind_double(s, 5, b->rate_hz);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)g->ticks);
	sqlite3_bind_int64(s, 7, (sqlite3_int64)g->errors);
	sqlite3_bind_int64(s, 8, (sqlite3_int64)g->dropped);
	sqlite3_bind_int(s, 9, g->valid);
	for (int i = 10; i <= 16; i++)
		sqlite3_bind_null(s, i);
	if (g->valid) {
		sqlite3_bind_int64(s, 10, (sqlite3_int64)g->rss);
		sqlite3_bind_int64(s, 11, (sqlite3_int64)g->rss_peak);
		sqlite3_bind_int64(s, 12, (sqlite3_int64)g->minflt);
		sqlite3_bind_int64(s, 13, (sqlite3_int64)g->majflt);
		sqlite3_bind_double(s, 14, (double)g->utime_ns / 1e9);
		sqlite3_bind_double(s, 15, (double)g->stime_ns / 1e9);
		sqlite3_bind_int(s, 16, g->threads);
	}
	if (!step(s))
		return false;
	if (!b->refresh)
		return true;
	sqlite3_bind_int64(w->st[ST_REFRESH], 1, b->id);
	return step(w->st[ST_REFRESH]);
}

static bool write_bucket(struct record_writer *w, const struct rec_bucket *b)
{
	return write_defs(w, b) && add_threads(w, b) && write_rows(w, b) &&
	       threads_seen(w, b) && write_bucket_row(w, b);
}

/* ---- the thread ----------------------------------------------------------- */

static void fail(struct record_writer *w)
{
	if (atomic_load(&w->failed))
		return;
	snprintf(w->failure, sizeof w->failure, "writing the recording %.300s failed: %.100s; "
	         "it holds what came before (check the disk's free space)", w->path,
	         sqlite3_errmsg(w->db));
	atomic_store(&w->failed, true);
}

/* One transaction for all that was queued; nothing after a failure. */
static void write_batch(struct record_writer *w, struct rec_bucket **b, size_t n)
{
	bool ok = !atomic_load(&w->failed) &&
	          sqlite3_exec(w->db, "BEGIN;", NULL, NULL, NULL) == SQLITE_OK;

	for (size_t i = 0; ok && i < n; i++)
		ok = write_bucket(w, b[i]);
	if (ok)
		ok = sqlite3_exec(w->db, "COMMIT;", NULL, NULL, NULL) == SQLITE_OK;
	if (!ok && !atomic_load(&w->failed)) {
		fail(w);
		sqlite3_exec(w->db, "ROLLBACK;", NULL, NULL, NULL);
	}
	for (size_t i = 0; i < n; i++)
		record_bucket_free(b[i]);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Under mu: wait until a batch is due (RECORD_COMMIT_S after the last
 * commit, or half a queue, or the end) or there is nothing to write. */
static void wait_for_batch(struct record_writer *w, double last_commit)
{
	for (;;) {
		double due = last_commit + RECORD_COMMIT_S;
		struct timespec ts;

		if (w->stop || w->n >= RECORD_QUEUE_BUCKETS / 2 || (w->n > 0 && mono_s() >= due))
			return;
		if (w->n == 0) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		ts.tv_sec = (time_t)due;
		ts.tv_nsec = (long)((due - (double)ts.tv_sec) * 1e9);
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
}

static void *writer_main(void *arg)
{
	struct record_writer *w = arg;
	struct rec_bucket *batch[RECORD_QUEUE_BUCKETS];
	double last_commit = 0;

	/* Its own name in top -H and /proc/PID/task (bench/record reads its
	 * CPU time there). */
	pthread_setname_np(pthread_self(), "pytop-record");
	pthread_mutex_lock(&w->mu);
	for (;;) {
		size_t n = 0;

		wait_for_batch(w, last_commit);
		if (w->n == 0)
			break;
		for (; w->n > 0; w->n--) {
			batch[n++] = w->q[w->head];
			w->head = (w->head + 1) % RECORD_QUEUE_BUCKETS;
		}
		pthread_mutex_unlock(&w->mu);
		write_batch(w, batch, n);
		last_commit = mono_s();
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void free_stmts(struct record_writer *w)
{
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(w->st[i]);
}

struct record_writer *record_writer_start(sqlite3 *db, const char *path,
                                          struct pytop_error *err)
{
	struct record_writer *w = calloc(1, sizeof *w);
	bool ok = w != NULL;

	for (int i = 0; ok && i < NSTMT; i++)
		ok = sqlite3_prepare_v3(db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
		                        &w->st[i], NULL) == SQLITE_OK;
	if (ok) {
		w->db = db;
		snprintf(w->path, sizeof w->path, "%s", path);
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* mono_s()'s deadlines */
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->cv, &ca);
		pthread_condattr_destroy(&ca);
		ok = pthread_create(&w->thread, NULL, writer_main, w) == 0;
		if (!ok) {
			pthread_mutex_destroy(&w->mu);
			pthread_cond_destroy(&w->cv);
		}
	}
	if (!ok) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot start the recording's writer: %s; "
		          "check the memory and thread limits", sqlite3_errmsg(db));
		if (w != NULL)
			free_stmts(w);
		free(w);
		sqlite3_close(db);
		return NULL;
	}
	return w;
}

bool record_writer_has_room(struct record_writer *w)
{
	bool room;

	pthread_mutex_lock(&w->mu);
	room = w->n < RECORD_QUEUE_BUCKETS;
	pthread_mutex_unlock(&w->mu);
	return room;
}

bool record_writer_push(struct record_writer *w, struct rec_bucket *b)
{
	bool ok;

	if (atomic_load(&w->failed))
		return false;
	pthread_mutex_lock(&w->mu);
	ok = w->n < RECORD_QUEUE_BUCKETS && !w->stop;
	if (ok) {
		w->q[(w->head + w->n) % RECORD_QUEUE_BUCKETS] = b;
		/* The writer sleeps untimed only on an empty queue, and else
		 * until its commit is due or half the queue is full: it needs
		 * waking then only. */
		if (w->n++ == 0 || w->n == RECORD_QUEUE_BUCKETS / 2)
			pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return ok;
}

const char *record_writer_failure(struct record_writer *w)
{
	return atomic_load(&w->failed) ? w->failure : NULL;
}

bool record_writer_stop(struct record_writer *w, record_finish finish, void *ctx,
                        struct pytop_error *err)
{
	bool ok;

	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	ok = !atomic_load(&w->failed) &&
	     sqlite3_exec(w->db, "BEGIN;", NULL, NULL, NULL) == SQLITE_OK &&
	     finish(w->db, ctx) &&
	     sqlite3_exec(w->db, "COMMIT;", NULL, NULL, NULL) == SQLITE_OK;
	if (!ok)
		fail(w);
	if (!ok)
		error_set(err, PYTOP_ERR_FILE, "%s", w->failure);
	free_stmts(w);
	/* The last connection's close checkpoints the WAL into the file and
	 * removes it: a finished recording is one file. */
	if (sqlite3_close(w->db) != SQLITE_OK && ok) {
		error_set(err, PYTOP_ERR_FILE, "closing the recording %.300s failed; it holds "
		          "what was committed", w->path);
		ok = false;
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	return ok;
}
