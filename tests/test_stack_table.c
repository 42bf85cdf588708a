/* test_stack_table.c - the stack table on its own (profile/stack_table.h):
 * a stack interned once as prefix-tree nodes, an unchanged stack found by
 * its thread's memo without hashing a frame, the cap folding the rarest
 * stacks into "[other stacks]" with every sum kept, and the stacks of
 * codes that went folding too; then through the aggregator, the
 * snapshot's stacks adding up to its samples across a fold, and the JSON
 * and batch text saying that stacks were folded. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../ui/batch_text.h"
#include "headless.h"
#include "profile/aggregator.h"
#include "profile/snapshot.h"
#include "profile/stack_table.h"
#include "transport/record.h"

/* The frames of a stack of depth n whose frame i (leaf first) is code
 * ids[i] on line 10 + i. */
static void mk_stack(struct stack_frame *f, const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (struct stack_frame){ ids[i], (int32_t)(10 + i) };
}

/* The frames of node n, leaf first, as code ids. */
static size_t walk(const struct stack_table *t, uint32_t n, uint32_t *ids, size_t max)
{
	size_t k = 0;
	for (; n != STACK_ROOT && k < max; n = t->nodes[n].parent)
		ids[k++] = t->frames[t->nodes[n].frame].code_id;
	return k;
}

Test(stack_table, a_stack_is_one_node_and_shares_its_prefix)
{
	struct stack_table t;
	struct stack_frame f[3];
	uint32_t back[8];
	cr_assert(stack_table_init(&t));

	mk_stack(f, (uint32_t[]){ 3, 2, 1 }, 3); /* 1 calls 2 calls 3 */
	uint32_t a = stack_table_intern(&t, f, 3);
	size_t nodes = t.nnodes;
	cr_expect_eq(stack_table_intern(&t, f, 3), a, "the same stack, the same node");
	cr_expect_eq(t.nnodes, nodes, "nothing new");
	cr_expect_eq(t.nodes[a].depth, 3);
	cr_assert_eq(walk(&t, a, back, 8), 3);
	cr_expect(back[0] == 3 && back[1] == 2 && back[2] == 1, "leaf first: %u %u %u",
	          back[0], back[1], back[2]);

	/* 1 calls 2 calls 4: one node more, under 1 -> 2. */
	mk_stack(f, (uint32_t[]){ 4, 2, 1 }, 3);
	uint32_t b = stack_table_intern(&t, f, 3);
	cr_expect_neq(b, a);
	cr_expect_eq(t.nnodes, nodes + 1, "the prefix 1 -> 2 is shared");
	cr_expect_eq(t.nodes[b].parent, t.nodes[a].parent);

	/* The same code on another line is another frame. */
	f[0].line = 99;
	cr_expect_neq(stack_table_intern(&t, f, 3), b);
	cr_expect_eq(stack_table_intern(&t, f, 0), STACK_ROOT, "no frames: the root");
	stack_table_destroy(&t);
}

/* What stack_table_intern_memo answers, checked against a plain intern
 * of the same frames (in a second table fed the same stacks). */
static uint32_t via_memo(struct stack_table *t, struct stack_memo *m,
                         const struct rec_frame *raw, size_t n)
{
	struct stack_frame f[400];
	uint32_t node;
	if (stack_memo_same(m, t, raw, n, &node))
		return node;
	for (size_t i = 0; i < n; i++)
		f[i] = (struct stack_frame){ raw[i].code_id, raw[i].instr_offset / 2 };
	return stack_table_intern_memo(t, m, raw, f, n);
}

static uint32_t plain(struct stack_table *t, const struct rec_frame *raw, size_t n)
{
	struct stack_frame f[400];
	for (size_t i = 0; i < n; i++)
		f[i] = (struct stack_frame){ raw[i].code_id, raw[i].instr_offset / 2 };
	return stack_table_intern(t, f, n);
}

Test(stack_table, an_unchanged_stack_is_not_hashed_again)
{
	struct stack_table t;
	struct stack_memo m = { .raw = NULL };
	struct rec_frame raw[400];
	uint32_t node;
	cr_assert(stack_table_init(&t));
	for (uint32_t i = 0; i < 400; i++)
		raw[i] = (struct rec_frame){ 1000 + i, (int32_t)(2 * i) };
	cr_expect_not(stack_memo_same(&m, &t, raw, 400, &node), "an empty memo misses");
	uint32_t n = via_memo(&t, &m, raw, 400);
	uint64_t hashed = t.hashed;
	cr_expect_eq(hashed, 400, "the first time, frame by frame");
	for (int k = 0; k < 1000; k++) {
		cr_assert(stack_memo_same(&m, &t, raw, 400, &node));
		cr_assert_eq(node, n);
	}
	cr_expect_eq(t.hashed, hashed, "a thousand identical stacks hashed no frame");

	/* The leaf moved on: one frame hashed, not 400. */
	raw[0].instr_offset += 2;
	cr_expect_not(stack_memo_same(&m, &t, raw, 400, &node), "a changed stack misses");
	uint32_t moved = via_memo(&t, &m, raw, 400);
	cr_expect_eq(t.hashed, hashed + 1, "only the leaf was hashed");
	cr_expect_eq(t.nodes[moved].parent, t.nodes[n].parent, "a sibling of the last leaf");
	/* A return (one frame less), a call (one more), then back: each the
	 * node a plain intern gives. */
	struct stack_table ref;
	cr_assert(stack_table_init(&ref));
	struct rec_frame deeper[400];
	memcpy(deeper + 1, raw + 1, 399 * sizeof *raw);
	deeper[0] = (struct rec_frame){ 7, 4 };
	const struct { const struct rec_frame *raw; size_t n; } seq[] = {
		{ raw + 1, 399 }, { deeper, 400 }, { raw, 400 }, { raw + 390, 10 },
		{ raw, 400 }, { raw + 1, 399 }, { raw + 1, 399 },
	};
	for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
		uint32_t got = via_memo(&t, &m, seq[i].raw, seq[i].n);
		uint32_t want = plain(&ref, seq[i].raw, seq[i].n);
		uint32_t gb[400], wb[400];
		size_t gn = walk(&t, got, gb, 400), wn = walk(&ref, want, wb, 400);
		cr_assert_eq(gn, seq[i].n, "step %zu: depth %zu", i, gn);
		cr_assert_eq(wn, gn);
		cr_assert(memcmp(gb, wb, gn * sizeof *gb) == 0, "step %zu: the same frames", i);
		cr_assert_eq(t.nodes[got].depth, seq[i].n);
	}
	stack_table_destroy(&ref);

	/* A fold renumbers nodes: the memo must not answer an old number. */
	via_memo(&t, &m, raw, 400);
	uint32_t *map = stack_table_fold(&t, 10, NULL, NULL);
	cr_assert_not_null(map);
	free(map);
	cr_expect_not(stack_memo_same(&m, &t, raw, 400, &node), "stale after a fold");
	hashed = t.hashed;
	uint32_t after = via_memo(&t, &m, raw, 400);
	cr_expect_eq(t.hashed, hashed + 400, "after a fold, frame by frame again");
	cr_expect_eq(walk(&t, after, (uint32_t[400]){ 0 }, 400), 400);
	/* A reset forgets counts, not stacks: the memo still answers. */
	stack_table_reset(&t);
	cr_expect(stack_memo_same(&m, &t, raw, 400, &node) && node == after,
	          "right after a reset");
	stack_memo_free(&m);
	stack_table_destroy(&t);
}

/* Every thread's samples, split and time, summed over its cells. */
struct sums {
	uint64_t samples, ns, minflt;
	double python;
};

static struct sums sums_of(const struct stack_table *t, pid_t tid)
{
	struct sums s = { 0 };
	for (size_t i = 0; i < t->ncells; i++)
		if (t->cells[i].tid == tid) {
			s.samples += t->cells[i].samples;
			s.ns += t->cells[i].ns;
			s.minflt += t->cells[i].split.minflt;
			s.python += t->cells[i].split.python;
		}
	return s;
}

#define NSTACKS (STACK_MAX_CELLS + 5000)

Test(stack_table, over_the_cap_the_rarest_fold_into_other_stacks)
{
	struct stack_table t;
	struct stack_frame f[2];
	cr_assert(stack_table_init(&t));
	/* Stack k (2 frames: k under 7) sampled once, or 3 times when k is a
	 * multiple of 4, by thread 100 + k % 2. */
	uint32_t hot = 0;
	for (uint32_t k = 0; k < NSTACKS; k++) {
		mk_stack(f, (uint32_t[]){ 100 + k, 7 }, 2);
		uint32_t n = stack_table_intern(&t, f, 2);
		for (int r = 0; r < (k % 4 == 0 ? 3 : 1); r++) {
			uint32_t c = stack_table_count(&t, n, 100 + (pid_t)(k % 2), 9, 1000);
			struct snap_split d = { .python = 1, .minflt = 2 };
			stack_table_split(&t, c, &d, true);
		}
		if (k == 4) /* one of the hot stacks */
			hot = n;
	}
	cr_assert(stack_table_over_cap(&t));
	struct sums before[2] = { sums_of(&t, 100), sums_of(&t, 101) };
	size_t ncells = t.ncells, keep = STACK_MAX_CELLS * 3 / 4;
	uint32_t *map = stack_table_fold(&t, keep, NULL, NULL);
	cr_assert_not_null(map);
	cr_expect_not(stack_table_over_cap(&t));
	cr_expect_eq(t.ncells, keep + 2, "the kept stacks and one [other stacks] per thread");
	cr_expect_eq(t.folded, ncells - keep, "every stack not kept is counted as folded");
	for (int i = 0; i < 2; i++) {
		struct sums after = sums_of(&t, 100 + i);
		cr_expect_eq(after.samples, before[i].samples, "thread %d: samples", 100 + i);
		cr_expect_eq(after.ns, before[i].ns);
		cr_expect_eq(after.minflt, before[i].minflt);
		cr_expect_float_eq(after.python, before[i].python, 1e-6);
	}
	/* The hot stacks (3 samples) are all kept: NSTACKS / 4 < keep. */
	size_t three = 0;
	for (size_t i = 0; i < t.ncells; i++) {
		three += t.cells[i].samples == 3;
		if (t.cells[i].node == STACK_OTHER)
			cr_expect_gt(t.cells[i].samples, 0);
	}
	cr_expect_eq(three, (NSTACKS + 3) / 4);
	/* The map sends each old cell to where its counts are now. */
	cr_expect_eq(t.cells[map[0]].samples, 3, "stack 0 was hot: kept");
	cr_expect_eq(t.cells[map[1]].node, STACK_OTHER, "stack 1 was rare: folded");
	free(map);
	/* Nodes and frames of the folded stacks went; the table still interns
	 * right (its maps were rebuilt): stack 4 is found again. */
	cr_expect_lt(t.nnodes, (size_t)NSTACKS, "nodes went too: %zu", t.nnodes);
	mk_stack(f, (uint32_t[]){ 104, 7 }, 2);
	uint32_t again = stack_table_intern(&t, f, 2);
	cr_expect_eq(t.cells[stack_table_count(&t, again, 100, 9, 1000)].samples, 4,
	             "stack 4 (node %u before) has its 3 samples and this one", hot);
	uint32_t back[4];
	cr_assert_eq(walk(&t, again, back, 4), 2);
	cr_expect(back[0] == 104 && back[1] == 7);
	stack_table_destroy(&t);
}

static bool code_5_went(void *ctx, uint32_t code_id)
{
	(void)ctx;
	return code_id == 5;
}

Test(stack_table, stacks_of_codes_that_went_fold)
{
	struct stack_table t;
	struct stack_frame f[3];
	cr_assert(stack_table_init(&t));
	mk_stack(f, (uint32_t[]){ 6, 5, 1 }, 3); /* 5 in the middle */
	uint32_t under = stack_table_intern(&t, f, 3);
	mk_stack(f, (uint32_t[]){ 5, 1 }, 2);     /* 5 the leaf */
	uint32_t leaf = stack_table_intern(&t, f, 2);
	mk_stack(f, (uint32_t[]){ 6, 1 }, 2);     /* no 5 */
	uint32_t live = stack_table_intern(&t, f, 2);
	for (int r = 0; r < 50; r++) /* dead stacks are folded however hot */
		stack_table_count(&t, under, 1, 1, 1);
	stack_table_count(&t, leaf, 1, 1, 1);
	stack_table_count(&t, live, 1, 1, 1);
	uint32_t *map = stack_table_fold(&t, t.ncells, code_5_went, NULL);
	cr_assert_not_null(map);
	free(map);
	cr_expect_eq(t.folded, 2);
	for (size_t i = 0; i < t.nframes; i++)
		cr_expect_neq(t.frames[i].code_id, 5, "no frame of code 5 is left");
	uint64_t other = 0, kept = 0;
	for (size_t i = 0; i < t.ncells; i++)
		*(t.cells[i].node == STACK_OTHER ? &other : &kept) += t.cells[i].samples;
	cr_expect_eq(other, 51);
	cr_expect_eq(kept, 1);
	stack_table_destroy(&t);
}

/* ---- through the aggregator ------------------------------------------- */

static uint64_t recbuf[512];

static void def_code(struct aggregator *a, uint32_t id)
{
	struct rec_code_def *c = (void *)recbuf;
	char name[16];
	snprintf(name, sizeof name, "f%u", id);
	size_t ql = strlen(name), fl = 4;
	memset(recbuf, 0, 256);
	memcpy(c->data, name, ql);
	memcpy(c->data + ql, "m.py", fl);
	c->h = (struct rec_header){ REC_CODE_DEF, REC_ALIGN((uint32_t)(sizeof *c + ql + fl)) };
	c->code_id = id;
	c->firstlineno = (int32_t)id;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = (uint16_t)fl;
	aggregator_ingest(a, recbuf, c->h.size);
}

static void sample(struct aggregator *a, int tid, const uint32_t *ids, size_t n)
{
	struct rec_sample *s = (void *)recbuf;
	memset(s, 0, sizeof *s);
	s->h = (struct rec_header){ REC_SAMPLE, (uint32_t)(sizeof *s + n * sizeof(struct rec_frame)) };
	s->interval_ns = 1000000;
	s->tid = tid;
	s->pid = 3;
	s->nframes = (uint16_t)n;
	for (size_t i = 0; i < n; i++)
		s->frames[i] = (struct rec_frame){ ids[i], 0 };
	aggregator_ingest(a, recbuf, s->h.size);
}

Test(stack_table, snapshot_stacks_add_up_across_a_fold)
{
	struct aggregator *a = aggregator_new(false);
	struct snapshot s = { 0 };
	cr_assert_not_null(a);
	for (uint32_t id = 1; id <= 64; id++)
		def_code(a, id);
	/* 64^3 distinct 3-frame stacks exist; take 80000 of them (over the
	 * cap), and one hot stack every tenth sample. */
	uint32_t ids[3];
	for (uint32_t k = 0; k < 80000; k++) {
		ids[0] = 1 + k % 64;
		ids[1] = 1 + k / 64 % 64;
		ids[2] = 1 + k / 4096 % 64;
		sample(a, 10 + (int)(k % 3), ids, 3);
		if (k % 10 == 0)
			sample(a, 10, (uint32_t[]){ 1, 1, 1 }, 3);
	}
	aggregator_snapshot(a, &s);
	cr_expect_gt(s.folded_stacks, 0, "over the cap: some stacks folded");
	cr_expect_leq(s.nstacks, (size_t)STACK_MAX_CELLS + 1024 + 3);
	uint64_t sum = 0, other = 0, hot = 0;
	for (size_t i = 0; i < s.nstacks; i++) {
		const struct snap_stack *st = &s.stacks[i];
		cr_assert_lt(st->node, s.nstack_nodes);
		sum += st->samples;
		if (st->node == STACK_OTHER)
			other += st->samples;
		else if (s.stack_nodes[st->node].depth == 3 &&
		         st->samples > hot)
			hot = st->samples;
	}
	cr_expect_eq(sum, s.samples, "the stacks hold every sample: %llu of %llu",
	             (unsigned long long)sum, (unsigned long long)s.samples);
	cr_expect_gt(other, 0);
	cr_expect_eq(hot, 8000 + 1, "the hot stack (and its one plain sample) kept");
	cr_expect(s.stack_frames[STACK_FRAME_OTHER].other);
	cr_expect_str_eq(s.stack_frames[STACK_FRAME_OTHER].name, "[other stacks]");
	for (size_t i = 1; i < s.nstack_frames; i++)
		cr_expect_eq(strncmp(s.stack_frames[i].name, "f", 1), 0);

	json_t *j = headless_json(&s);
	cr_assert_not_null(j);
	cr_expect_eq(json_integer_value(json_object_get(j, "stacks_folded")),
	             (json_int_t)s.folded_stacks);
	cr_expect_eq(json_integer_value(json_object_get(j, "stacks_held")),
	             (json_int_t)s.nstacks);
	json_decref(j);
	char *text = headless_capture(batch_text_print, &s);
	char want[96];
	snprintf(want, sizeof want, "folded into [other stacks]: %llu stacks",
	         (unsigned long long)s.folded_stacks);
	cr_expect_not_null(strstr(text, want), "batch text says so:\n%.600s", text);
	free(text);
	snapshot_free(&s);
	aggregator_free(a);
}

/* Process 3 reports its threads: none listed are left (all gone). */
static void report_none(struct aggregator *a)
{
	struct rec_threads *r = (void *)recbuf;
	memset(r, 0, sizeof *r);
	r->h = (struct rec_header){ REC_THREADS, (uint32_t)sizeof *r };
	r->pid = 3;
	aggregator_ingest(a, recbuf, r->h.size);
}

Test(stack_table, threads_aged_out_merge_into_their_process)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	cr_assert_not_null(a);
	for (uint32_t id = 1; id <= 3; id++)
		def_code(a, id);
	/* A thread per request: 1000 threads, 3 samples each on one of two
	 * stacks, all gone by the report. */
	for (int k = 0; k < 1000; k++)
		for (int r = 0; r < 3; r++)
			sample(a, 5000 + k, (uint32_t[]){ 1 + (uint32_t)(k % 2), 3 }, 2);
	report_none(a);
	/* Threads age out as a snapshot lists them: the next one shows it. */
	aggregator_snapshot(a, &s);
	snapshot_free(&s);
	aggregator_snapshot(a, &s);
	uint64_t sum = 0, merged = 0;
	for (size_t i = 0; i < s.nstacks; i++) {
		sum += s.stacks[i].samples;
		if (s.stacks[i].tid == -3)
			merged += s.stacks[i].samples;
	}
	cr_expect_eq(sum, 3000, "every sample kept: %llu", (unsigned long long)sum);
	cr_expect_leq(s.nstacks, 64 + 2, "%zu stacks: the 64 threads kept and process 3's "
	              "gone ones, per stack", s.nstacks);
	cr_expect_eq(merged, 3 * (1000 - 64), "the aged-out threads' samples, under tid -3");
	snapshot_free(&s);
	aggregator_free(a);
}
