/* push_period.c - one push period's samples, keyed by content
 * (push_period.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "push_period.h"

#include <stdlib.h>
#include <string.h>

#include "export_stacks.h"

/* Frame 0 is "[other stacks]", node 0 the root and node 1 "[other
 * stacks]", as in the engine's tables (snapshot.h). */
static const struct snap_frame other_frame = {
	.name = "[other stacks]", .file = "", .module = "", .other = true,
};

/* ---- the map ---------------------------------------------------------- */

static size_t map_slot(const struct push_map *m, uint64_t key)
{
	size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (m->cap - 1);

	while (m->vals[i] != UINT32_MAX && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static bool map_get(const struct push_map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (m->cap == 0)
		return false;
	i = map_slot(m, key);
	if (m->vals[i] == UINT32_MAX)
		return false;
	*val = m->vals[i];
	return true;
}

static bool map_put(struct push_map *m, uint64_t key, uint64_t val);

/* Double the table (kept at most half full). */
static bool map_grow(struct push_map *m)
{
	struct push_map n = { .cap = m->cap ? m->cap * 2 : 64 };

	n.keys = malloc(n.cap * sizeof *n.keys);
	n.vals = malloc(n.cap * sizeof *n.vals);
	if (n.keys == NULL || n.vals == NULL) {
		free(n.keys);
		free(n.vals);
		return false;
	}
	memset(n.vals, 0xff, n.cap * sizeof *n.vals);
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i] != UINT32_MAX)
			map_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
	return true;
}

static bool map_put(struct push_map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap && !map_grow(m))
		return false;
	i = map_slot(m, key);
	if (m->vals[i] == UINT32_MAX)
		m->count++;
	m->keys[i] = key;
	m->vals[i] = (uint32_t)val;
	return true;
}

static void map_clear(struct push_map *m)
{
	if (m->cap > 0)
		memset(m->vals, 0xff, m->cap * sizeof *m->vals);
	m->count = 0;
}

static void map_free(struct push_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---- the period ------------------------------------------------------- */

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (p == NULL)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

static const char *str_or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t frame_hash(const struct snap_frame *f)
{
	uint64_t h = 14695981039346656037ull;
	int ints[2] = { f->line, f->first_line };
	unsigned char flags = (unsigned char)(f->native | f->other << 1);

	h = fnv(h, str_or_empty(f->name), strlen(str_or_empty(f->name)) + 1);
	h = fnv(h, str_or_empty(f->file), strlen(str_or_empty(f->file)) + 1);
	h = fnv(h, str_or_empty(f->module), strlen(str_or_empty(f->module)) + 1);
	h = fnv(h, ints, sizeof ints);
	return fnv(h, &flags, 1);
}

static bool frame_same(const struct snap_frame *a, const struct snap_frame *b)
{
	return a->line == b->line && a->first_line == b->first_line &&
	       a->native == b->native && a->other == b->other &&
	       strcmp(str_or_empty(a->name), str_or_empty(b->name)) == 0 &&
	       strcmp(str_or_empty(a->file), str_or_empty(b->file)) == 0 &&
	       strcmp(str_or_empty(a->module), str_or_empty(b->module)) == 0;
}

static void frame_free(struct snap_frame *f)
{
	free((char *)f->name);
	free((char *)f->file);
	free((char *)f->module);
}

/* A copy of f whose strings p owns; false on OOM (nothing kept). */
static bool frame_copy(struct snap_frame *to, const struct snap_frame *f)
{
	*to = *f;
	to->name = strdup(str_or_empty(f->name));
	to->file = strdup(str_or_empty(f->file));
	to->module = strdup(str_or_empty(f->module));
	if (to->name && to->file && to->module)
		return true;
	frame_free(to);
	return false;
}

/* The id of a frame like f, added if new; UINT32_MAX on OOM.  Hash
 * collisions probe the next key. */
static uint32_t frame_id(struct push_period *p, const struct snap_frame *f)
{
	uint64_t key = frame_hash(f), id;

	if (f->other)
		return 0;
	while (map_get(&p->frame_by_hash, key, &id)) {
		if (frame_same(&p->frames[id], f))
			return (uint32_t)id;
		key++;
	}
	if (!grow((void **)&p->frames, &p->frames_cap, p->nframes + 1,
	          sizeof *p->frames) ||
	    !frame_copy(&p->frames[p->nframes], f))
		return UINT32_MAX;
	if (!map_put(&p->frame_by_hash, key, p->nframes)) {
		frame_free(&p->frames[p->nframes]);
		return UINT32_MAX;
	}
	return (uint32_t)p->nframes++;
}

static uint32_t node_id(struct push_period *p, uint32_t parent, uint32_t frame)
{
	uint64_t key = (uint64_t)parent << 32 | frame, id;

	if (frame == 0 && parent == 0)
		return 1;
	if (map_get(&p->node_by_key, key, &id))
		return (uint32_t)id;
	if (!grow((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof *p->nodes) ||
	    !map_put(&p->node_by_key, key, p->nnodes))
		return UINT32_MAX;
	p->nodes[p->nnodes] = (struct snap_stack_node){
		.parent = parent, .frame = frame,
		.depth = parent == 0 ? 1 : p->nodes[parent].depth + 1,
	};
	return (uint32_t)p->nnodes++;
}

static struct snap_stack *stack_of(struct push_period *p, uint32_t node,
                                   pid_t tid, pid_t pid)
{
	uint64_t key = (uint64_t)node << 32 | (uint32_t)tid, id;

	if (map_get(&p->stack_by_key, key, &id))
		return &p->stacks[id];
	if (!grow((void **)&p->stacks, &p->stacks_cap, p->nstacks + 1,
	          sizeof *p->stacks) ||
	    !map_put(&p->stack_by_key, key, p->nstacks))
		return NULL;
	p->stacks[p->nstacks] = (struct snap_stack){ .node = node, .tid = tid, .pid = pid };
	return &p->stacks[p->nstacks++];
}

/* s's node n as a node of p (its frames interned outermost first). */
static uint32_t map_node(struct push_period *p, const struct snapshot *s,
                         uint32_t n, uint32_t *path, size_t cap)
{
	size_t depth = n == 0 ? 0 : export_node_path(s, n, path, cap);
	uint32_t node = 0;

	if (n == 0)
		return 0; /* samples without a frame: kept in the sums */
	if (depth == 0)
		return UINT32_MAX;
	for (size_t i = 0; i < depth && node != UINT32_MAX; i++) {
		uint32_t f = frame_id(p, &s->stack_frames[path[i]]);

		node = f == UINT32_MAX ? UINT32_MAX : node_id(p, node, f);
	}
	return node;
}

static bool add_stack(struct push_period *p, const struct snapshot *s,
                      const struct snap_stack *st, uint32_t *path, size_t cap)
{
	uint32_t node = map_node(p, s, st->node, path, cap);
	struct snap_stack *to;

	if (node == UINT32_MAX)
		return false;
	to = stack_of(p, node, st->tid, st->pid);
	if (to == NULL)
		return false;
	to->samples += st->samples_win;
	/* The window's time is not kept apart: its samples' share of the
	 * stack's time (one sampling interval each, give or take). */
	to->seconds += st->samples ? st->seconds * (double)st->samples_win /
	                             (double)st->samples : 0;
	snap_split_add(&to->split, &st->split_win);
	p->samples += st->samples_win;
	return true;
}

bool push_period_add(struct push_period *p, const struct snapshot *s)
{
	size_t cap = export_max_depth(s) + 1;
	uint32_t *path = malloc(cap * sizeof *path);
	bool ok = path != NULL;

	for (size_t i = 0; ok && i < s->nstacks; i++)
		if (s->stacks[i].samples_win > 0)
			ok = add_stack(p, s, &s->stacks[i], path, cap);
	free(path);
	if (!ok)
		p->oom = true;
	return ok;
}

bool push_period_clear(struct push_period *p)
{
	for (size_t i = 1; i < p->nframes; i++)
		frame_free(&p->frames[i]);
	map_clear(&p->frame_by_hash);
	map_clear(&p->node_by_key);
	map_clear(&p->stack_by_key);
	p->nframes = p->nnodes = p->nstacks = 0;
	p->samples = 0;
	p->oom = false;
	if (!grow((void **)&p->frames, &p->frames_cap, 1, sizeof *p->frames) ||
	    !grow((void **)&p->nodes, &p->nodes_cap, 2, sizeof *p->nodes))
		return false;
	p->frames[0] = other_frame;
	p->nodes[0] = (struct snap_stack_node){ 0 };
	p->nodes[1] = (struct snap_stack_node){ .parent = 0, .frame = 0, .depth = 1 };
	p->nframes = 1;
	p->nnodes = 2;
	return true;
}

bool push_period_init(struct push_period *p)
{
	memset(p, 0, sizeof *p);
	return push_period_clear(p);
}

void push_period_destroy(struct push_period *p)
{
	for (size_t i = 1; i < p->nframes; i++)
		frame_free(&p->frames[i]);
	free(p->frames);
	free(p->nodes);
	free(p->stacks);
	map_free(&p->frame_by_hash);
	map_free(&p->node_by_key);
	map_free(&p->stack_by_key);
	memset(p, 0, sizeof *p);
}

void push_period_view(const struct push_period *p, const struct snapshot *from,
                      struct snapshot *out)
{
	memset(out, 0, sizeof *out);
	out->pid = from->pid;
	memcpy(out->command, from->command, sizeof out->command);
	memcpy(out->python_version, from->python_version, sizeof out->python_version);
	out->requested_hz = from->requested_hz;
	out->samples = p->samples;
	out->stack_frames = p->frames;
	out->nstack_frames = p->nframes;
	out->stack_nodes = p->nodes;
	out->nstack_nodes = p->nnodes;
	out->stacks = p->stacks;
	out->nstacks = p->nstacks;
}
