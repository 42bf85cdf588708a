/* bench/ingest.c - the consumer side's cost per sample (make bench):
 * records built in memory are fed to the aggregator (aggregator_ingest:
 * frames resolved to rows, the fold policy's use of them, the split and
 * the stack table), and the same stacks to the
 * stack table alone (intern through the thread's memo, count), on
 * shallow and 400-frame stacks, unchanged from one sample to the next or
 * all distinct.  One line per case: ns per sample, and the stacks the
 * table held and folded.  Not a test: always exits 0 unless it cannot
 * allocate.
 *
 * usage: bench/ingest [SAMPLES]  (default 200000 per case; 400-frame
 * cases take a quarter of that) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "profile/aggregator.h"
#include "profile/snapshot.h"
#include "profile/stack_table.h"
#include "transport/record.h"

#define NCODES 256
#define THREADS 4

struct bench_case {
	const char *name;
	unsigned depth;
	bool distinct; /* every sample a new stack (leaf and caller vary) */
	unsigned share; /* of the sample count: 1 = all, 4 = a quarter */
};

static const struct bench_case cases[] = {
	{ "3 frames, unchanged", 3, false, 1 },
	{ "3 frames, all distinct", 3, true, 1 },
	{ "30 frames, all distinct", 30, true, 1 },
	{ "400 frames, unchanged", 400, false, 4 },
	{ "400 frames, all distinct", 400, true, 4 },
};

static void define_codes(struct aggregator *a)
{
	static uint64_t buf[64];
	for (uint32_t id = 1; id <= NCODES; id++) {
		struct rec_code_def *c = (void *)buf;
		char name[16];
		int ql = snprintf(name, sizeof name, "func%u", id);
		memset(buf, 0, sizeof buf);
		memcpy(c->data, name, (size_t)ql);
		memcpy(c->data + ql, "bench.py", 8);
		c->h = (struct rec_header){ REC_CODE_DEF,
			REC_ALIGN((uint32_t)(sizeof *c + (size_t)ql + 8)) };
		c->code_id = id;
		c->firstlineno = (int32_t)id;
		c->qualname_len = (uint16_t)ql;
		c->filename_len = 8;
		aggregator_ingest(a, c, c->h.size);
	}
}

/* Sample k of a case into r: the outer frames fixed, the leaf and its
 * caller varying when distinct (256 x 256 x 64 offsets: no stack twice
 * in a run). */
static void fill(struct rec_sample *r, const struct bench_case *bc, uint64_t k)
{
	r->tid = 100 + (int32_t)(k % THREADS);
	r->time_ns = k * 1000000;
	for (unsigned i = 0; i < bc->depth; i++)
		r->frames[i] = (struct rec_frame){ 1 + (i * 7) % NCODES, 0 };
	if (bc->distinct && bc->depth >= 2) {
		uint64_t v = k / THREADS;
		r->frames[0] = (struct rec_frame){ 1 + (uint32_t)(v % NCODES),
		                                   (int32_t)(2 * (v / 65536 % 64)) };
		r->frames[1] = (struct rec_frame){ 1 + (uint32_t)(v / NCODES % NCODES), 0 };
	}
}

static double run_aggregator(const struct bench_case *bc, uint64_t n,
                             struct rec_sample *r, size_t *held, uint64_t *folded)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	if (a == NULL)
		exit(1);
	define_codes(a);
	*r = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)(sizeof *r + bc->depth * sizeof(struct rec_frame)) },
		.interval_ns = 1000000, .nframes = (uint16_t)bc->depth,
		.flags = SAMPLE_RUNNING, .pid = 7 };
	uint64_t t0 = clock_now_ns();
	for (uint64_t k = 0; k < n; k++) {
		fill(r, bc, k);
		r->cpu_user_ns = k * 900000;
		aggregator_ingest(a, r, r->h.size);
	}
	double ns = (double)(clock_now_ns() - t0) / (double)n;
	aggregator_snapshot(a, &s);
	*held = s.nstacks;
	*folded = s.folded_stacks;
	snapshot_free(&s);
	aggregator_free(a);
	return ns;
}

static double run_table(const struct bench_case *bc, uint64_t n, struct rec_sample *r)
{
	struct stack_table t;
	struct stack_memo memo[THREADS] = { { .raw = NULL } };
	struct stack_frame *f = malloc(bc->depth * sizeof *f);
	if (f == NULL || !stack_table_init(&t))
		exit(1);
	uint64_t t0 = clock_now_ns();
	for (uint64_t k = 0; k < n; k++) {
		uint32_t node;
		fill(r, bc, k);
		struct stack_memo *m = &memo[k % THREADS];
		if (!stack_memo_same(m, &t, r->frames, bc->depth, &node)) {
			for (unsigned i = 0; i < bc->depth; i++)
				f[i] = (struct stack_frame){ r->frames[i].code_id,
				                             r->frames[i].instr_offset / 2 };
			node = stack_table_intern_memo(&t, m, r->frames, f, bc->depth);
		}
		stack_table_count(&t, node, r->tid, 7, 1000000);
		if (stack_table_over_cap(&t))
			free(stack_table_fold(&t, STACK_MAX_CELLS * 3 / 4, NULL, NULL));
	}
	double ns = (double)(clock_now_ns() - t0) / (double)n;
	for (int i = 0; i < THREADS; i++)
		stack_memo_free(&memo[i]);
	stack_table_destroy(&t);
	free(f);
	return ns;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
	struct rec_sample *r = malloc(sizeof *r + 400 * sizeof(struct rec_frame));
	if (r == NULL || n == 0)
		return 1;
	printf("consumer-side ingest, ns per sample (%d threads, %llu samples, "
	       "400-frame cases a quarter)\n", THREADS, (unsigned long long)n);
	printf("%-28s %12s %12s %10s %10s\n", "stacks", "aggregator",
	       "stack table", "held", "folded");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct bench_case *bc = &cases[i];
		uint64_t m = n / bc->share;
		size_t held;
		uint64_t folded;
		double agg = run_aggregator(bc, m, r, &held, &folded);
		double tab = run_table(bc, m, r);
		printf("%-28s %12.0f %12.0f %10zu %10llu\n", bc->name, agg, tab, held,
		       (unsigned long long)folded);
	}
	free(r);
	return 0;
}
