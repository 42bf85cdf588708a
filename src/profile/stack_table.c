/* stack_table.c - interning stacks as prefix-tree nodes and counting
 * samples per (stack, thread); folding the rarest (stack_table.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/stack_table.h"

#include <stdlib.h>
#include <string.h>

static uint64_t st_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

/* Room for one more of elem-byte items in *items (cap *cap); false on
 * OOM. */
static bool st_reserve(void **items, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return true;
	size_t ncap = *cap ? *cap * 2 : 256;
	void *ni = realloc(*items, ncap * elem);
	if (ni == NULL)
		return false;
	*items = ni;
	*cap = ncap;
	return true;
}

/* The root, "[other stacks]" and its frame: present in every table. */
static bool st_add_fixed(struct stack_table *t)
{
	if (!st_reserve((void **)&t->frames, 0, &t->frames_cap, sizeof *t->frames) ||
	    !st_reserve((void **)&t->nodes, 0, &t->nodes_cap, sizeof *t->nodes))
		return false;
	t->frames[0] = (struct stack_frame){ 0, 0 };
	t->nframes = 1;
	t->nodes[STACK_ROOT] = (struct stack_node){ 0, 0, 0 };
	t->nodes[STACK_OTHER] = (struct stack_node){ STACK_ROOT, STACK_FRAME_OTHER, 1 };
	t->nnodes = 2;
	return true;
}

bool stack_table_init(struct stack_table *t)
{
	*t = (struct stack_table){ .frames = NULL };
	hashmap_init(&t->frame_by_key);
	hashmap_init(&t->node_by_key);
	hashmap_init(&t->cell_by_key);
	return st_add_fixed(t);
}

void stack_table_destroy(struct stack_table *t)
{
	free(t->frames);
	free(t->nodes);
	free(t->cells);
	free(t->bkt);
	free(t->fold);
	hashmap_destroy(&t->frame_by_key);
	hashmap_destroy(&t->node_by_key);
	hashmap_destroy(&t->cell_by_key);
	*t = (struct stack_table){ .frames = NULL };
}

void stack_table_reset(struct stack_table *t)
{
	hashmap_clear(&t->cell_by_key);
	t->ncells = 0;
	t->folded = 0;
}

static uint32_t st_frame_id(struct stack_table *t, struct stack_frame f)
{
	uint64_t key = st_key(f.code_id, (uint32_t)f.line), v;
	if (hashmap_get(&t->frame_by_key, key, &v))
		return (uint32_t)v;
	if (t->nframes >= UINT32_MAX - 1 ||
	    !st_reserve((void **)&t->frames, t->nframes, &t->frames_cap, sizeof *t->frames) ||
	    !hashmap_put(&t->frame_by_key, key, t->nframes))
		return STACK_NO_CELL;
	t->frames[t->nframes] = f;
	return (uint32_t)t->nframes++;
}

static uint32_t st_child(struct stack_table *t, uint32_t parent, uint32_t frame)
{
	uint64_t key = st_key(parent, frame), v;
	if (hashmap_get(&t->node_by_key, key, &v))
		return (uint32_t)v;
	if (t->nnodes >= UINT32_MAX - 1 ||
	    !st_reserve((void **)&t->nodes, t->nnodes, &t->nodes_cap, sizeof *t->nodes) ||
	    !hashmap_put(&t->node_by_key, key, t->nnodes))
		return STACK_NO_CELL;
	t->nodes[t->nnodes] = (struct stack_node){
		.parent = parent, .frame = frame,
		.depth = t->nodes[parent].depth + 1 };
	return (uint32_t)t->nnodes++;
}

/* Intern frames[0..k) under node `from` (the node of the frames outside
 * them); path[i], when not NULL, receives the node of frames[i..). */
static uint32_t st_intern_under(struct stack_table *t, uint32_t from,
                                const struct stack_frame *frames, size_t k,
                                uint32_t *path)
{
	uint32_t node = from;
	/* Frames get their ids leaf first, as the aggregator resolves them:
	 * frame order is the order frames were first seen, which names a
	 * line after the first function seen on it (stack_derive.h).  path
	 * holds the ids until the nodes overwrite them. */
	for (size_t i = 0; i < k; i++) {
		uint32_t f = st_frame_id(t, frames[i]);
		if (f == STACK_NO_CELL)
			return STACK_NO_CELL;
		if (path != NULL)
			path[i] = f;
	}
	/* From the outermost frame in: a parent exists before its child. */
	for (size_t i = k; i-- > 0;) {
		uint32_t f = path != NULL ? path[i] : st_frame_id(t, frames[i]);
		if (f == STACK_NO_CELL)
			return STACK_NO_CELL;
		node = st_child(t, node, f);
		if (node == STACK_NO_CELL)
			return STACK_NO_CELL;
		t->hashed++;
		if (path != NULL)
			path[i] = node;
	}
	return node;
}

uint32_t stack_table_intern(struct stack_table *t, const struct stack_frame *frames,
                            size_t n)
{
	return st_intern_under(t, STACK_ROOT, frames, n, NULL);
}

/* How many outer frames raw[0..n) shares with the memo's stack. */
static size_t st_shared_outer(const struct stack_memo *m, const struct stack_table *t,
                              const unsigned char *raw, size_t n)
{
	size_t k = 0, sz = sizeof(struct rec_frame);
	if (!m->valid || m->gen != t->gen)
		return 0;
	while (k < n && k < m->n &&
	       memcmp(raw + (n - 1 - k) * sz, &m->raw[m->n - 1 - k], sz) == 0)
		k++;
	return k;
}

/* Room for n frames in the memo; false on OOM. */
static bool st_memo_reserve(struct stack_memo *m, size_t n)
{
	if (n <= m->cap)
		return true;
	struct rec_frame *nr = realloc(m->raw, n * sizeof *nr);
	if (nr != NULL)
		m->raw = nr;
	uint32_t *np = nr != NULL ? realloc(m->path, n * sizeof *np) : NULL;
	if (np == NULL)
		return false;
	m->path = np;
	m->cap = n;
	return true;
}

bool stack_memo_same(const struct stack_memo *m, const struct stack_table *t,
                     const void *raw, size_t n, uint32_t *node)
{
	if (!m->valid || m->gen != t->gen || m->n != n || n == 0 ||
	    memcmp(m->raw, raw, n * sizeof *m->raw) != 0)
		return false;
	*node = m->path[0];
	return true;
}

uint32_t stack_table_intern_memo(struct stack_table *t, struct stack_memo *m,
                                 const void *raw, const struct stack_frame *frames,
                                 size_t n)
{
	size_t shared = st_shared_outer(m, t, raw, n);
	if (n == 0)
		return STACK_ROOT;
	if (shared == n && n == m->n)
		return m->path[0];
	/* The inner frames under the node of the shared outer ones; the
	 * memo's path moves with the stack (its outer part stays put). */
	uint32_t from = shared > 0 ? m->path[m->n - shared] : STACK_ROOT;
	bool keep = st_memo_reserve(m, n);
	if (keep && shared > 0 && m->n != n)
		memmove(m->path + n - shared, m->path + m->n - shared,
		        shared * sizeof *m->path);
	m->valid = false;
	uint32_t node = st_intern_under(t, from, frames, n - shared,
	                                keep ? m->path : NULL);
	if (!keep || node == STACK_NO_CELL)
		return node;
	memcpy(m->raw, raw, n * sizeof *m->raw);
	m->n = n;
	m->gen = t->gen;
	m->valid = true;
	return node;
}

void stack_memo_free(struct stack_memo *m)
{
	free(m->raw);
	free(m->path);
	*m = (struct stack_memo){ .raw = NULL };
}

/* The bucket figures have room for every cell the cells have. */
static bool st_bkt_fit(struct stack_table *t)
{
	struct stack_bucket *b;

	if (t->bkt == NULL || t->bkt_cap >= t->cells_cap)
		return true;
	b = realloc(t->bkt, t->cells_cap * sizeof *b);
	if (b == NULL)
		return false;
	t->bkt = b;
	t->bkt_cap = t->cells_cap;
	return true;
}

bool stack_table_keep_buckets(struct stack_table *t)
{
	size_t cap = t->cells_cap ? t->cells_cap : 64;

	if (t->bkt != NULL)
		return true;
	t->bkt = calloc(cap, sizeof *t->bkt);
	t->bkt_cap = t->bkt != NULL ? cap : 0;
	return t->bkt != NULL;
}

void stack_table_close_bucket(struct stack_table *t)
{
	if (t->bkt != NULL && t->ncells > 0)
		memset(t->bkt, 0, t->ncells * sizeof *t->bkt);
}

/* Room for the bucket figures after a fold or a merge, taken before
 * either changes anything (so that OOM leaves all as it was); NULL is
 * an answer when buckets are not kept (*ok says which). */
static struct stack_bucket *st_bkt_alloc(const struct stack_table *t, bool *ok)
{
	struct stack_bucket *to = NULL;

	if (t->bkt != NULL)
		to = calloc(t->bkt_cap ? t->bkt_cap : 1, sizeof *to);
	*ok = t->bkt == NULL || to != NULL;
	return to;
}

/* After a fold or a merge (cmap[old cell] = its new cell, n old cells):
 * each bucket figure goes where its cell went (into `to`, from
 * st_bkt_alloc, which the table owns from now on). */
static void st_bkt_remap(struct stack_table *t, struct stack_bucket *to,
                         const uint32_t *cmap, size_t n)
{
	if (t->bkt == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		struct stack_bucket *d = &to[cmap[i]];

		d->samples += t->bkt[i].samples;
		d->ns += t->bkt[i].ns;
		snap_split_add(&d->split, &t->bkt[i].split);
	}
	free(t->bkt);
	t->bkt = to;
}

static uint32_t st_cell(struct stack_table *t, uint32_t node, pid_t tid, pid_t pid)
{
	uint64_t key = st_key(node, (uint32_t)tid), v;
	if (hashmap_get(&t->cell_by_key, key, &v))
		return (uint32_t)v;
	if (t->ncells >= STACK_NO_CELL - 1 ||
	    !st_reserve((void **)&t->cells, t->ncells, &t->cells_cap, sizeof *t->cells) ||
	    !st_bkt_fit(t) || !hashmap_put(&t->cell_by_key, key, t->ncells))
		return STACK_NO_CELL;
	t->cells[t->ncells] = (struct stack_cell){ .node = node, .tid = tid, .pid = pid };
	if (t->bkt != NULL)
		t->bkt[t->ncells] = (struct stack_bucket){ 0 };
	return (uint32_t)t->ncells++;
}

uint32_t stack_table_cell(struct stack_table *t, uint32_t node, pid_t tid, pid_t pid)
{
	return node < t->nnodes ? st_cell(t, node, tid, pid) : STACK_NO_CELL;
}

uint32_t stack_table_count(struct stack_table *t, uint32_t node, pid_t tid,
                           pid_t pid, uint64_t w_ns)
{
	uint32_t c = stack_table_cell(t, node, tid, pid);
	if (c == STACK_NO_CELL)
		return c;
	struct stack_cell *cell = &t->cells[c];
	cell->samples++;
	cell->samples_win++;
	cell->ns += w_ns;
	cell->stamp = ++t->serial;
	if (t->bkt != NULL) {
		t->bkt[c].samples++;
		t->bkt[c].ns += w_ns;
	}
	return c;
}

void stack_table_split(struct stack_table *t, uint32_t cell,
                       const struct snap_split *d, bool win)
{
	if (cell >= t->ncells)
		return;
	snap_split_add(&t->cells[cell].split, d);
	if (t->bkt != NULL)
		snap_split_add(&t->bkt[cell].split, d);
	if (win)
		snap_split_add(&t->cells[cell].split_win, d);
}

void stack_table_close_window(struct stack_table *t)
{
	for (size_t i = 0; i < t->ncells; i++) {
		t->cells[i].samples_win = 0;
		t->cells[i].split_win = (struct snap_split){ 0 };
	}
}

void stack_table_mark_kept(struct stack_table *t, const struct mem_kept_clock *clk)
{
	for (size_t i = 0; i < t->ncells; i++)
		mem_kept_mark(&t->cells[i].kept, clk, snap_mem_net(&t->cells[i].split));
}

bool stack_table_over_cap(const struct stack_table *t)
{
	return t->ncells > STACK_MAX_CELLS || t->nnodes > STACK_MAX_NODES;
}

static void st_cell_merge(struct stack_cell *o, const struct stack_cell *from)
{
	o->samples += from->samples;
	o->samples_win += from->samples_win;
	o->ns += from->ns;
	if (from->stamp > o->stamp)
		o->stamp = from->stamp;
	snap_split_add(&o->split, &from->split);
	snap_split_add(&o->split_win, &from->split_win);
	mem_kept_add(&o->kept, &from->kept);
}

/* Cells renumbered through nmap (if any), the cells of threads gone (if
 * a test is given) moved to their process's, and those now equal merged;
 * cmap[old] = new.  The one way cells are re-keyed in place. */
static void st_merge_cells(struct stack_table *t, const uint32_t *nmap,
                           stack_tid_gone gone, void *ctx, uint32_t *cmap)
{
	size_t kept = 0;
	uint64_t idx;
	hashmap_clear(&t->cell_by_key);
	for (size_t i = 0; i < t->ncells; i++) {
		struct stack_cell c = t->cells[i]; /* read before kept <= i is written */
		if (nmap != NULL)
			c.node = nmap[c.node];
		if (gone != NULL && c.tid > 0 && gone(ctx, c.tid))
			c.tid = -c.pid;
		uint64_t key = st_key(c.node, (uint32_t)c.tid);
		if (hashmap_get(&t->cell_by_key, key, &idx)) {
			st_cell_merge(&t->cells[idx], &c);
			cmap[i] = (uint32_t)idx;
			continue;
		}
		t->cells[kept] = c;
		/* Cannot fail: the map held more keys a moment ago. */
		(void)hashmap_put(&t->cell_by_key, key, kept);
		cmap[i] = (uint32_t)kept++;
	}
	t->ncells = kept;
}

uint32_t *stack_table_merge_gone(struct stack_table *t, stack_tid_gone gone, void *ctx)
{
	size_t n = t->ncells;
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = t->cells[i].tid > 0 && gone(ctx, t->cells[i].tid);
	uint32_t *cmap = any ? malloc(n * sizeof *cmap) : NULL;
	bool bkt_ok;
	struct stack_bucket *bkt = cmap != NULL ? st_bkt_alloc(t, &bkt_ok) : NULL;
	if (cmap == NULL || !bkt_ok) {
		free(cmap);
		return NULL;
	}
	st_merge_cells(t, NULL, gone, ctx, cmap);
	st_bkt_remap(t, bkt, cmap, n);
	return cmap;
}

/* ---- folding ------------------------------------------------------------ */

/* A cell's rank for keeping: most samples, then most recently counted. */
struct st_rank {
	uint64_t samples, stamp;
	uint32_t cell;
};

static int st_cmp_rank(const void *pa, const void *pb)
{
	const struct st_rank *x = pa, *y = pb;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->stamp != y->stamp)
		return x->stamp > y->stamp ? -1 : 1;
	return (x->cell > y->cell) - (x->cell < y->cell);
}

/* dead_node[i]: node i's stack holds a dead code.  Parents come before
 * their children, so one pass in order suffices. */
static void st_mark_dead(const struct stack_table *t, stack_code_dead dead,
                         void *ctx, bool *dead_node)
{
	for (size_t i = 2; i < t->nnodes && dead != NULL; i++) {
		const struct stack_node *n = &t->nodes[i];
		dead_node[i] = dead_node[n->parent] ||
		               dead(ctx, t->frames[n->frame].code_id);
	}
}

/* keep_cell[c] for the best `keep` live cells, and every "[other stacks]"
 * cell; then live_node[] = the nodes they stand on and their ancestors.
 * Returns how many nodes live. */
static size_t st_choose(const struct stack_table *t, const bool *dead_node,
                        size_t keep, struct st_rank *r, bool *keep_cell,
                        bool *live_node)
{
	size_t nr = 0, live = 0;
	memset(keep_cell, 0, t->ncells * sizeof *keep_cell);
	memset(live_node, 0, t->nnodes * sizeof *live_node);
	for (size_t c = 0; c < t->ncells; c++) {
		const struct stack_cell *cell = &t->cells[c];
		if (cell->node == STACK_OTHER || cell->node == STACK_ROOT)
			keep_cell[c] = true;
		else if (!dead_node[cell->node])
			r[nr++] = (struct st_rank){ cell->samples, cell->stamp, (uint32_t)c };
	}
	qsort(r, nr, sizeof *r, st_cmp_rank);
	for (size_t k = 0; k < nr && k < keep; k++)
		keep_cell[r[k].cell] = true;
	live_node[STACK_ROOT] = live_node[STACK_OTHER] = true;
	for (size_t c = 0; c < t->ncells; c++)
		for (uint32_t n = t->cells[c].node; keep_cell[c] && !live_node[n];
		     n = t->nodes[n].parent)
			live_node[n] = true;
	for (size_t i = 0; i < t->nnodes; i++)
		live += live_node[i];
	return live;
}

/* Renumber the live nodes (in place: a node moves down only) and their
 * frames (into `to`: a frame's first live node may come after a
 * higher-numbered frame's); rebuild the maps. */
/* The frames live nodes use move down in place of their order
 * (st_intern_under says why the order matters); fmap[old] = new. */
static size_t st_compact_frames(struct stack_table *t, const bool *live_node,
                                uint32_t *fmap, struct stack_frame *to)
{
	memset(fmap, 0xff, t->nframes * sizeof *fmap);
	for (size_t i = 0; i < t->nnodes; i++)
		if (live_node[i])
			fmap[t->nodes[i].frame] = 0;
	fmap[STACK_FRAME_OTHER] = STACK_FRAME_OTHER;
	to[STACK_FRAME_OTHER] = t->frames[STACK_FRAME_OTHER];
	hashmap_clear(&t->frame_by_key);
	size_t nf = 1, nfold = t->nfold ? 1 : 0;
	for (size_t i = 1; i < t->nframes; i++) {
		if (fmap[i] == UINT32_MAX)
			continue;
		to[nf] = t->frames[i];
		/* Moves down in place, like the frames; a marked frame is
		 * interned no more (stack_table_fold_frames). */
		uint8_t bits = i < t->nfold ? t->fold[i] : 0;
		if (i < t->nfold)
			t->fold[nfold++] = bits;
		if (bits == 0)
			/* Cannot fail: the map held more keys a moment ago. */
			(void)hashmap_put(&t->frame_by_key,
			                  st_key(to[nf].code_id, (uint32_t)to[nf].line), nf);
		fmap[i] = (uint32_t)nf++;
	}
	t->nfold = nfold;
	return nf;
}

static void st_compact_nodes(struct stack_table *t, const bool *live_node,
                             uint32_t *nmap, uint32_t *fmap,
                             struct stack_frame *to)
{
	size_t nf = st_compact_frames(t, live_node, fmap, to), nn = 0;
	nmap[STACK_ROOT] = STACK_ROOT; /* the root's own parent */
	hashmap_clear(&t->node_by_key);
	for (size_t i = 0; i < t->nnodes; i++) {
		if (!live_node[i])
			continue;
		struct stack_node n = t->nodes[i];
		n.frame = fmap[n.frame];
		n.parent = nmap[n.parent]; /* parents come first */
		nmap[i] = (uint32_t)nn;
		t->nodes[nn] = n;
		if (nn > STACK_OTHER)
			(void)hashmap_put(&t->node_by_key, st_key(n.parent, n.frame), nn);
		nn++;
	}
	free(t->frames);
	t->frames = to;
	t->frames_cap = t->nframes;
	t->nnodes = nn;
	t->nframes = nf;
}


/* The folded cells' sums, one per thread. */
struct st_others {
	struct stack_cell *sum; /* owned */
	uint32_t *where;        /* owned: the cell each sum joins */
	size_t n, cap;
};

/* Sum the folded cells per thread into o (cmap[folded cell] = its sum's
 * index); changes nothing in t.  false on OOM. */
static bool st_sum_folded(const struct stack_table *t, const bool *keep_cell,
                          struct st_others *o, uint32_t *cmap)
{
	struct hashmap by_tid;
	uint64_t idx;
	bool ok = true;
	hashmap_init(&by_tid);
	for (size_t i = 0; ok && i < t->ncells; i++) {
		const struct stack_cell *from = &t->cells[i];
		if (keep_cell[i])
			continue;
		if (!hashmap_get(&by_tid, (uint32_t)from->tid, &idx)) {
			idx = o->n;
			ok = st_reserve((void **)&o->sum, o->n, &o->cap, sizeof *o->sum) &&
			     hashmap_put(&by_tid, (uint32_t)from->tid, idx);
			if (!ok)
				break;
			o->sum[o->n++] = (struct stack_cell){ .node = STACK_OTHER,
				.tid = from->tid, .pid = from->pid };
		}
		st_cell_merge(&o->sum[idx], from);
		cmap[i] = (uint32_t)idx;
	}
	hashmap_destroy(&by_tid);
	o->where = ok ? malloc((o->n ? o->n : 1) * sizeof *o->where) : NULL;
	return o->where != NULL;
}

/* Kept cells move down in place (renumbered), then each thread's folded
 * sum joins its "[other stacks]" cell, made at the end if it had none
 * (there is room: at least one cell folded per sum).  cmap[old] = new. */
static void st_compact_cells(struct stack_table *t, const bool *keep_cell,
                             const uint32_t *nmap, uint32_t *cmap,
                             const struct st_others *o)
{
	size_t kept = 0, n = t->ncells;
	uint64_t idx;
	hashmap_clear(&t->cell_by_key);
	for (size_t i = 0; i < n; i++) {
		if (!keep_cell[i]) {
			t->folded += t->cells[i].samples > 0;
			continue;
		}
		t->cells[kept] = t->cells[i];
		t->cells[kept].node = nmap[t->cells[i].node];
		/* Cannot fail: the map held more keys a moment ago. */
		(void)hashmap_put(&t->cell_by_key,
		                  st_key(t->cells[kept].node, (uint32_t)t->cells[kept].tid), kept);
		cmap[i] = (uint32_t)kept++;
	}
	for (size_t k = 0; k < o->n; k++) {
		uint64_t key = st_key(STACK_OTHER, (uint32_t)o->sum[k].tid);
		if (!hashmap_get(&t->cell_by_key, key, &idx)) {
			idx = kept++;
			t->cells[idx] = (struct stack_cell){ .node = STACK_OTHER,
				.tid = o->sum[k].tid, .pid = o->sum[k].pid };
			(void)hashmap_put(&t->cell_by_key, key, idx);
		}
		st_cell_merge(&t->cells[idx], &o->sum[k]);
		o->where[k] = (uint32_t)idx;
	}
	for (size_t i = 0; i < n; i++)
		if (!keep_cell[i])
			cmap[i] = o->where[cmap[i]];
	t->ncells = kept;
}

uint32_t *stack_table_fold(struct stack_table *t, size_t keep,
                           stack_code_dead dead, void *ctx)
{
	return stack_table_fold_each(t, keep, dead, ctx, NULL, NULL);
}

static void st_tell_folded(const struct stack_table *t, const bool *keep_cell,
                           stack_cell_folds each, void *ectx)
{
	for (size_t i = 0; each != NULL && i < t->ncells; i++)
		if (!keep_cell[i] && t->cells[i].node != STACK_OTHER)
			each(ectx, t, &t->cells[i]);
}

uint32_t *stack_table_fold_each(struct stack_table *t, size_t keep,
                                stack_code_dead dead, void *ctx,
                                stack_cell_folds each, void *ectx)
{
	size_t n_old = t->ncells, nc = t->ncells ? t->ncells : 1, nn = t->nnodes;
	uint32_t *cmap = malloc(nc * sizeof *cmap);
	uint32_t *nmap = malloc(nn * sizeof *nmap);
	uint32_t *fmap = malloc(t->nframes * sizeof *fmap);
	struct st_rank *r = malloc(nc * sizeof *r);
	bool *keep_cell = malloc(nc), *live_node = malloc(nn);
	bool *dead_node = calloc(nn, 1);
	struct stack_frame *fto = malloc(t->nframes * sizeof *fto);
	struct st_others others = { .sum = NULL };
	bool bkt_ok;
	struct stack_bucket *bkt = st_bkt_alloc(t, &bkt_ok);
	bool ok = cmap && nmap && fmap && r && keep_cell && live_node &&
	          dead_node && fto && bkt_ok;
	if (ok) {
		st_mark_dead(t, dead, ctx, dead_node);
		/* Deep stacks bring many nodes per cell: keep fewer cells
		 * until the nodes fit too. */
		while (st_choose(t, dead_node, keep, r, keep_cell, live_node) >
		       STACK_MAX_NODES * 3 / 4 && keep > 0)
			keep /= 2;
		ok = st_sum_folded(t, keep_cell, &others, cmap);
	}
	if (ok) {
		st_tell_folded(t, keep_cell, each, ectx);
		st_compact_nodes(t, live_node, nmap, fmap, fto);
		st_compact_cells(t, keep_cell, nmap, cmap, &others);
		st_bkt_remap(t, bkt, cmap, n_old);
		t->gen++;
	} else {
		free(fto);
		free(bkt);
	}
	free(others.sum);
	free(others.where);
	free(nmap);
	free(fmap);
	free(r);
	free(keep_cell);
	free(live_node);
	free(dead_node);
	if (!ok) {
		free(cmap);
		return NULL;
	}
	return cmap;
}

/* ---- folding in frame space -------------------------------------------- */

/* Room for a fold mark per frame; false on OOM. */
static bool st_fold_fit(struct stack_table *t)
{
	if (t->nfold >= t->nframes)
		return true;
	uint8_t *f = realloc(t->fold, t->nframes);
	if (f == NULL)
		return false;
	memset(f + t->nfold, 0, t->nframes - t->nfold);
	t->fold = f;
	t->nfold = t->nframes;
	return true;
}

bool stack_table_fold_frames(struct stack_table *t, stack_frame_folds folds, void *ctx)
{
	const uint8_t all = STACK_FOLD_FUNC | STACK_FOLD_LINE | STACK_FOLD_NO_LINE;
	bool marked = false;
	if (!st_fold_fit(t))
		return false;
	for (size_t i = 1; i < t->nframes; i++) {
		/* Folded whole already (or the "[other]" frame). */
		if ((t->fold[i] & STACK_FOLD_FUNC) &&
		    (t->fold[i] & (STACK_FOLD_LINE | STACK_FOLD_NO_LINE)))
			continue;
		uint8_t bits = (uint8_t)(folds(ctx, t->frames[i].code_id, t->frames[i].line) & all);
		marked |= (bits & ~t->fold[i]) != 0;
		t->fold[i] |= bits;
	}
	if (!marked)
		return true;
	hashmap_clear(&t->frame_by_key);
	for (size_t i = 1; i < t->nframes; i++)
		if (t->fold[i] == 0)
			/* Cannot fail: the map held more keys a moment ago. */
			(void)hashmap_put(&t->frame_by_key,
			                  st_key(t->frames[i].code_id, (uint32_t)t->frames[i].line), i);
	/* The memos' nodes stand on frames no longer interned. */
	t->gen++;
	return true;
}

/* ---- frames of gone codes ---------------------------------------------- */

static bool st_folded_whole(uint8_t fold)
{
	return (fold & STACK_FOLD_FUNC) && (fold & (STACK_FOLD_LINE | STACK_FOLD_NO_LINE));
}

/* The "[other]" frame standing for whole-folded frames with these marks
 * (with a line or without: they derive differently), made if need be;
 * STACK_NO_CELL on OOM.  Marked, so never interned. */
static uint32_t st_other_frame(struct stack_table *t, uint8_t marks)
{
	for (size_t i = 1; i < t->nframes; i++)
		if (t->frames[i].code_id == STACK_CODE_OTHER && stack_table_frame_fold(t, (uint32_t)i) == marks)
			return (uint32_t)i;
	if (!st_reserve((void **)&t->frames, t->nframes, &t->frames_cap, sizeof *t->frames))
		return STACK_NO_CELL;
	t->frames[t->nframes++] = (struct stack_frame){ STACK_CODE_OTHER, 0 };
	if (!st_fold_fit(t)) {
		t->nframes--;
		return STACK_NO_CELL;
	}
	t->fold[t->nframes - 1] = marks;
	return (uint32_t)(t->nframes - 1);
}

/* fr[f] = the frame f becomes: itself, or the "[other]" frame of its
 * kind when its code went and it is folded whole.  false when none
 * changes, or on OOM. */
static bool st_gone_frames(struct stack_table *t, stack_code_dead dead, void *ctx,
                           uint32_t **fr)
{
	const uint8_t kinds[2] = { STACK_FOLD_FUNC | STACK_FOLD_LINE,
	                           STACK_FOLD_FUNC | STACK_FOLD_NO_LINE };
	uint32_t other[2] = { STACK_NO_CELL, STACK_NO_CELL };
	bool any = false;
	for (size_t i = 1; i < t->nframes && !any; i++)
		any = t->frames[i].code_id != STACK_CODE_OTHER &&
		      st_folded_whole((uint8_t)stack_table_frame_fold(t, (uint32_t)i)) &&
		      dead(ctx, t->frames[i].code_id);
	if (!any)
		return false;
	for (int k = 0; k < 2; k++)
		if ((other[k] = st_other_frame(t, kinds[k])) == STACK_NO_CELL)
			return false;
	*fr = malloc(t->nframes * sizeof **fr);
	if (*fr == NULL)
		return false;
	for (size_t i = 0; i < t->nframes; i++) {
		uint8_t f = (uint8_t)stack_table_frame_fold(t, (uint32_t)i);
		bool gone = i > 0 && t->frames[i].code_id != STACK_CODE_OTHER &&
		            st_folded_whole(f) && dead(ctx, t->frames[i].code_id);
		(*fr)[i] = !gone ? (uint32_t)i : other[(f & STACK_FOLD_LINE) ? 0 : 1];
	}
	return true;
}

/* Nodes renumbered through fr, those now equal merged (in place: parents
 * come first, and a node moves down only); nmap[old] = new. */
static void st_merge_nodes(struct stack_table *t, const uint32_t *fr, uint32_t *nmap)
{
	size_t kept = STACK_OTHER + 1;
	uint64_t v;
	nmap[STACK_ROOT] = STACK_ROOT;
	nmap[STACK_OTHER] = STACK_OTHER;
	hashmap_clear(&t->node_by_key);
	for (size_t i = STACK_OTHER + 1; i < t->nnodes; i++) {
		struct stack_node n = t->nodes[i];
		n.parent = nmap[n.parent];
		n.frame = fr[n.frame];
		uint64_t key = st_key(n.parent, n.frame);
		if (hashmap_get(&t->node_by_key, key, &v)) {
			nmap[i] = (uint32_t)v;
			continue;
		}
		t->nodes[kept] = n;
		/* Cannot fail: the map held more keys a moment ago. */
		(void)hashmap_put(&t->node_by_key, key, kept);
		nmap[i] = (uint32_t)kept++;
	}
	t->nnodes = kept;
}


uint32_t *stack_table_rewrite_gone(struct stack_table *t, stack_code_dead dead, void *ctx)
{
	uint32_t *fr = NULL;
	if (!st_gone_frames(t, dead, ctx, &fr))
		return NULL;
	size_t nc = t->ncells, nn = t->nnodes, nf = t->nframes;
	uint32_t *cmap = malloc((nc ? nc : 1) * sizeof *cmap);
	uint32_t *nmap = malloc(nn * sizeof *nmap), *nmap2 = malloc(nn * sizeof *nmap2);
	uint32_t *fmap = malloc(nf * sizeof *fmap);
	bool *live = malloc(nn);
	struct stack_frame *fto = malloc(nf * sizeof *fto);
	bool bkt_ok;
	struct stack_bucket *bkt = st_bkt_alloc(t, &bkt_ok);
	bool ok = cmap && nmap && nmap2 && fmap && live && fto && bkt_ok;
	if (ok) {
		st_merge_nodes(t, fr, nmap);
		st_merge_cells(t, nmap, NULL, NULL, cmap);
		st_bkt_remap(t, bkt, cmap, nc);
		/* The frames no node stands on any more go; nodes stay put. */
		memset(live, 1, t->nnodes);
		st_compact_nodes(t, live, nmap2, fmap, fto);
		/* The memos' nodes moved. */
		t->gen++;
	} else {
		free(fto);
		free(bkt);
		free(cmap);
		cmap = NULL;
	}
	free(fr);
	free(nmap);
	free(nmap2);
	free(fmap);
	free(live);
	return cmap;
}

/* The frames not marked, by their key again. */
static void st_index_frames(struct stack_table *t)
{
	hashmap_clear(&t->frame_by_key);
	for (size_t i = 1; i < t->nframes; i++)
		if (stack_table_frame_fold(t, (uint32_t)i) == 0)
			/* Cannot fail: as many keys at most as a moment ago. */
			(void)hashmap_put(&t->frame_by_key,
			                  st_key(t->frames[i].code_id, (uint32_t)t->frames[i].line), i);
}

void stack_table_recode(struct stack_table *t, stack_frame_recode recode, void *ctx)
{
	bool changed = false;
	for (size_t i = 1; i < t->nframes; i++) {
		struct stack_frame *f = &t->frames[i];
		uint32_t code = recode(ctx, f->code_id, stack_table_frame_fold(t, (uint32_t)i));
		changed |= code != f->code_id;
		f->code_id = code;
	}
	if (!changed)
		return;
	st_index_frames(t);
	/* A memo's raw frames name the old codes. */
	t->gen++;
}
