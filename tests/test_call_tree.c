/* test_call_tree.c - the call tree (ui/call_tree.h) on hand-built
 * snapshots: its root's total is the samples of the stacks counted, and
 * every function's own and total, summed over its nodes (a function's
 * total over its outermost nodes only: a recursive call below counts no
 * sample again), are exactly those of the functions table derived from
 * the same snapshot (profile/stack_derive.h, itself checked equal to the
 * row counters); with recursion, "[other stacks]", thread and process
 * filters, and for the callers view of each function. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/stack_derive.h"
#include "../ui/call_tree.h"

#define MAX_FRAMES 32
#define MAX_NODES 512
#define MAX_STACKS 512

/* A snapshot's stack arrays being built; frames by name. */
struct fixture {
	struct snap_frame frames[MAX_FRAMES];
	struct snap_stack_node nodes[MAX_NODES];
	struct snap_stack stacks[MAX_STACKS];
	size_t nframes, nnodes, nstacks;
	struct snapshot s;
};

static void fx_init(struct fixture *fx)
{
	memset(fx, 0, sizeof *fx);
	fx->nnodes = 2; /* root, "[other stacks]" */
	fx->frames[0] = (struct snap_frame){ .name = "[other stacks]", .file = "",
	                                     .other = true, .module = "" };
	fx->nframes = 1;
	fx->nodes[1] = (struct snap_stack_node){ 0, 0, 1 };
}

/* Frame "name" at line (a function's lines differ, its file does not). */
static uint32_t frame(struct fixture *fx, const char *name, int line)
{
	for (uint32_t i = 1; i < fx->nframes; i++)
		if (strcmp(fx->frames[i].name, name) == 0 &&
		    fx->frames[i].line == line)
			return i;
	cr_assert_lt(fx->nframes, MAX_FRAMES);
	fx->frames[fx->nframes] = (struct snap_frame){ .name = name,
		.file = strcmp(name, "h") == 0 ? "lib.py" : "app.py",
		.line = line, .first_line = line - line % 10, .module = "" };
	return (uint32_t)fx->nframes++;
}

static uint32_t node(struct fixture *fx, uint32_t parent, uint32_t fr)
{
	for (uint32_t i = 2; i < fx->nnodes; i++)
		if (fx->nodes[i].parent == parent && fx->nodes[i].frame == fr)
			return i;
	cr_assert_lt(fx->nnodes, MAX_NODES);
	fx->nodes[fx->nnodes] = (struct snap_stack_node){ parent, fr,
		parent == 0 ? 1 : fx->nodes[parent].depth + 1 };
	return (uint32_t)fx->nnodes++;
}

/* samples of thread tid of process pid on the stack "a:1 b:12 c:3"
 * (outermost first; "!" alone: "[other stacks]"). */
static void stack(struct fixture *fx, const char *frames, uint64_t samples,
                  pid_t tid, pid_t pid)
{
	char buf[256], *save = NULL;
	uint32_t at = 0;

	snprintf(buf, sizeof buf, "%s", frames);
	if (strcmp(buf, "!") == 0) {
		at = 1;
	} else {
		for (char *w = strtok_r(buf, " ", &save); w != NULL;
		     w = strtok_r(NULL, " ", &save)) {
			char *colon = strchr(w, ':');
			cr_assert_not_null(colon);
			*colon = '\0';
			/* the names live in static storage: intern them */
			static char names[64][16];
			static size_t nnames;
			const char *name = NULL;
			for (size_t i = 0; i < nnames; i++)
				if (strcmp(names[i], w) == 0)
					name = names[i];
			if (name == NULL) {
				cr_assert_lt(nnames, 64);
				snprintf(names[nnames], sizeof names[0], "%s", w);
				name = names[nnames++];
			}
			at = node(fx, at, frame(fx, name, atoi(colon + 1)));
		}
	}
	cr_assert_lt(fx->nstacks, MAX_STACKS);
	fx->stacks[fx->nstacks++] = (struct snap_stack){
		.node = at, .tid = tid, .pid = pid, .samples = samples,
		.samples_win = samples / 2, .seconds = (double)samples / 1000,
		.split = { .python = (double)samples * 0.75,
		           .native = (double)samples * 0.25,
		           .mem_growth = samples * 4096 },
	};
}

static struct snapshot *fx_snapshot(struct fixture *fx, pid_t tid, pid_t pid)
{
	fx->s = (struct snapshot){ .pid = 100, .thread_filter = tid,
		.process_filter = pid,
		.stack_frames = fx->frames, .nstack_frames = fx->nframes,
		.stack_nodes = fx->nodes, .nstack_nodes = fx->nnodes,
		.stacks = fx->stacks, .nstacks = fx->nstacks };
	return &fx->s;
}

/* Is there an ancestor of node i of the same function? */
static bool under_itself(const struct call_tree *t, uint32_t i)
{
	for (uint32_t p = t->nodes[i].parent; p != 0 && p != CALL_NONE;
	     p = t->nodes[p].parent)
		if (t->nodes[p].func == t->nodes[i].func)
			return true;
	return false;
}

/* The tree's figures for function (name, file). */
static void tree_func(const struct call_tree *t, const char *name,
                      const char *file, struct snap_counts *out)
{
	memset(out, 0, sizeof *out);
	for (uint32_t i = 1; i < t->n; i++) {
		const struct call_node *n = &t->nodes[i];
		if (strcmp(n->name, name) != 0 || strcmp(n->file, file) != 0)
			continue;
		out->own += n->c.own;
		out->own_win += n->c.own_win;
		out->split.python += n->c.split.python;
		out->split.mem_growth += n->c.split.mem_growth;
		if (!under_itself(t, i)) {
			out->total += n->c.total;
			out->total_win += n->c.total_win;
		}
	}
}

/* The tree and the derived functions table agree, exactly. */
static void check_agrees(const struct snapshot *s)
{
	struct stack_derived d;
	struct call_tree t;
	uint64_t roots = 0;

	cr_assert(stack_derive(s, s->thread_filter, s->process_filter, &d));
	cr_assert(call_tree_build(&t, s));
	cr_expect_eq(t.nodes[0].c.total, d.samples, "root %lu, table %lu",
	             (unsigned long)t.nodes[0].c.total, (unsigned long)d.samples);
	for (uint32_t c = t.nodes[0].first_child; c != CALL_NONE;
	     c = t.nodes[c].next_sibling)
		roots += t.nodes[c].c.total;
	cr_expect_eq(roots, d.samples, "root-level nodes %lu, table %lu",
	             (unsigned long)roots, (unsigned long)d.samples);
	for (size_t i = 0; i < d.nfuncs; i++) {
		const struct snap_func *f = &d.funcs[i];
		struct snap_counts c;
		struct call_tree callers;

		tree_func(&t, f->name, f->file, &c);
		if (f->c.total == 0) { /* a frame of other threads only */
			cr_expect_eq(c.total, 0, "%s", f->name);
			continue;
		}
		cr_expect_eq(c.own, f->c.own, "%s own %lu, table %lu", f->name,
		             (unsigned long)c.own, (unsigned long)f->c.own);
		cr_expect_eq(c.own_win, f->c.own_win, "%s own_win", f->name);
		cr_expect_eq(c.total, f->c.total, "%s total %lu, table %lu",
		             f->name, (unsigned long)c.total,
		             (unsigned long)f->c.total);
		cr_expect_eq(c.total_win, f->c.total_win, "%s total_win", f->name);
		cr_expect_eq(c.split.python, f->c.split.python, "%s python", f->name);
		cr_expect_eq(c.split.mem_growth, f->c.split.mem_growth, "%s Mem+",
		             f->name);
		/* Its callers: the function's node holds its figures. */
		cr_assert(call_tree_build_callers(&callers, s, f->name, f->file));
		uint32_t top = callers.nodes[0].first_child;
		cr_assert_neq(top, CALL_NONE, "%s has no callers' node", f->name);
		cr_expect_eq(callers.nodes[top].next_sibling, CALL_NONE);
		cr_expect_eq(callers.nodes[top].c.total, f->c.total,
		             "%s callers' total %lu, table %lu", f->name,
		             (unsigned long)callers.nodes[top].c.total,
		             (unsigned long)f->c.total);
		cr_expect_eq(callers.nodes[top].c.own, f->c.own, "%s callers' own",
		             f->name);
		/* A caller's figures are parts of its callee's. */
		for (uint32_t j = 2; j < callers.n; j++) {
			const struct call_node *n = &callers.nodes[j];
			cr_expect_leq(n->c.total, callers.nodes[n->parent].c.total);
			cr_expect_leq(n->c.own, callers.nodes[n->parent].c.own);
		}
		call_tree_free(&callers);
	}
	call_tree_free(&t);
	stack_derived_free(&d);
}

static uint32_t find(const struct call_tree *t, uint32_t parent,
                     const char *name)
{
	for (uint32_t c = t->nodes[parent].first_child; c != CALL_NONE;
	     c = t->nodes[c].next_sibling)
		if (strcmp(t->nodes[c].name, name) == 0)
			return c;
	cr_assert_fail("no node %s under %u", name, parent);
	return CALL_NONE;
}

Test(call_tree, lines_merge_and_paths_stay_apart)
{
	static struct fixture fx;
	struct call_tree t;

	fx_init(&fx);
	stack(&fx, "main:1 a:11 h:21", 70, 1, 100);
	stack(&fx, "main:2 b:31 h:22", 30, 1, 100);
	stack(&fx, "main:3 a:12", 5, 1, 100);
	cr_assert(call_tree_build(&t, fx_snapshot(&fx, 0, 0)));
	uint32_t m = find(&t, 0, "main"), a = find(&t, m, "a"),
	         b = find(&t, m, "b");
	cr_expect_eq(t.nodes[m].c.total, 105);
	cr_expect_eq(t.nodes[a].c.total, 75);
	cr_expect_eq(t.nodes[a].c.own, 5);
	cr_expect_eq(t.nodes[find(&t, a, "h")].c.total, 70);
	cr_expect_eq(t.nodes[find(&t, b, "h")].c.own, 30);
	cr_expect_eq(t.nodes[a].line, 10, "a's first line");
	call_tree_free(&t);
	check_agrees(fx_snapshot(&fx, 0, 0));
}

Test(call_tree, recursion_is_one_node_per_depth)
{
	static struct fixture fx;
	struct call_tree t;

	fx_init(&fx);
	stack(&fx, "main:1 f:11 f:12 f:13", 40, 1, 100);
	stack(&fx, "main:1 f:11 g:21 f:11", 20, 1, 100);
	stack(&fx, "main:1 f:11", 10, 1, 100);
	cr_assert(call_tree_build(&t, fx_snapshot(&fx, 0, 0)));
	uint32_t m = find(&t, 0, "main"), f1 = find(&t, m, "f"),
	         f2 = find(&t, f1, "f"), f3 = find(&t, f2, "f");
	cr_expect_eq(t.nodes[f1].c.total, 70);
	cr_expect_eq(t.nodes[f1].c.own, 10);
	cr_expect_eq(t.nodes[f2].c.total, 40);
	cr_expect_eq(t.nodes[f3].c.own, 40);
	cr_expect_eq(t.nodes[f3].depth, 4);
	cr_expect_eq(t.nodes[find(&t, find(&t, f1, "g"), "f")].c.own, 20);
	call_tree_free(&t);
	check_agrees(fx_snapshot(&fx, 0, 0));
}

Test(call_tree, other_stacks_is_a_node)
{
	static struct fixture fx;
	struct call_tree t;

	fx_init(&fx);
	stack(&fx, "main:1 a:11", 50, 1, 100);
	stack(&fx, "!", 25, 1, 100);
	stack(&fx, "!", 5, 2, 100);
	cr_assert(call_tree_build(&t, fx_snapshot(&fx, 0, 0)));
	uint32_t o = find(&t, 0, "[other stacks]");
	cr_expect(t.nodes[o].other);
	cr_expect_eq(t.nodes[o].c.total, 30);
	cr_expect_eq(t.nodes[o].c.own, 30);
	cr_expect_eq(t.nodes[0].c.total, 80);
	/* sorted by name, "[other stacks]" last */
	cr_expect_eq(t.nodes[0].first_child, find(&t, 0, "main"));
	cr_expect_eq(t.nodes[find(&t, 0, "main")].next_sibling, o);
	call_tree_free(&t);
	check_agrees(fx_snapshot(&fx, 0, 0));
}

Test(call_tree, filters_count_one_thread_or_process)
{
	static struct fixture fx;
	struct call_tree t;

	fx_init(&fx);
	stack(&fx, "main:1 a:11 h:21", 70, 1, 100);
	stack(&fx, "main:1 b:31 h:21", 30, 2, 100);
	stack(&fx, "main:1 b:31", 9, 3, 200);
	stack(&fx, "!", 4, 3, 200);
	cr_assert(call_tree_build(&t, fx_snapshot(&fx, 2, 0)));
	cr_expect_eq(t.nodes[0].c.total, 30);
	cr_expect_eq(t.nodes[find(&t, 0, "main")].first_child,
	             find(&t, find(&t, 0, "main"), "b"), "thread 2 never ran a");
	call_tree_free(&t);
	cr_assert(call_tree_build(&t, fx_snapshot(&fx, 0, 200)));
	cr_expect_eq(t.nodes[0].c.total, 13);
	call_tree_free(&t);
	check_agrees(fx_snapshot(&fx, 1, 0));
	check_agrees(fx_snapshot(&fx, 0, 100));
	check_agrees(fx_snapshot(&fx, 0, 200));
	check_agrees(fx_snapshot(&fx, 0, 0));
}

Test(call_tree, callers_are_the_paths_in)
{
	static struct fixture fx;
	struct call_tree t;

	fx_init(&fx);
	stack(&fx, "main:1 a:11 h:21", 70, 1, 100);
	stack(&fx, "main:1 b:31 h:21 k:41", 30, 1, 100);
	stack(&fx, "main:1 b:31 h:21 h:22", 6, 1, 100);
	cr_assert(call_tree_build_callers(&t, fx_snapshot(&fx, 0, 0), "h",
	                                  "lib.py"));
	uint32_t h = find(&t, 0, "h"), a = find(&t, h, "a"),
	         b = find(&t, h, "b");
	cr_expect_eq(t.nodes[h].c.total, 106);
	cr_expect_eq(t.nodes[h].c.own, 76);
	cr_expect_eq(t.nodes[a].c.total, 70);
	cr_expect_eq(t.nodes[b].c.total, 36, "the recursion enters once");
	cr_expect_eq(t.nodes[b].c.own, 6);
	cr_expect_eq(t.nodes[find(&t, b, "main")].c.total, 36);
	call_tree_free(&t);
	check_agrees(fx_snapshot(&fx, 0, 0));
}

/* Random stacks over few functions: much recursion, every filter. */
Test(call_tree, random_stacks_agree_with_the_table)
{
	static struct fixture fx;
	static const char *const names[] = { "main", "f", "g", "h" };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;

	for (int round = 0; round < 20; round++) {
		fx_init(&fx);
		for (int i = 0; i < 60; i++) {
			char st[128] = "";
			size_t len = 0;
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			int depth = 1 + (int)(rng % 7);
			for (int d = 0; d < depth; d++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				len += (size_t)snprintf(st + len, sizeof st - len,
				        "%s%s:%d", d ? " " : "", names[rng % 4],
				        (int)((rng >> 8) % 3) + 1);
			}
			stack(&fx, rng % 11 == 0 ? "!" : st, 1 + rng % 97,
			      (pid_t)(1 + rng % 3), (pid_t)(100 + rng % 2));
		}
		check_agrees(fx_snapshot(&fx, 0, 0));
		check_agrees(fx_snapshot(&fx, 2, 0));
		check_agrees(fx_snapshot(&fx, 0, 101));
	}
}
