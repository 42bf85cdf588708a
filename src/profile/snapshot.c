/* snapshot.c - freeing a snapshot and copying the strings its rows show
 * into one block it owns (snapshot.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile/mem_kept.h"

void snapshot_free(struct snapshot *s)
{
	if (s == NULL)
		return;
	free(s->funcs);
	free(s->lines);
	free(s->threads);
	free(s->processes);
	free(s->callees);
	free(s->stack_frames);
	free(s->stack_nodes);
	free(s->stacks);
	free(s->stack_folded_rows);
	s->stack_folded_rows = NULL;
	s->nstack_folded_rows = 0;
	s->stack_frames = NULL;
	s->stack_nodes = NULL;
	s->stacks = NULL;
	s->nstack_frames = s->nstack_nodes = s->nstacks = 0;
	s->callees = NULL;
	s->ncallees = 0;
	s->processes = NULL;
	s->nprocesses = 0;
	s->funcs = NULL;
	s->lines = NULL;
	s->threads = NULL;
	s->nfuncs = s->nlines = s->nthreads = 0;
	free(s->strings);
	s->strings = NULL;
}

/* Where snapshot_own_strings stands: sizing (block NULL) or copying.
 * Each distinct pointer is copied once (rows share interned names). */
struct str_pass {
	struct hashmap seen; /* source pointer -> offset in block */
	char *block;
	size_t used, cap;
};

static void own_one(struct str_pass *p, const char **field)
{
	uint64_t off;
	if (*field == NULL)
		return;
	if (!hashmap_get(&p->seen, (uintptr_t)*field, &off)) {
		off = p->used;
		size_t len = strlen(*field) + 1;
		/* The copying pass re-inserts the same keys into the same
		 * table, so it cannot need more than the sizing pass found;
		 * should it, the field keeps its old pointer rather than
		 * overrun. */
		if (p->block != NULL && off + len > p->cap)
			return;
		/* A failed put only costs a second copy of this string. */
		(void)hashmap_put(&p->seen, (uintptr_t)*field, off);
		if (p->block != NULL)
			memcpy(p->block + off, *field, len);
		p->used += len;
	}
	if (p->block != NULL)
		*field = p->block + off;
}

static void own_all(struct snapshot *s, struct str_pass *p)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		own_one(p, &s->funcs[i].name);
		own_one(p, &s->funcs[i].file);
		own_one(p, &s->funcs[i].module);
	}
	for (size_t i = 0; i < s->nlines; i++) {
		own_one(p, &s->lines[i].name);
		own_one(p, &s->lines[i].file);
		own_one(p, &s->lines[i].module);
	}
	for (size_t i = 0; i < s->ncallees; i++) {
		own_one(p, &s->callees[i].caller_file);
		own_one(p, &s->callees[i].name);
		own_one(p, &s->callees[i].file);
		own_one(p, &s->callees[i].module);
	}
	for (size_t i = 0; i < s->nstack_frames; i++) {
		own_one(p, &s->stack_frames[i].name);
		own_one(p, &s->stack_frames[i].file);
		own_one(p, &s->stack_frames[i].module);
	}
	for (size_t i = 0; i < s->nstack_folded_rows; i++) {
		own_one(p, &s->stack_folded_rows[i].name);
		own_one(p, &s->stack_folded_rows[i].file);
		own_one(p, &s->stack_folded_rows[i].module);
		own_one(p, &s->stack_folded_rows[i].caller_file);
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		own_one(p, &s->threads[i].name);
		own_one(p, &s->threads[i].py_name);
		own_one(p, &s->threads[i].top_func);
	}
	for (size_t i = 0; i < s->nprocesses; i++) {
		own_one(p, &s->processes[i].command);
		own_one(p, &s->processes[i].python);
		own_one(p, &s->processes[i].top_func);
	}
}

bool snapshot_own_strings(struct snapshot *s)
{
	struct str_pass p = { .block = NULL };
	hashmap_init(&p.seen);
	own_all(s, &p); /* sizes */
	p.block = malloc(p.used ? p.used : 1);
	if (p.block == NULL) {
		hashmap_destroy(&p.seen);
		return false;
	}
	hashmap_clear(&p.seen);
	p.cap = p.used;
	p.used = 0;
	own_all(s, &p); /* copies, with the same offsets */
	hashmap_destroy(&p.seen);
	free(s->strings);
	s->strings = p.block;
	return true;
}

void snap_split_add(struct snap_split *to, const struct snap_split *d)
{
	to->python += d->python;
	to->native += d->native;
	to->system += d->system;
	to->waiting += d->waiting;
	to->cpu_wait += d->cpu_wait;
	to->gil_wait += d->gil_wait;
	to->mem_growth += d->mem_growth;
	to->mem_shrink += d->mem_shrink;
	to->minflt += d->minflt;
	to->majflt += d->majflt;
}

int64_t snap_mem_net(const struct snap_split *s)
{
	return mem_net(s->mem_growth, s->mem_shrink);
}

void snap_counts_add(struct snap_counts *to, const struct snap_counts *c)
{
	to->own += c->own;
	to->total += c->total;
	to->own_win += c->own_win;
	to->total_win += c->total_win;
	to->own_s += c->own_s;
	to->total_s += c->total_s;
	snap_split_add(&to->split, &c->split);
	snap_split_add(&to->split_win, &c->split_win);
	to->mem_kept += c->mem_kept;
}

const char *snapshot_verdict_word(enum snap_verdict v)
{
	switch (v) {
	case VERDICT_CPU: return "CPU-bound";
	case VERDICT_SYSTEM: return "system-bound";
	case VERDICT_MEMORY: return "memory-bound";
	case VERDICT_WAITING: return "waiting";
	case VERDICT_STARVED: return "starved";
	case VERDICT_THROTTLED: return "throttled";
	case VERDICT_NONE: break;
	}
	return "";
}

/* Own desc, then total desc; 0 on a tie. */
static int counts_cmp(const struct snap_counts *a,
                          const struct snap_counts *b)
{
	if (a->own != b->own)
		return a->own > b->own ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return 0;
}

/* Ties are broken down to a total order so that the output does not
 * depend on qsort's whims: functions by name, file, line; lines by file,
 * line, name. */
int snapshot_func_cmp(const void *pa, const void *pb)
{
	const struct snap_func *a = pa, *b = pb;
	int r = counts_cmp(&a->c, &b->c);
	if (r == 0)
		r = strcmp(a->name, b->name);
	if (r == 0)
		r = strcmp(a->file, b->file);
	if (r == 0)
		r = (a->line > b->line) - (a->line < b->line);
	return r;
}

int snapshot_line_cmp(const void *pa, const void *pb)
{
	const struct snap_line *a = pa, *b = pb;
	int r = counts_cmp(&a->c, &b->c);
	if (r == 0)
		r = strcmp(a->file, b->file);
	if (r == 0)
		r = (a->line > b->line) - (a->line < b->line);
	if (r == 0)
		r = strcmp(a->name, b->name);
	return r;
}

static int caller_cmp(const char *afile, int aline, const char *bfile,
                      int bline)
{
	int c = strcmp(afile != NULL ? afile : "", bfile != NULL ? bfile : "");
	return c != 0 ? c : (aline > bline) - (aline < bline);
}

int snapshot_callee_cmp(const void *pa, const void *pb)
{
	const struct snap_callee *a = pa, *b = pb;
	int c = caller_cmp(a->caller_file, a->caller_line, b->caller_file,
	                   b->caller_line);
	if (c != 0)
		return c;
	if (a->c.own != b->c.own)
		return a->c.own < b->c.own ? 1 : -1;
	return strcmp(a->name != NULL ? a->name : "",
	              b->name != NULL ? b->name : "");
}

const struct snap_callee *snapshot_callees_of(const struct snapshot *s,
                                              const char *file, int line,
                                              size_t *n)
{
	size_t lo = 0, hi = s->ncallees, end;
	*n = 0;
	/* The first callee not before file:line. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct snap_callee *c = &s->callees[mid];
		if (caller_cmp(c->caller_file, c->caller_line, file, line) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < s->ncallees; end++)
		if (caller_cmp(s->callees[end].caller_file,
		               s->callees[end].caller_line, file, line) != 0)
			break;
	*n = end - lo;
	return *n > 0 ? &s->callees[lo] : NULL;
}
