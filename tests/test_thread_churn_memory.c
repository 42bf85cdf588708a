/* test_thread_churn_memory.c - the aggregator's memory under thread churn
 * alone (a service that starts a thread per request and compiles no code):
 * the names of the threads aged out must be freed, not only their rows.
 *
 * Each round feeds ROUND_THREADS threads, each with a name never seen
 * before, one sample and a report that no longer lists the earlier ones,
 * then waits out the aggregator's 2 s sweep and takes a snapshot.  The
 * heap in use after each round (mallinfo2: exact, unlike RSS) must not
 * grow from the second round to the third: every thread of a round is
 * gone by the next one, so nothing of it need stay.  Before the fix the
 * string table kept every name until codes or rows were dropped, which
 * thread churn alone never does (+1.4 MB a round here).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "profile/aggregator.h"
#include "transport/record.h"

#define ROUND_THREADS 20000
#define CODE_ID 1
/* The aggregator's sweep period (AGG_SWEEP_NS) and a margin. */
#define SWEEP_WAIT_NS 2100000000L
/* Allocator slack between two rounds that keep the same tables; a leak of
 * one name per thread (at least 16 bytes each) is 20 times this. */
#define MAX_GROWTH_BYTES (16 * 1024)

static uint64_t recbuf[64];

static void ingest_thread(struct aggregator *a, int tid)
{
	struct rec_thread *t = (struct rec_thread *)recbuf;
	memset(t, 0, sizeof *t);
	t->h = (struct rec_header){ .type = REC_THREAD, .size = sizeof *t };
	t->tid = tid;
	snprintf(t->name, sizeof t->name, "req-%d", tid);
	aggregator_ingest(a, recbuf, sizeof *t);

	struct rec_sample *s = (struct rec_sample *)recbuf;
	memset(s, 0, sizeof *s + sizeof s->frames[0]);
	s->h = (struct rec_header){ .type = REC_SAMPLE,
	                            .size = sizeof *s + sizeof s->frames[0] };
	s->interval_ns = 1000000;
	s->tid = tid;
	s->nframes = 1;
	s->flags = SAMPLE_RUNNING;
	s->frames[0] = (struct rec_frame){ CODE_ID, 0 };
	aggregator_ingest(a, recbuf, s->h.size);
}

/* A report of the process listing none of them: they are gone. */
static void ingest_empty_report(struct aggregator *a, uint64_t time_ns)
{
	struct rec_threads *r = (struct rec_threads *)recbuf;
	memset(r, 0, sizeof *r);
	r->h = (struct rec_header){ .type = REC_THREADS, .size = sizeof *r };
	r->time_ns = time_ns;
	aggregator_ingest(a, recbuf, sizeof *r);
}

static void define_code(struct aggregator *a)
{
	struct rec_code_def *c = (struct rec_code_def *)recbuf;
	const char qual[] = "handle", file[] = "app.py";
	memset(c, 0, sizeof *c);
	memcpy(c->data, qual, sizeof qual - 1);
	memcpy(c->data + sizeof qual - 1, file, sizeof file - 1);
	c->h = (struct rec_header){ .type = REC_CODE_DEF,
	                            .size = REC_ALIGN((uint32_t)(sizeof *c + sizeof qual - 1 +
	                                                         sizeof file - 1)) };
	c->code_id = CODE_ID;
	c->firstlineno = 1;
	c->qualname_len = sizeof qual - 1;
	c->filename_len = sizeof file - 1;
	aggregator_ingest(a, recbuf, c->h.size);
}

/* One round, then the heap in use once the sweep ran. */
static size_t round_in_use(struct aggregator *a, int round)
{
	struct snapshot snap;
	for (int i = 0; i < ROUND_THREADS; i++)
		ingest_thread(a, 1000 + round * ROUND_THREADS + i);
	ingest_empty_report(a, (uint64_t)(round + 1) * 1000000000u);
	memset(&snap, 0, sizeof snap);
	aggregator_snapshot(a, &snap); /* ages this round's threads out */
	snapshot_free(&snap);
	nanosleep(&(struct timespec){ SWEEP_WAIT_NS / 1000000000L,
	                              SWEEP_WAIT_NS % 1000000000L }, NULL);
	memset(&snap, 0, sizeof snap);
	aggregator_snapshot(a, &snap); /* the sweep is due */
	snapshot_free(&snap);
	return mallinfo2().uordblks;
}

Test(thread_churn_memory, names_of_gone_threads_are_freed, .timeout = 30)
{
	struct aggregator *a = aggregator_new(true);
	cr_assert_not_null(a);
	define_code(a);
	size_t first = round_in_use(a, 0);
	size_t second = round_in_use(a, 1);
	size_t third = round_in_use(a, 2);
	cr_assert_eq(aggregator_bad(a), 0, "%lu records refused",
	             (unsigned long)aggregator_bad(a));
	cr_expect_leq(third, second + MAX_GROWTH_BYTES, "heap in use after "
	              "rounds of %d threads: %zu, %zu, %zu bytes", ROUND_THREADS,
	              first, second, third);
	aggregator_free(a);
}
