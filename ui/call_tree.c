/* call_tree.c - the call tree of a snapshot's stacks (call_tree.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "call_tree.h"

#include <stdlib.h>
#include <string.h>

/* An open-addressing map u64 -> u32 (keys never UINT64_MAX), the
 * build's only index: functions by their names' hash, children by
 * (parent, function). */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

#define EMPTY_KEY UINT64_MAX

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mix(h ^ 0xff);
}

static bool map_init(struct u64map *m, size_t want)
{
	size_t cap = 64;

	while (cap < want * 2)
		cap *= 2;
	m->keys = malloc(cap * sizeof *m->keys);
	m->vals = malloc(cap * sizeof *m->vals);
	m->cap = cap;
	m->n = 0;
	if (m->keys == NULL || m->vals == NULL)
		return false;
	memset(m->keys, 0xff, cap * sizeof *m->keys);
	return true;
}

static void map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct u64map){ NULL, NULL, 0, 0 };
}

/* The slot of key: where it is, or the empty one where it would go. */
static size_t map_slot(const struct u64map *m, uint64_t key)
{
	size_t i = mix(key) & (m->cap - 1);

	while (m->keys[i] != EMPTY_KEY && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static bool map_grow(struct u64map *m)
{
	struct u64map bigger;

	if (!map_init(&bigger, m->cap))
		return map_free(&bigger), false;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != EMPTY_KEY) {
			size_t j = map_slot(&bigger, m->keys[i]);
			bigger.keys[j] = m->keys[i];
			bigger.vals[j] = m->vals[i];
			bigger.n++;
		}
	map_free(m);
	*m = bigger;
	return true;
}

static bool map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && !map_grow(m))
		return false;
	i = map_slot(m, key);
	if (m->keys[i] == EMPTY_KEY)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
	return true;
}

static bool map_get(const struct u64map *m, uint64_t key, uint32_t *val)
{
	size_t i = map_slot(m, key);

	if (m->keys[i] == EMPTY_KEY)
		return false;
	*val = m->vals[i];
	return true;
}

/* ---- building ---------------------------------------------------------- */

struct build {
	const struct snapshot *s;
	struct call_tree *t;
	uint32_t *frame_func;  /* owned: function id of each frame */
	uint32_t *func_frame;  /* owned: a frame of each function */
	int *func_line;        /* owned: each function's smallest first line */
	uint64_t *func_hash;   /* owned: of its name and file */
	struct u64map funcs;   /* name hash -> function (chained by probing
	                          the next key on a different name) */
	struct u64map kids;    /* (parent, function) -> node */
};

static bool same_str(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* The function of frame i: (name, file), as the functions table. */
static bool intern_frame(struct build *b, uint32_t i)
{
	const struct snap_frame *f = &b->s->stack_frames[i];
	uint64_t h = str_hash(str_hash(0xcbf29ce484222325ULL, f->name), f->file);
	uint64_t key = h;
	uint32_t fn;

	for (;; key = mix(key + 1)) {
		if (key == EMPTY_KEY)
			continue;
		if (!map_get(&b->funcs, key, &fn))
			break;
		const struct snap_frame *g = &b->s->stack_frames[b->func_frame[fn]];
		if (same_str(g->name, f->name) && same_str(g->file, f->file)) {
			if (f->first_line < b->func_line[fn])
				b->func_line[fn] = f->first_line;
			b->frame_func[i] = fn;
			return true;
		}
	}
	fn = b->t->nfuncs++;
	b->func_frame[fn] = i;
	b->func_line[fn] = f->first_line;
	b->func_hash[fn] = h;
	b->frame_func[i] = fn;
	return map_put(&b->funcs, key, fn);
}

static bool tree_grow(struct call_tree *t)
{
	size_t cap = t->cap != 0 ? t->cap * 2 : 256;
	struct call_node *nodes = realloc(t->nodes, cap * sizeof *nodes);

	if (nodes == NULL)
		return false;
	t->nodes = nodes;
	t->cap = cap;
	return true;
}

/* The child of parent for function fn, made when missing. */
static uint32_t child(struct build *b, uint32_t parent, uint32_t fn)
{
	struct call_tree *t = b->t;
	uint64_t key = (uint64_t)parent << 32 | fn;
	uint32_t i;

	if (map_get(&b->kids, key, &i))
		return i;
	if (t->n == t->cap && !tree_grow(t))
		return CALL_NONE;
	i = (uint32_t)t->n;
	const struct snap_frame *f = &b->s->stack_frames[b->func_frame[fn]];
	t->nodes[i] = (struct call_node){
		.name = f->name, .file = f->file, .module = f->module,
		.line = b->func_line[fn], .native = f->native, .other = f->other,
		.func = fn, .parent = parent, .depth = t->nodes[parent].depth + 1,
		.first_child = CALL_NONE, .next_sibling = CALL_NONE,
		.path = mix(t->nodes[parent].path ^ b->func_hash[fn]),
	};
	if (!map_put(&b->kids, key, i))
		return CALL_NONE;
	t->n++;
	return i;
}

static bool build_start(struct build *b, struct call_tree *t,
                        const struct snapshot *s)
{
	size_t nf = s->nstack_frames ? s->nstack_frames : 1;

	*b = (struct build){ .s = s, .t = t };
	*t = (struct call_tree){ .nodes = NULL };
	b->frame_func = malloc(nf * sizeof *b->frame_func);
	b->func_frame = malloc(nf * sizeof *b->func_frame);
	b->func_line = malloc(nf * sizeof *b->func_line);
	b->func_hash = malloc(nf * sizeof *b->func_hash);
	if (b->frame_func == NULL || b->func_frame == NULL ||
	    b->func_line == NULL || b->func_hash == NULL ||
	    !map_init(&b->funcs, nf) || !map_init(&b->kids, s->nstack_nodes) ||
	    !tree_grow(t))
		return false;
	t->nodes[0] = (struct call_node){ .name = "", .file = "",
		.module = "", .func = CALL_NONE, .parent = CALL_NONE,
		.first_child = CALL_NONE, .next_sibling = CALL_NONE };
	t->n = 1;
	for (uint32_t i = 0; i < s->nstack_frames; i++)
		if (!intern_frame(b, i))
			return false;
	return true;
}

static void build_end(struct build *b)
{
	free(b->frame_func);
	free(b->func_frame);
	free(b->func_line);
	free(b->func_hash);
	map_free(&b->funcs);
	map_free(&b->kids);
}

static bool counted(const struct snapshot *s, const struct snap_stack *st)
{
	return (s->thread_filter == 0 || st->tid == s->thread_filter) &&
	       (s->process_filter == 0 || st->pid == s->process_filter) &&
	       st->node != 0 && st->node < s->nstack_nodes;
}

/* The functions of stack node n, outermost first, into fns (room for
 * the snapshot's nodes); how many, 0 for a broken chain. */
static size_t stack_funcs(const struct build *b, uint32_t n, uint32_t *fns)
{
	const struct snapshot *s = b->s;
	size_t k = 0;

	while (n != 0) {
		const struct snap_stack_node *sn = &s->stack_nodes[n];
		/* Parents come first: anything else is a cycle. */
		if (k == s->nstack_nodes || sn->frame >= s->nstack_frames ||
		    sn->parent >= n)
			return 0;
		fns[k++] = b->frame_func[sn->frame];
		n = sn->parent;
	}
	for (size_t i = 0; i < k / 2; i++) {
		uint32_t x = fns[i];
		fns[i] = fns[k - 1 - i];
		fns[k - 1 - i] = x;
	}
	return k;
}

static void add_samples(struct snap_counts *c, const struct snap_stack *st,
                        bool own)
{
	c->total += st->samples;
	c->total_win += st->samples_win;
	c->total_s += st->seconds;
	if (!own)
		return;
	c->own += st->samples;
	c->own_win += st->samples_win;
	c->own_s += st->seconds;
	snap_split_add(&c->split, &st->split);
	snap_split_add(&c->split_win, &st->split_win);
}

/* Add stack st along the path fns[0..k) under the root, as own samples
 * on every node when own (callers: the function was innermost). */
static bool add_path(struct build *b, const uint32_t *fns, size_t k,
                     const struct snap_stack *st, bool own)
{
	uint32_t at = 0;

	add_samples(&b->t->nodes[0].c, st, own);
	for (size_t i = 0; i < k; i++) {
		at = child(b, at, fns[i]);
		if (at == CALL_NONE)
			return false;
		add_samples(&b->t->nodes[at].c, st, own);
	}
	return true;
}

/* The tree node of stack node n, made (with the nodes above it) when
 * missing: tmap[] remembers each stack node's, so every stack node is
 * walked once however many stacks share it.  CALL_NONE: a broken chain
 * (parents come first) or OOM (*oom). */
static uint32_t tree_node_of(struct build *b, uint32_t *tmap, uint32_t *chain,
                             uint32_t n, bool *oom)
{
	const struct snapshot *s = b->s;
	size_t k = 0;
	uint32_t at;

	while (tmap[n] == CALL_NONE) {
		const struct snap_stack_node *sn = &s->stack_nodes[n];
		if (sn->parent >= n || sn->frame >= s->nstack_frames)
			return CALL_NONE;
		chain[k++] = n;
		n = sn->parent;
	}
	at = tmap[n];
	while (k > 0) {
		uint32_t m = chain[--k];
		at = child(b, at, b->frame_func[s->stack_nodes[m].frame]);
		if (at == CALL_NONE) {
			*oom = true;
			return CALL_NONE;
		}
		tmap[m] = at;
	}
	return at;
}

/* Each stack's samples on its innermost node, then every node's total
 * added to its parent's (children come after their parents). */
static bool build_top_down(struct build *b, uint32_t *chain)
{
	const struct snapshot *s = b->s;
	struct call_tree *t = b->t;
	uint32_t *tmap = malloc((s->nstack_nodes ? s->nstack_nodes : 1) *
	                        sizeof *tmap);
	bool oom = false;

	if (tmap == NULL)
		return false;
	for (size_t i = 0; i < s->nstack_nodes; i++)
		tmap[i] = i == 0 ? 0 : CALL_NONE;
	for (size_t i = 0; i < s->nstacks && !oom; i++) {
		const struct snap_stack *st = &s->stacks[i];
		uint32_t at;

		if (!counted(s, st))
			continue;
		at = tree_node_of(b, tmap, chain, st->node, &oom);
		if (at == CALL_NONE)
			continue;
		t->samples += st->samples;
		t->samples_win += st->samples_win;
		add_samples(&t->nodes[at].c, st, true);
	}
	free(tmap);
	for (size_t i = t->n; i-- > 1 && !oom;) {
		struct snap_counts *c = &t->nodes[i].c,
		                   *p = &t->nodes[t->nodes[i].parent].c;
		p->total += c->total;
		p->total_win += c->total_win;
		p->total_s += c->total_s;
	}
	return !oom;
}

/* Callers of fn: the path from its outermost call up to the outermost
 * frame, fn first. */
static bool build_inverted(struct build *b, uint32_t fn, uint32_t *fns)
{
	const struct snapshot *s = b->s;

	for (size_t i = 0; i < s->nstacks; i++) {
		const struct snap_stack *st = &s->stacks[i];
		size_t k, at;

		if (!counted(s, st))
			continue;
		b->t->samples += st->samples;
		b->t->samples_win += st->samples_win;
		k = stack_funcs(b, st->node, fns);
		for (at = 0; at < k && fns[at] != fn; at++)
			;
		if (at == k)
			continue;
		bool own = fns[k - 1] == fn;
		/* fns[at] is fn's outermost call: its callers after it. */
		for (size_t j = 0; j < (at + 1) / 2; j++) {
			uint32_t x = fns[j];
			fns[j] = fns[at - j];
			fns[at - j] = x;
		}
		if (!add_path(b, fns, at + 1, st, own))
			return false;
	}
	return true;
}

/* The function (name, file) among the interned ones, CALL_NONE none. */
static uint32_t find_func(const struct build *b, const char *name,
                          const char *file)
{
	for (uint32_t fn = 0; fn < b->t->nfuncs; fn++) {
		const struct snap_frame *f = &b->s->stack_frames[b->func_frame[fn]];
		if (same_str(f->name, name) && same_str(f->file, file))
			return fn;
	}
	return CALL_NONE;
}

static bool build(struct call_tree *t, const struct snapshot *s,
                  const char *name, const char *file)
{
	struct build b;
	uint32_t *fns = NULL;
	bool ok = build_start(&b, t, s);

	if (ok) {
		fns = malloc((s->nstack_nodes ? s->nstack_nodes : 1) * sizeof *fns);
		ok = fns != NULL;
	}
	t->inverted = name != NULL;
	if (ok && name == NULL) {
		ok = build_top_down(&b, fns);
	} else if (ok) {
		uint32_t fn = find_func(&b, name, file);
		ok = fn == CALL_NONE || build_inverted(&b, fn, fns);
	}
	free(fns);
	build_end(&b);
	return ok && call_tree_order(t, call_node_by_name, NULL);
}

bool call_tree_build(struct call_tree *t, const struct snapshot *s)
{
	return build(t, s, NULL, NULL);
}

bool call_tree_build_callers(struct call_tree *t, const struct snapshot *s,
                             const char *name, const char *file)
{
	return build(t, s, name != NULL ? name : "", file);
}

void call_tree_free(struct call_tree *t)
{
	free(t->nodes);
	*t = (struct call_tree){ .nodes = NULL };
}

/* ---- order ------------------------------------------------------------- */

struct order_by {
	const struct call_tree *t;
	call_node_cmp cmp;
	const void *ctx;
};

int call_node_by_name(const struct call_node *a, const struct call_node *b,
                      const void *ctx)
{
	int d;

	(void)ctx;
	if (a->other != b->other) /* "[other stacks]" last */
		return a->other ? 1 : -1;
	d = strcmp(a->name != NULL ? a->name : "", b->name != NULL ? b->name : "");
	if (d == 0)
		d = strcmp(a->file != NULL ? a->file : "",
		           b->file != NULL ? b->file : "");
	return d;
}

static int compare_kids(const void *pa, const void *pb, void *arg)
{
	const struct order_by *by = arg;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct call_node *a = &by->t->nodes[ia], *b = &by->t->nodes[ib];
	int d;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	d = by->cmp(a, b, by->ctx);
	if (d == 0)
		d = call_node_by_name(a, b, NULL);
	if (d == 0 && a->path != b->path)
		d = a->path < b->path ? -1 : 1;
	return d;
}

bool call_tree_order(struct call_tree *t, call_node_cmp cmp, const void *ctx)
{
	struct order_by by = { t, cmp, ctx };
	uint32_t *kids;
	size_t n = t->n > 0 ? t->n - 1 : 0;

	if (t->n == 0)
		return true;
	kids = malloc((n ? n : 1) * sizeof *kids);
	if (kids == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		kids[i] = (uint32_t)(i + 1);
	qsort_r(kids, n, sizeof *kids, compare_kids, &by);
	for (size_t i = 0; i < t->n; i++)
		t->nodes[i].first_child = CALL_NONE;
	/* Linked from the last, so each list keeps the sorted order. */
	for (size_t i = n; i-- > 0;) {
		struct call_node *c = &t->nodes[kids[i]];
		c->next_sibling = t->nodes[c->parent].first_child;
		t->nodes[c->parent].first_child = kids[i];
	}
	free(kids);
	return true;
}

uint32_t call_tree_hottest_child(const struct call_tree *t, uint32_t i)
{
	uint32_t best = CALL_NONE;

	for (uint32_t c = t->nodes[i].first_child; c != CALL_NONE;
	     c = t->nodes[c].next_sibling)
		if (best == CALL_NONE ||
		    t->nodes[c].c.total > t->nodes[best].c.total)
			best = c;
	return best;
}
