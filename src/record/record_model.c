/* record_model.c - ids of what a recording defined, and buckets built
 * from the aggregator (record_model.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/record_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile/stack_table.h"
#include "record/record_schema.h"

/* Held definitions beyond which all are forgotten (bounded memory under
 * code churn: 200 new functions a second would otherwise grow pytop by
 * ~100 MB an hour); what is met again is defined again under new ids. */
#define MODEL_CAP 131072

struct record_model {
	size_t cap;                     /* MODEL_CAP, or a test's */
	uint64_t forgets;
	char **strings;  size_t nstrings, strings_cap;   /* owned, by id - base */
	uint32_t string_base;
	struct hashmap string_by_hash;  /* fnv64, probed on collision -> id - base */
	struct rb_frame *frames; size_t nframes, frames_cap; /* by id - base */
	uint32_t frame_base;
	struct hashmap frame_by_hash;
	struct hashmap stack_by_key;    /* parent << 32 | frame -> id */
	uint32_t nstacks;               /* ids given; 0 is the root */
	struct hashmap thread_by_key;   /* tid << 32 | pid -> id */
	uint32_t nthreads;
	uint32_t *node_stack; size_t node_cap; /* node -> stack id + 1 */
	uint64_t node_gen;              /* the stack table's gen they hold */
	uint32_t *chain; size_t chain_cap; /* scratch: a node's ancestors */
	struct hashmap row_by_key;      /* this bucket: stack << 32 | thread -> row */
	struct hashmap seen_in_bucket;  /* this bucket: thread ids with rows */
	struct hashmap described;       /* pids whose process row has its command */
	uint32_t next_bucket;
	size_t rows_hint;               /* the last bucket's rows */
};

static bool reserve(void **p, size_t n, size_t *cap, size_t size)
{
	size_t c;
	void *q;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 64;
	q = realloc(*p, c * size);
	if (q == NULL)
		return false;
	*p = q;
	*cap = c;
	return true;
}

/* Append one element to a bucket's array of capacity *cap (doubled as
 * needed); NULL on OOM. */
static void *push(void **arr, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void *q = realloc(*arr, c * size);

		if (q == NULL)
			return NULL;
		*arr = q;
		*cap = c;
	}
	return (char *)*arr + (*n)++ * size;
}

static uint64_t fnv64(const void *p, size_t n, uint64_t h)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

struct record_model *record_model_new(void)
{
	return record_model_new_capped(MODEL_CAP);
}

struct record_model *record_model_new_capped(size_t cap)
{
	struct record_model *m = calloc(1, sizeof *m);

	if (m == NULL)
		return NULL;
	m->cap = cap;
	hashmap_init(&m->seen_in_bucket);
	hashmap_init(&m->described);
	hashmap_init(&m->string_by_hash);
	hashmap_init(&m->frame_by_hash);
	hashmap_init(&m->stack_by_key);
	hashmap_init(&m->thread_by_key);
	hashmap_init(&m->row_by_key);
	m->nstacks = 1;
	return m;
}

/* Every definition dropped (ids are never given again: the bases move
 * on); the node cache with them. */
static void forget_definitions(struct record_model *m)
{
	for (size_t i = 0; i < m->nstrings; i++)
		free(m->strings[i]);
	free(m->strings);
	free(m->frames);
	m->string_base += (uint32_t)m->nstrings;
	m->frame_base += (uint32_t)m->nframes;
	m->strings = NULL;
	m->frames = NULL;
	m->nstrings = m->strings_cap = m->nframes = m->frames_cap = 0;
	hashmap_destroy(&m->string_by_hash);
	hashmap_destroy(&m->frame_by_hash);
	hashmap_destroy(&m->stack_by_key);
	hashmap_destroy(&m->thread_by_key);
	hashmap_destroy(&m->described);
	hashmap_init(&m->described);
	hashmap_init(&m->string_by_hash);
	hashmap_init(&m->frame_by_hash);
	hashmap_init(&m->stack_by_key);
	hashmap_init(&m->thread_by_key);
	if (m->node_stack != NULL)
		memset(m->node_stack, 0, m->node_cap * sizeof *m->node_stack);
}

size_t record_model_held(const struct record_model *m)
{
	return m->nstrings + m->nframes + hashmap_count(&m->stack_by_key) +
	       hashmap_count(&m->thread_by_key);
}

uint64_t record_model_forgets(const struct record_model *m)
{
	return m->forgets;
}

void record_model_free(struct record_model *m)
{
	if (m == NULL)
		return;
	forget_definitions(m);
	free(m->node_stack);
	free(m->chain);
	hashmap_destroy(&m->string_by_hash);
	hashmap_destroy(&m->frame_by_hash);
	hashmap_destroy(&m->stack_by_key);
	hashmap_destroy(&m->thread_by_key);
	hashmap_destroy(&m->row_by_key);
	hashmap_destroy(&m->seen_in_bucket);
	hashmap_destroy(&m->described);
	free(m);
}

/* ---- definitions -------------------------------------------------------- */

/* The string's id, defined in b if new; UINT32_MAX on OOM. */
static uint32_t string_id(struct record_model *m, struct rec_bucket *b, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = fnv64(s, len, 0xcbf29ce484222325ull), v;
	struct rb_string *def;
	char *own, *copy;

	for (;; h++) {
		if (!hashmap_get(&m->string_by_hash, h, &v))
			break;
		if (strcmp(m->strings[v], s) == 0)
			return m->string_base + (uint32_t)v;
	}
	if (!reserve((void **)&m->strings, m->nstrings, &m->strings_cap, sizeof *m->strings))
		return UINT32_MAX;
	own = strdup(s);
	copy = strdup(s);
	def = own && copy ? push((void **)&b->strings, &b->nstrings, &b->strings_cap,
	                         sizeof *def) : NULL;
	if (def == NULL || !hashmap_put(&m->string_by_hash, h, m->nstrings)) {
		if (def != NULL)
			b->nstrings--;
		free(own);
		free(copy);
		return UINT32_MAX;
	}
	*def = (struct rb_string){ .id = m->string_base + (uint32_t)m->nstrings, .text = copy };
	m->strings[m->nstrings++] = own;
	return def->id;
}

static bool frame_same(const struct rb_frame *a, const struct rb_frame *b)
{
	return a->name == b->name && a->file == b->file && a->module == b->module &&
	       a->line == b->line && a->first_line == b->first_line &&
	       a->native == b->native && a->other == b->other;
}

static uint32_t frame_id(struct record_model *m, struct rec_bucket *b, struct rb_frame f)
{
	uint64_t h, v;
	struct rb_frame *def;

	f.id = 0;
	h = fnv64(&f.name, sizeof f.name, 0xcbf29ce484222325ull);
	h = fnv64(&f.file, sizeof f.file, h);
	h = fnv64(&f.module, sizeof f.module, h);
	h = fnv64(&f.line, sizeof f.line, h);
	h = fnv64(&f.first_line, sizeof f.first_line, h);
	h = fnv64(&f.native, sizeof f.native, h);
	h = fnv64(&f.other, sizeof f.other, h);
	for (;; h++) {
		if (!hashmap_get(&m->frame_by_hash, h, &v))
			break;
		if (frame_same(&m->frames[v], &f))
			return m->frames[v].id;
	}
	f.id = m->frame_base + (uint32_t)m->nframes;
	if (!reserve((void **)&m->frames, m->nframes, &m->frames_cap, sizeof *m->frames) ||
	    (def = push((void **)&b->frames, &b->nframes, &b->frames_cap, sizeof *def)) == NULL)
		return UINT32_MAX;
	if (!hashmap_put(&m->frame_by_hash, h, m->nframes)) {
		b->nframes--;
		return UINT32_MAX;
	}
	*def = f;
	m->frames[m->nframes++] = f;
	return f.id;
}

/* The recording's frame of a stack-table frame: its code named by the
 * aggregator ("?" if it went without its stacks folding, as snapshots
 * show it). */
static uint32_t table_frame_id(struct record_model *m, struct rec_bucket *b,
                               const struct aggregator *agg, uint32_t fid)
{
	const struct stack_table *t = aggregator_stack_table(agg);
	struct snap_frame d = { .name = "?", .file = "", .module = "" };
	struct rb_frame f = { .line = 0 };

	if (fid == STACK_FRAME_OTHER) {
		d = (struct snap_frame){ .name = "[other stacks]", .file = "", .module = "",
		                         .other = true };
	} else {
		d.line = t->frames[fid].line;
		(void)aggregator_describe_frame(agg, t->frames[fid].code_id,
		                                t->frames[fid].line, &d);
	}
	f.name = string_id(m, b, d.name);
	f.file = string_id(m, b, d.file != NULL ? d.file : "");
	f.module = string_id(m, b, d.module != NULL ? d.module : "");
	if (f.name == UINT32_MAX || f.file == UINT32_MAX || f.module == UINT32_MAX)
		return UINT32_MAX;
	f.line = d.line;
	f.first_line = d.first_line;
	f.native = d.native;
	f.other = d.other;
	return frame_id(m, b, f);
}

static uint32_t stack_id(struct record_model *m, struct rec_bucket *b, uint32_t parent,
                         uint32_t frame, uint32_t depth)
{
	uint64_t key = (uint64_t)parent << 32 | frame, v;
	struct rb_stack *def;

	if (hashmap_get(&m->stack_by_key, key, &v))
		return (uint32_t)v;
	def = push((void **)&b->stacks, &b->nstacks, &b->stacks_cap, sizeof *def);
	if (def == NULL)
		return UINT32_MAX;
	if (!hashmap_put(&m->stack_by_key, key, m->nstacks)) {
		b->nstacks--;
		return UINT32_MAX;
	}
	*def = (struct rb_stack){ .id = m->nstacks, .parent = parent, .frame = frame,
	                          .depth = depth };
	return m->nstacks++;
}

/* The node cache follows the table: a fold renumbers its nodes. */
static bool node_cache_fit(struct record_model *m, const struct stack_table *t)
{
	if (m->node_gen != t->gen) {
		if (m->node_stack != NULL)
			memset(m->node_stack, 0, m->node_cap * sizeof *m->node_stack);
		m->node_gen = t->gen;
	}
	if (t->nnodes <= m->node_cap)
		return true;
	size_t cap = t->nnodes * 2;
	uint32_t *q = realloc(m->node_stack, cap * sizeof *q);
	if (q == NULL)
		return false;
	memset(q + m->node_cap, 0, (cap - m->node_cap) * sizeof *q);
	m->node_stack = q;
	m->node_cap = cap;
	return true;
}

/* The recording's stack of a table node: its uncached ancestors are
 * defined outermost first.  UINT32_MAX on OOM. */
static uint32_t node_id(struct record_model *m, struct rec_bucket *b,
                        const struct aggregator *agg, uint32_t node)
{
	const struct stack_table *t = aggregator_stack_table(agg);
	size_t n = 0;
	uint32_t x = node, id;

	for (; x != STACK_ROOT && m->node_stack[x] == 0; x = t->nodes[x].parent) {
		if (!reserve((void **)&m->chain, n, &m->chain_cap, sizeof *m->chain))
			return UINT32_MAX;
		m->chain[n++] = x;
	}
	id = x == STACK_ROOT ? 0 : m->node_stack[x] - 1;
	while (n-- > 0) {
		const struct stack_node *sn = &t->nodes[m->chain[n]];
		uint32_t f = table_frame_id(m, b, agg, sn->frame);

		if (f == UINT32_MAX || (id = stack_id(m, b, id, f, sn->depth)) == UINT32_MAX)
			return UINT32_MAX;
		m->node_stack[m->chain[n]] = id + 1;
	}
	return id;
}

static uint32_t thread_id(struct record_model *m, struct rec_bucket *b,
                          const struct aggregator *agg, pid_t tid, pid_t pid)
{
	uint64_t key = (uint64_t)(uint32_t)tid << 32 | (uint32_t)pid, v;
	struct rb_thread *def;
	uint32_t name;

	if (hashmap_get(&m->thread_by_key, key, &v))
		return (uint32_t)v;
	name = string_id(m, b, aggregator_thread_name(agg, tid));
	if (name == UINT32_MAX)
		return UINT32_MAX;
	def = push((void **)&b->threads, &b->nthreads, &b->threads_cap, sizeof *def);
	if (def == NULL)
		return UINT32_MAX;
	if (!hashmap_put(&m->thread_by_key, key, m->nthreads)) {
		b->nthreads--;
		return UINT32_MAX;
	}
	*def = (struct rb_thread){ .id = m->nthreads, .tid = tid, .pid = pid, .name = name };
	return m->nthreads++;
}

/* -s: a process's command line and Python version, the first bucket the
 * follower's report is in (it may come after the process's first
 * samples).  false on OOM. */
static bool describe_process(struct record_model *m, struct rec_bucket *b,
                             const struct aggregator *agg, pid_t pid)
{
	const char *command, *python;
	struct rb_process *def;
	uint64_t v;
	pid_t ppid;

	if (pid <= 0 || hashmap_get(&m->described, (uint32_t)pid, &v) ||
	    !aggregator_process_info(agg, pid, &ppid, &command, &python))
		return true;
	def = push((void **)&b->processes, &b->nprocesses, &b->processes_cap, sizeof *def);
	if (def == NULL || !hashmap_put(&m->described, (uint32_t)pid, 1))
		return false;
	*def = (struct rb_process){ .pid = pid, .ppid = ppid,
	                            .command = string_id(m, b, command),
	                            .python = string_id(m, b, python) };
	return def->command != UINT32_MAX && def->python != UINT32_MAX;
}

/* ---- buckets ------------------------------------------------------------ */

/* Provisional split shares are added and taken back around each snapshot
 * (aggregator.h): what is left of them in a cell is rounding, below the
 * file's unit. */
static bool split_moved(const struct snap_split *s)
{
	const double eps = 0.5 / RECORD_SPLIT_PER_SAMPLE;

	return fabs(s->python) > eps || fabs(s->native) > eps || fabs(s->system) > eps ||
	       fabs(s->waiting) > eps || fabs(s->cpu_wait) > eps || fabs(s->gil_wait) > eps ||
	       s->mem_growth || s->mem_shrink || s->minflt || s->majflt;
}

/* Two nodes may be one stack here: code objects the recording cannot
 * tell apart (the same function, file and lines: a module executed
 * twice, a code read again under a new id) are separate nodes in the
 * stack table.  Their cells add up into one row. */
static bool add_row(struct record_model *m, struct rec_bucket *b,
                    const struct aggregator *agg, const struct stack_cell *c,
                    const struct stack_bucket *k)
{
	struct rb_row *row;
	uint32_t stack = node_id(m, b, agg, c->node);
	uint32_t thread = thread_id(m, b, agg, c->tid, c->pid);
	uint64_t key = (uint64_t)stack << 32 | thread, idx;

	if (stack == UINT32_MAX || thread == UINT32_MAX)
		return false;
	if (hashmap_get(&m->row_by_key, key, &idx)) {
		row = &b->rows[idx];
		row->samples += k->samples;
		row->ns += k->ns;
		snap_split_add(&row->split, &k->split);
		return true;
	}
	if (!hashmap_get(&m->seen_in_bucket, thread, &idx)) {
		struct rb_seen *seen = push((void **)&b->seen, &b->nseen, &b->seen_cap,
		                            sizeof *seen);

		if (seen == NULL || !hashmap_put(&m->seen_in_bucket, thread, 1))
			return false;
		*seen = (struct rb_seen){ .thread = thread, .pid = c->pid };
		if (!describe_process(m, b, agg, c->pid))
			return false;
	}
	row = push((void **)&b->rows, &b->nrows, &b->rows_cap, sizeof *row);
	if (row == NULL || !hashmap_put(&m->row_by_key, key, b->nrows - 1))
		return false;
	*row = (struct rb_row){ .stack = stack, .thread = thread, .samples = k->samples,
	                        .ns = k->ns, .split = k->split };
	return true;
}

struct rec_bucket *record_model_take(struct record_model *m, struct aggregator *agg)
{
	const struct stack_table *t = aggregator_stack_table(agg);
	struct rec_bucket *b = calloc(1, sizeof *b);
	bool ok;

	if (t->bkt == NULL) { /* aggregator_keep_buckets was not called */
		free(b);
		return NULL;
	}
	if (m->nstrings > m->cap || m->nframes > m->cap ||
	    hashmap_count(&m->stack_by_key) > 2 * m->cap ||
	    hashmap_count(&m->thread_by_key) > m->cap / 2) {
		forget_definitions(m);
		m->forgets++;
	}
	ok = b != NULL && node_cache_fit(m, t);
	/* As many rows as last time, in one allocation (a bucket's arrays
	 * are allocated afresh: the writer frees them). */
	if (ok && m->rows_hint > 0) {
		b->rows = malloc(m->rows_hint * sizeof *b->rows);
		b->rows_cap = b->rows != NULL ? m->rows_hint : 0;
	}
	hashmap_clear(&m->row_by_key);
	hashmap_clear(&m->seen_in_bucket);
	for (size_t i = 0; ok && i < t->ncells; i++) {
		const struct stack_bucket *k = &t->bkt[i];

		if (k->samples != 0 || split_moved(&k->split))
			ok = add_row(m, b, agg, &t->cells[i], k);
	}
	if (!ok) {
		record_bucket_free(b);
		return NULL;
	}
	b->id = m->next_bucket++;
	m->rows_hint = b->nrows;
	aggregator_close_bucket(agg);
	return b;
}

void record_bucket_free(struct rec_bucket *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->nstrings; i++)
		free(b->strings[i].text);
	free(b->strings);
	free(b->frames);
	free(b->stacks);
	free(b->threads);
	free(b->rows);
	free(b->seen);
	free(b->processes);
	free(b);
}
