/* test_recorder.c - the recorder against a writer that cannot write: with
 * the file locked by another connection, the queue fills, later buckets
 * merge (counted), and once the lock goes every sample is in the file,
 * each under its stack, none lost and none counted twice. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/aggregator.h"
#include "record/record_model.h"
#include "record/record_writer.h"
#include "record/recorder.h"
#include "tap_note.h"
#include "transport/record.h"

static uint64_t recbuf[(sizeof(struct rec_sample) + 16 * sizeof(struct rec_frame)) / 8 + 64];

static void define(struct aggregator *agg, uint32_t id, const char *qual, int first)
{
	struct rec_code_def *c = (struct rec_code_def *)recbuf;
	size_t ql = strlen(qual);

	memset(c, 0, sizeof *c);
	memcpy(c->data, qual, ql);
	memcpy(c->data + ql, "m.py", 4);
	c->h.type = REC_CODE_DEF;
	c->h.size = REC_ALIGN((uint32_t)(sizeof *c + ql + 4));
	c->code_id = id;
	c->firstlineno = first;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = 4;
	aggregator_ingest(agg, recbuf, c->h.size);
}

/* One sample of thread 7: leaf `leaf` called from code 1. */
static void sample(struct aggregator *agg, uint32_t leaf)
{
	struct rec_sample *s = (struct rec_sample *)recbuf;

	memset(s, 0, sizeof *s);
	s->h.type = REC_SAMPLE;
	s->h.size = (uint32_t)(sizeof *s + 2 * sizeof s->frames[0]);
	s->interval_ns = 1000000;
	s->tid = 7;
	s->pid = 7;
	s->nframes = 2;
	s->frames[0] = (struct rec_frame){ leaf, 0 };
	s->frames[1] = (struct rec_frame){ 1, 0 };
	aggregator_ingest(agg, recbuf, s->h.size);
}

static long long q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
	             sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The samples recorded under the stack whose leaf function is `name`. */
static long long leaf_samples(sqlite3 *db, const char *name)
{
	char sql[512];

	snprintf(sql, sizeof sql, "SELECT COALESCE(SUM(s.samples),0) FROM samples s"
	         " JOIN stacks k ON k.id = s.stack JOIN frames f ON f.id = k.frame"
	         " JOIN strings n ON n.id = f.name WHERE n.text = '%s' AND k.depth = 2", name);
	return q_int(db, sql);
}

Test(recorder, full_queue_merges_buckets_and_loses_nothing, .timeout = 60)
{
	char dir[] = "/tmp/pytop-recorder.XXXXXX", path[64];
	struct pytop_error err = { 0 };
	struct options o = { .rate_hz = 1000 };
	struct recorder_target t = { .pid = 7, .command = "python3 m.py",
	                             .python_version = "3.11.2" };
	struct rb_gauges g = { .ticks = 0 };
	struct aggregator *agg = aggregator_new(false);

	cr_assert(agg != NULL && aggregator_keep_buckets(agg));
	struct recorder *r;
	sqlite3 *lock = NULL, *db = NULL;
	/* The writer takes up to a whole queue as one batch before it meets
	 * the lock, and a full queue more waits behind it: more than two
	 * queues' worth must merge, however late the writer thread first ran
	 * (120 buckets merged none once, when it woke only after 56). */
	const int buckets = 4 * RECORD_QUEUE_BUCKETS, per_bucket = 10;
	long long merged;

	cr_assert(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/run.pytop", dir);
	define(agg, 1, "main", 1);
	define(agg, 2, "even", 10);
	define(agg, 3, "odd", 20);
	r = recorder_open(path, false, &err);
	cr_assert(r != NULL, "%s", err.text);
	cr_assert(recorder_start(r, &o, &t, &err), "%s", err.text);
	/* Another writer holds the file: the recorder's writer waits. */
	cr_assert_eq(sqlite3_open(path, &lock), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(lock, "BEGIN IMMEDIATE;", NULL, NULL, NULL), SQLITE_OK);
	for (int b = 0; b < buckets; b++) {
		for (int i = 0; i < per_bucket; i++)
			sample(agg, (uint32_t)(b % 2 == 0 ? 2 : 3));
		g.ticks += (uint64_t)per_bucket;
		recorder_tick(r, agg, 0.1 * (b + 1) + 0.01, &g); /* a poll just past each boundary */
	}
	merged = (long long)recorder_merged(r);
	test_note("%d buckets offered, %lld merged while the file was locked", buckets, merged);
	cr_assert_gt(merged, 0, "a blocked writer merged no bucket");
	cr_assert_eq(sqlite3_exec(lock, "ROLLBACK;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(lock);
	recorder_flush(r, agg, 0.1 * buckets + 0.06, &g);
	cr_assert(recorder_close(r, &(struct recorder_end){ .elapsed = 12.1, .exited = true },
	                         &err), "%s", err.text);

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(q_int(db, "SELECT SUM(samples) FROM samples;"), buckets * per_bucket);
	cr_assert_eq(leaf_samples(db, "even"), buckets / 2 * per_bucket);
	cr_assert_eq(leaf_samples(db, "odd"), buckets / 2 * per_bucket);
	cr_assert_eq(q_int(db, "SELECT SUM(merged) FROM buckets;"), merged);
	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='buckets_merged';"), merged);
	test_note("%lld buckets in the file", q_int(db, "SELECT COUNT(*) FROM buckets;"));
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM buckets;") + merged, buckets + 1,
	             "every boundary is a bucket or merged into one");
	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='complete';"), 1);
	sqlite3_close(db);
	aggregator_free(agg);
	unlink(path);
	rmdir(dir);
}

/* Two code ids the recording cannot tell apart (same function, file and
 * lines: a module executed twice) are two stacks of the stack table but
 * one stack of the file: their samples in one bucket are one row (two
 * rows broke the samples table's key and stopped the recording). */
Test(recorder, indistinguishable_codes_share_a_row, .timeout = 30)
{
	char dir[] = "/tmp/pytop-recorder.XXXXXX", path[64];
	struct pytop_error err = { 0 };
	struct options o = { .rate_hz = 1000 };
	struct recorder_target t = { .pid = 7, .command = "python3 m.py",
	                             .python_version = "3.11.2" };
	struct rb_gauges g = { .ticks = 10 };
	struct aggregator *agg = aggregator_new(false);

	cr_assert(agg != NULL && aggregator_keep_buckets(agg));
	struct recorder *r;
	sqlite3 *db = NULL;

	cr_assert(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/run.pytop", dir);
	define(agg, 1, "main", 1);
	define(agg, 2, "twice", 10);
	define(agg, 3, "twice", 10);
	r = recorder_open(path, false, &err);
	cr_assert(r != NULL, "%s", err.text);
	cr_assert(recorder_start(r, &o, &t, &err), "%s", err.text);
	for (int i = 0; i < 5; i++) {
		sample(agg, 2);
		sample(agg, 3);
	}
	recorder_tick(r, agg, 0.11, &g);
	recorder_flush(r, agg, 0.15, &g);
	cr_assert(recorder_close(r, &(struct recorder_end){ .elapsed = 0.15 }, &err),
	          "the recording failed: %s", err.text);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(leaf_samples(db, "twice"), 10);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM samples;"), 1);
	sqlite3_close(db);
	aggregator_free(agg);
	unlink(path);
	rmdir(dir);
}

/* Under code churn the model must not grow for ever: past its cap it
 * forgets every definition, and what a later bucket uses is defined again
 * there, under ids never given before. */
Test(recorder, model_forgets_past_its_cap_and_defines_again, .timeout = 30)
{
	enum { CAP = 8, CODES = 40, ROUNDS = 3 };
	struct aggregator *agg = aggregator_new(false);

	cr_assert(agg != NULL && aggregator_keep_buckets(agg));
	struct record_model *m = record_model_new_capped(CAP);
	static bool string_seen[4096], stack_known[4096];
	uint64_t forgets = 0;

	define(agg, 1, "main", 1);
	for (uint32_t k = 0; k < CODES; k++) {
		char name[16];

		snprintf(name, sizeof name, "f%u", k);
		define(agg, 10 + k, name, (int)k + 10);
	}
	for (int round = 0; round < ROUNDS; round++) {
		for (uint32_t k = 0; k < CODES; k++) {
			struct rec_bucket *b;

			sample(agg, 10 + k);
			b = record_model_take(m, agg);
			cr_assert(b != NULL);
			if (record_model_forgets(m) != forgets) {
				forgets = record_model_forgets(m);
				memset(stack_known, 0, sizeof stack_known);
			}
			for (size_t i = 0; i < b->nstrings; i++) {
				cr_assert_lt(b->strings[i].id, 4096);
				cr_assert(!string_seen[b->strings[i].id], "string id %u given twice",
				          b->strings[i].id);
				string_seen[b->strings[i].id] = true;
			}
			for (size_t i = 0; i < b->nstacks; i++) {
				cr_assert_lt(b->stacks[i].id, 4096);
				cr_assert(b->stacks[i].parent == 0 || stack_known[b->stacks[i].parent],
				          "stack %u's parent %u is not defined since the last forget",
				          b->stacks[i].id, b->stacks[i].parent);
				stack_known[b->stacks[i].id] = true;
			}
			for (size_t i = 0; i < b->nrows; i++)
				cr_assert(stack_known[b->rows[i].stack], "a row uses stack %u, not "
				          "defined since the last forget", b->rows[i].stack);
			cr_assert_eq(b->nrows, 1);
			cr_assert_eq(b->rows[0].samples, 1);
			/* The cap, plus what one bucket may add before the check. */
			cr_assert_leq(record_model_held(m), 4 * CAP + 8, "the model holds %zu",
			              record_model_held(m));
			record_bucket_free(b);
		}
	}
	test_note("%d buckets, the model forgot everything %llu times", CODES * ROUNDS,
	          (unsigned long long)forgets);
	cr_assert_gt(forgets, 0);
	record_model_free(m);
	aggregator_free(agg);
}

/* More distinct stacks than the stack table keeps: it folds the rarest
 * into "[other stacks]" between buckets, and the samples a bucket had on
 * them must go with them, not vanish (and no stack be counted twice). */
Test(recorder, folded_stacks_keep_their_bucket_samples, .timeout = 60)
{
	enum { CODES = 400, PER_BUCKET = 70000 }; /* a fold within a bucket */
	char dir[] = "/tmp/pytop-recorder.XXXXXX", path[64];
	struct pytop_error err = { 0 };
	struct options o = { .rate_hz = 1000 };
	struct recorder_target t = { .pid = 7, .command = "python3 m.py",
	                             .python_version = "3.11.2" };
	struct rb_gauges g = { .ticks = 0 };
	struct aggregator *agg = aggregator_new(false);

	cr_assert(agg != NULL && aggregator_keep_buckets(agg));
	struct recorder *r;
	sqlite3 *db = NULL;
	long long total = 0;
	int bucket = 0;

	cr_assert(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/run.pytop", dir);
	for (uint32_t k = 0; k < CODES; k++) {
		char name[16];

		snprintf(name, sizeof name, "f%u", k);
		define(agg, 10 + k, name, (int)k + 10);
	}
	r = recorder_open(path, false, &err);
	cr_assert(r != NULL, "%s", err.text);
	cr_assert(recorder_start(r, &o, &t, &err), "%s", err.text);
	/* Every (caller, leaf) pair once: CODES * CODES / 2 distinct stacks,
	 * more than STACK_MAX_CELLS. */
	for (uint32_t a = 0; a < CODES; a++) {
		for (uint32_t b = 0; b < CODES / 2; b++) {
			struct rec_sample *s = (struct rec_sample *)recbuf;

			memset(s, 0, sizeof *s);
			s->h.type = REC_SAMPLE;
			s->h.size = (uint32_t)(sizeof *s + 2 * sizeof s->frames[0]);
			s->interval_ns = 1000000;
			s->tid = 7;
			s->pid = 7;
			s->nframes = 2;
			s->frames[0] = (struct rec_frame){ 10 + b, 0 };
			s->frames[1] = (struct rec_frame){ 10 + a, 0 };
			aggregator_ingest(agg, recbuf, s->h.size);
			if (++total % PER_BUCKET == 0) {
				g.ticks = (uint64_t)total;
				recorder_tick(r, agg, 0.1 * ++bucket + 0.01, &g);
			}
		}
	}
	recorder_flush(r, agg, 0.1 * ++bucket + 0.01, &g);
	cr_assert(recorder_close(r, &(struct recorder_end){ .elapsed = 0.1 * bucket }, &err),
	          "%s", err.text);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	long long other = q_int(db, "SELECT COALESCE(SUM(s.samples),0) FROM samples s JOIN stacks k"
	                        " ON k.id = s.stack JOIN frames f ON f.id = k.frame"
	                        " WHERE f.other = 1;");
	test_note("%lld samples of %lld distinct stacks; %lld recorded under [other stacks]",
	          total, total, other);
	cr_assert_eq(q_int(db, "SELECT SUM(samples) FROM samples;"), total);
	cr_assert_gt(other, 0, "no fold happened: the test does not test it");
	sqlite3_close(db);
	aggregator_free(agg);
	unlink(path);
	rmdir(dir);
}
