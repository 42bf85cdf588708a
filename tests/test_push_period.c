/* test_push_period.c - a push period holds exactly the samples counted
 * since the last one: window counts added by frame content, so a fold of
 * the engine's stack table (stacks moved into "[other stacks]", frames
 * and nodes renumbered) neither loses nor counts twice, and the r key's
 * reset does not lose what was counted since the last snapshot. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../ui/push_live.h"
#include "../ui/push_period.h"

/* A stack table of up to 4 frames, nodes and stacks, in static arrays
 * (not snapshot_free'd). */
struct table {
	struct snap_frame frames[4];
	struct snap_stack_node nodes[6];
	struct snap_stack stacks[4];
	struct snapshot s;
};

static void table_init(struct table *t, size_t nframes, size_t nnodes,
                       size_t nstacks)
{
	memset(&t->s, 0, sizeof t->s);
	t->s.requested_hz = 100;
	t->s.stack_frames = t->frames;
	t->s.nstack_frames = nframes;
	t->s.stack_nodes = t->nodes;
	t->s.nstack_nodes = nnodes;
	t->s.stacks = t->stacks;
	t->s.nstacks = nstacks;
}

static const struct snap_frame other = { .name = "[other stacks]", .file = "",
                                         .module = "", .other = true };

static struct snap_frame frame(const char *name, int line)
{
	return (struct snap_frame){ .name = name, .file = "app.py", .line = line,
	                            .first_line = 1, .module = "" };
}

static struct snap_stack stack(uint32_t node, uint64_t samples, uint64_t win)
{
	return (struct snap_stack){ .node = node, .tid = 7, .pid = 7,
	                            .samples = samples, .samples_win = win,
	                            .seconds = (double)samples / 100 };
}

/* The period's samples on the stack whose leaf frame is named leaf. */
static uint64_t samples_at(const struct push_period *p, const char *leaf)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nstacks; i++) {
		const struct snap_frame *f =
			&p->frames[p->nodes[p->stacks[i].node].frame];

		if (strcmp(f->name, leaf) == 0)
			n += p->stacks[i].samples;
	}
	return n;
}

/* Snapshot A: main > x (5), main > y (3).  Then the engine folds y into
 * [other stacks] and renumbers: snapshot B lists x's frame first, has
 * x 7 (2 new) and [other stacks] 4 (y's 3 moved, window 0, and 1 new). */
Test(push_period, a_fold_neither_loses_nor_doubles)
{
	struct table a, b;
	struct push_period p;

	table_init(&a, 4, 5, 2);
	a.frames[0] = other;
	a.frames[1] = frame("main", 1);
	a.frames[2] = frame("y", 9);
	a.frames[3] = frame("x", 5);
	a.nodes[0] = (struct snap_stack_node){ 0, 0, 0 };
	a.nodes[1] = (struct snap_stack_node){ 0, 0, 1 };
	a.nodes[2] = (struct snap_stack_node){ 0, 1, 1 };
	a.nodes[3] = (struct snap_stack_node){ 2, 3, 2 };  /* main > x */
	a.nodes[4] = (struct snap_stack_node){ 2, 2, 2 };  /* main > y */
	a.stacks[0] = stack(3, 5, 5);
	a.stacks[1] = stack(4, 3, 3);
	a.s.samples = 8;

	table_init(&b, 3, 4, 2);
	b.frames[0] = other;
	b.frames[1] = frame("x", 5);
	b.frames[2] = frame("main", 1);
	b.nodes[0] = (struct snap_stack_node){ 0, 0, 0 };
	b.nodes[1] = (struct snap_stack_node){ 0, 0, 1 };
	b.nodes[2] = (struct snap_stack_node){ 0, 2, 1 };
	b.nodes[3] = (struct snap_stack_node){ 2, 1, 2 };  /* main > x */
	b.stacks[0] = stack(1, 4, 1);
	b.stacks[1] = stack(3, 7, 2);
	b.s.samples = 11;

	cr_assert(push_period_init(&p));
	cr_assert(push_period_add(&p, &a.s));
	cr_assert(push_period_add(&p, &b.s));
	cr_expect_eq(p.samples, b.s.samples, "the period holds %" PRIu64
	             " samples, %" PRIu64 " were counted", p.samples, b.s.samples);
	cr_expect_eq(samples_at(&p, "x"), 7, "x: %" PRIu64, samples_at(&p, "x"));
	cr_expect_eq(samples_at(&p, "y"), 3, "y: %" PRIu64, samples_at(&p, "y"));
	cr_expect_eq(samples_at(&p, "[other stacks]"), 1);
	/* x under both numberings is one stack of the period. */
	cr_expect_eq(p.nstacks, 3, "%zu stacks", p.nstacks);

	/* The next period starts empty and holds only its own windows. */
	cr_assert(push_period_clear(&p));
	b.stacks[0].samples_win = 0;
	b.stacks[1].samples = 9;
	b.stacks[1].samples_win = 2;
	cr_assert(push_period_add(&p, &b.s));
	cr_expect_eq(p.samples, 2);
	cr_expect_eq(samples_at(&p, "x"), 2);
	push_period_destroy(&p);
}

/* ---- reset, through push_live's source ---------------------------------- */

/* A source with one stack: `pending` samples counted since the last
 * take, `total` since the last reset. */
struct counting {
	struct table t;
	uint64_t pending, total;
};

static void *dup(const void *p, size_t n)
{
	void *d = malloc(n);

	cr_assert_not_null(d);
	return memcpy(d, p, n);
}

static void counting_take(void *ctx, struct snapshot *out)
{
	struct counting *c = ctx;

	c->total += c->pending;
	table_init(&c->t, 2, 3, 1);
	c->t.frames[0] = other;
	c->t.frames[1] = frame("main", 1);
	c->t.nodes[0] = (struct snap_stack_node){ 0, 0, 0 };
	c->t.nodes[1] = (struct snap_stack_node){ 0, 0, 1 };
	c->t.nodes[2] = (struct snap_stack_node){ 0, 1, 1 };
	c->t.stacks[0] = stack(2, c->total, c->pending);
	c->t.s.samples = c->total;
	c->pending = 0;
	/* Owned copies, as a real source hands out (snapshot_free). */
	*out = c->t.s;
	out->stack_frames = dup(c->t.frames, sizeof c->t.frames);
	out->stack_nodes = dup(c->t.nodes, sizeof c->t.nodes);
	out->stacks = dup(c->t.stacks, sizeof c->t.stacks);
}

static bool counting_poll(void *ctx)
{
	(void)ctx;
	return true;
}

static void counting_reset(void *ctx)
{
	struct counting *c = ctx;

	c->pending = c->total = 0;
}

/* The samples counted between the last snapshot and r are the period's:
 * the wrapper takes a snapshot before the reset. */
Test(push_period, a_reset_keeps_what_was_counted_before_it)
{
	static struct counting c;
	struct options o;
	struct push_live pl;
	struct snapshot_source src = { .ctx = &c, .poll = counting_poll,
	                               .take = counting_take,
	                               .reset = counting_reset };
	struct snapshot s;
	char err[512];

	memset(&o, 0, sizeof o);
	/* Never due in this test, and never connected to. */
	o.push_url = "http://127.0.0.1:9";
	o.push_every_s = 3600;
	cr_assert_eq(push_live_open(&pl, &o, err, sizeof err), 0, "%s", err);
	src = push_live_source(&pl, src);
	c.pending = 5;
	src.take(src.ctx, &s);
	snapshot_free(&s);
	cr_expect_eq(pl.period.samples, 5);
	c.pending = 3; /* counted, not yet in any snapshot */
	src.reset(src.ctx);
	cr_expect_eq(pl.period.samples, 8, "the period lost the %d samples "
	             "counted before the reset: it holds %" PRIu64, 3,
	             pl.period.samples);
	c.pending = 2;
	src.take(src.ctx, &s);
	snapshot_free(&s);
	cr_expect_eq(pl.period.samples, 10);
	push_live_close(&pl, false);
}
