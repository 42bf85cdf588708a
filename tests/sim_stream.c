/* sim_stream.c - seeded random record streams for the aggregator's
 * property tests. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sim_stream.h"

#include <stdio.h>
#include <string.h>

#include "profile/aggregator.h"
#include "transport/record.h"

#define MS 1000000ull

/* One record at a time, as the ring hands them over. */
static uint64_t buf[4096];

/* sim_tee's: where records also go. */
static void (*tee)(void *ctx, const void *rec, size_t len);
static void *tee_ctx;

void sim_tee(void (*ingest)(void *ctx, const void *rec, size_t len), void *ctx)
{
	tee = ingest;
	tee_ctx = ctx;
}

static void sim_ingest(struct aggregator *a, const void *rec, size_t len)
{
	aggregator_ingest(a, rec, len);
	if (tee != NULL)
		tee(tee_ctx, rec, len);
}

uint64_t sim_rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

uint32_t sim_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(sim_rng_next(s) % n);
}

void sim_def_code_as(struct aggregator *a, uint32_t id, const char *name,
                     const char *file, int firstlineno)
{
	struct rec_code_def *c = (struct rec_code_def *)buf;
	size_t ql = strlen(name), fl = strlen(file);

	memset(buf, 0, sizeof buf);
	memcpy(c->data, name, ql);
	memcpy(c->data + ql, file, fl);
	c->h = (struct rec_header){ REC_CODE_DEF,
	                            REC_ALIGN((uint32_t)(sizeof *c + ql + fl)) };
	c->code_id = id;
	c->firstlineno = firstlineno;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = (uint16_t)fl;
	sim_ingest(a, c, c->h.size);
}

void sim_def_process(struct aggregator *a, int pid, uint64_t now)
{
	struct rec_process *r = (struct rec_process *)buf;

	memset(buf, 0, sizeof buf);
	r->h = (struct rec_header){ REC_PROCESS, REC_ALIGN((uint32_t)sizeof *r) };
	r->time_ns = now;
	r->pid = pid;
	r->ppid = 1;
	r->state = PROC_PYTHON;
	strcpy(r->version, "3.12.1");
	sim_ingest(a, r, r->h.size);
}

void sim_def_code(struct aggregator *a, uint32_t id, uint32_t name_id)
{
	char name[16], file[16];

	snprintf(name, sizeof name, "f%u", name_id);
	snprintf(file, sizeof file, "m%u.py", name_id % 3);
	sim_def_code_as(a, id, name, file, 10 * (int)id);
}

void sim_thread_start(struct sim_thread *t, int *next_tid, int slot)
{
	*t = (struct sim_thread){ .tid = (*next_tid)++, .pid = 100 + slot % 2,
	                          .alive = true };
}

void sim_thread_churn(uint64_t *rng, struct sim_thread *t, size_t n,
                      int *next_tid)
{
	int i = (int)sim_below(rng, (uint32_t)n);

	if (t[i].alive)
		t[i].alive = false;
	else
		sim_thread_start(&t[i], next_tid, i);
}

void sim_thread_advance(uint64_t *rng, struct sim_thread *t)
{
	uint32_t r = sim_below(rng, 10);

	if (r < 5) {
		t->user += sim_below(rng, 3) * 10 * MS;
		t->sys += sim_below(rng, 2) * 10 * MS;
		t->run += sim_below(rng, 2000) * 1000;
		t->delay += sim_below(rng, 3) == 0 ? sim_below(rng, 5000) * 1000
		                                   : 0;
	} else if (r == 9) {
		t->user /= 2;
		t->run /= 3;
	}
}

uint16_t sim_random_flags(uint64_t *rng)
{
	static const uint16_t bits[] = { SAMPLE_RUNNING, SAMPLE_HAS_GIL,
	                                 SAMPLE_GIL_WAIT, SAMPLE_IN_CALL,
	                                 SAMPLE_GIL_KNOWN, SAMPLE_TRUNCATED };
	uint16_t f = 0;

	for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
		if (sim_below(rng, 2))
			f |= bits[i];
	return f;
}

void sim_report(struct aggregator *a, const struct sim_thread *t, size_t n,
                uint64_t now)
{
	for (int pid = 100; pid <= 101; pid++) {
		struct rec_threads *r = (struct rec_threads *)buf;
		uint32_t k = 0;

		memset(buf, 0, sizeof buf);
		for (size_t i = 0; i < n; i++) {
			if (!t[i].alive || t[i].pid != pid)
				continue;
			r->threads[k++] = (struct rec_thread_state){
				.tid = t[i].tid, .state = 'R',
				.utime_ns = t[i].user, .stime_ns = t[i].sys };
		}
		r->h = (struct rec_header){ REC_THREADS,
		        (uint32_t)(sizeof *r + k * sizeof(struct rec_thread_state)) };
		r->time_ns = now;
		r->nthreads = k;
		r->pid = pid;
		sim_ingest(a, r, r->h.size);
	}
}
