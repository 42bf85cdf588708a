/* stack_derive.c - functions and lines counted from the stacks
 * (stack_derive.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/stack_derive.h"

#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "profile/strtab.h"

/* Rows being derived, and the row of each frame (frames[] order). */
struct derive {
	struct strtab *keys;   /* owned: names and files by content */
	struct hashmap func_by_key, line_by_key;
	struct hashmap callee_by_key; /* line << 32 | func -> callee */
	uint32_t *callee_line, *callee_func; /* owned: each callee's rows */
	uint32_t *frame_func, *frame_line; /* owned; UINT32_MAX = no line */
	uint64_t *func_stamp, *line_stamp; /* owned: the stack that counted it */
	uint32_t other_func, other_line; /* the "[other]" rows; NO_LINE = none yet */
	struct hashmap folded_by_tid; /* tid -> 1 + its index in folded */
	struct snap_counts *folded;   /* owned: each thread's "[other stacks]"
	                                 samples (total, total_win, total_s) */
	size_t nfolded;
	size_t fcap, lcap, ccap; /* rows room: grown as rows come (far fewer
	                            than frames or stacks, as a rule) */
	struct stack_derived *out;
};

#define NO_LINE UINT32_MAX

static bool key_of(struct derive *d, const char *a, const char *b, uint32_t lo,
                   bool two, uint64_t *key)
{
	uint32_t ia, ib = lo;
	if (strtab_intern(d->keys, a, strlen(a), &ia) == NULL ||
	    (two && strtab_intern(d->keys, b, strlen(b), &ib) == NULL))
		return false;
	*key = (uint64_t)ia << 32 | ib;
	return true;
}

/* Room for row n in *rows (elem bytes each) and, if stamps, in its
 * stamp array, zeroed; false on OOM. */
static bool room(void **rows, uint64_t **stamps, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return true;
	size_t cap2 = *cap ? *cap * 2 : 64;
	void *r = realloc(*rows, cap2 * elem);
	if (r == NULL)
		return false;
	*rows = r;
	if (stamps != NULL) {
		uint64_t *s = realloc(*stamps, cap2 * sizeof *s);
		if (s == NULL)
			return false;
		memset(s + *cap, 0, (cap2 - *cap) * sizeof *s);
		*stamps = s;
	}
	*cap = cap2;
	return true;
}

/* The index of a new function (line) row, room made; false on OOM. */
static bool new_func(struct derive *d, uint64_t *v)
{
	struct stack_derived *o = d->out;
	if (!room((void **)&o->funcs, &d->func_stamp, &d->fcap, o->nfuncs, sizeof *o->funcs))
		return false;
	*v = o->nfuncs++;
	return true;
}

static bool new_line(struct derive *d, uint64_t *v)
{
	struct stack_derived *o = d->out;
	if (!room((void **)&o->lines, &d->line_stamp, &d->lcap, o->nlines, sizeof *o->lines))
		return false;
	*v = o->nlines++;
	return true;
}

/* A new callee row, with its line and function rows' slots. */
static bool new_callee(struct derive *d, uint64_t *v)
{
	struct stack_derived *o = d->out;
	size_t n = o->ncallees, cap = d->ccap;
	if (n == cap) {
		size_t cap2 = cap ? cap * 2 : 16;
		struct snap_callee *c = realloc(o->callees, cap2 * sizeof *c);
		if (c != NULL)
			o->callees = c;
		uint32_t *l = realloc(d->callee_line, cap2 * sizeof *l);
		if (l != NULL)
			d->callee_line = l;
		uint32_t *f = realloc(d->callee_func, cap2 * sizeof *f);
		if (f != NULL)
			d->callee_func = f;
		if (c == NULL || l == NULL || f == NULL)
			return false;
		d->ccap = cap2;
	}
	*v = o->ncallees++;
	return true;
}

/* The "[other]" row of the rows folded away (as the aggregator's row
 * 0): one of functions (lines == false) or of lines, made on first use
 * and kept apart from every named row.  false on OOM. */
static bool other_row(struct derive *d, bool lines, uint32_t *out)
{
	struct stack_derived *o = d->out;
	uint32_t *row = lines ? &d->other_line : &d->other_func;
	uint64_t v;
	if (*row == NO_LINE) {
		if (!(lines ? new_line(d, &v) : new_func(d, &v)))
			return false;
		*row = (uint32_t)v;
		if (lines)
			o->lines[v] = (struct snap_line){ .name = "[other]", .file = "",
				.module = "", .other = true };
		else
			o->funcs[v] = (struct snap_func){ .name = "[other]", .file = "",
				.module = "", .other = true };
	}
	*out = *row;
	return true;
}

/* A frame's function row: its own, or "[other]" once that folded.  A
 * folded frame does not name or place a named row: a folded row seen
 * again starts anew, from the frames after the fold. */
static bool func_row(struct derive *d, const struct snap_frame *f, uint32_t *fr)
{
	struct stack_derived *o = d->out;
	uint64_t key, v;
	if (f->folded_func)
		return other_row(d, false, fr);
	if (!key_of(d, f->name, f->file, 0, true, &key))
		return false;
	if (hashmap_get(&d->func_by_key, key, &v)) {
		if (f->first_line < o->funcs[v].line)
			o->funcs[v].line = f->first_line;
	} else {
		if (!new_func(d, &v))
			return false;
		o->funcs[v] = (struct snap_func){ .name = f->name, .file = f->file,
			.line = f->first_line, .native = f->native,
			.module = f->module, .other = f->other };
		if (!hashmap_put(&d->func_by_key, key, v))
			return false;
	}
	*fr = (uint32_t)v;
	return true;
}

/* Its line row, likewise; NO_LINE for a native frame without a source
 * line and for "[N more frames]". */
static bool line_row(struct derive *d, const struct snap_frame *f, uint32_t *lr)
{
	struct stack_derived *o = d->out;
	uint64_t key, v;
	*lr = NO_LINE;
	if ((f->native || f->marker) && f->line <= 0 && !f->other)
		return true;
	if (f->folded_line)
		return other_row(d, true, lr);
	if (!key_of(d, f->file, NULL, (uint32_t)f->line, false, &key))
		return false;
	if (!hashmap_get(&d->line_by_key, key, &v)) {
		if (!new_line(d, &v))
			return false;
		o->lines[v] = (struct snap_line){ .name = f->name, .file = f->file,
			.line = f->line, .native = f->native,
			.module = f->module, .other = f->other };
		if (!hashmap_put(&d->line_by_key, key, v))
			return false;
	}
	*lr = (uint32_t)v;
	return true;
}

static bool frame_rows(struct derive *d, const struct snap_frame *f, uint32_t *fr,
                       uint32_t *lr)
{
	return func_row(d, f, fr) && line_row(d, f, lr);
}

/* The function row of a folded row (its first line as a frame's). */
static bool folded_func_row(struct derive *d, const struct snap_folded_row *r, uint32_t *fr)
{
	struct snap_frame f = { .name = r->name, .file = r->file, .first_line = r->line,
	                        .native = r->native, .module = r->module,
	                        .folded_func = r->other };
	return func_row(d, &f, fr);
}

/* The line row of a folded line row, or of a folded callee's caller. */
static bool folded_line_row(struct derive *d, const struct snap_folded_row *r, uint32_t *lr)
{
	bool callee = r->kind == SNAP_FOLDED_CALLEE;
	struct snap_frame f = {
		.name = callee ? "" : r->name, .file = callee ? r->caller_file : r->file,
		.line = callee ? r->caller_line : r->line, .module = callee ? "" : r->module,
		.native = !callee && r->native, .folded_line = callee ? r->caller_other : r->other };
	return line_row(d, &f, lr);
}

static void add_own(struct snap_counts *c, const struct snap_stack *st)
{
	c->own += st->samples;
	c->own_win += st->samples_win;
	c->own_s += st->seconds;
	c->mem_kept += st->mem_kept;
	snap_split_add(&c->split, &st->split);
	snap_split_add(&c->split_win, &st->split_win);
}

static void add_counts(struct snap_counts *c, const struct snap_counts *x)
{
	c->own += x->own;
	c->own_win += x->own_win;
	c->own_s += x->own_s;
	c->total += x->total;
	c->total_win += x->total_win;
	c->total_s += x->total_s;
	c->mem_kept += x->mem_kept;
	snap_split_add(&c->split, &x->split);
	snap_split_add(&c->split_win, &x->split_win);
}

static void add_total(struct snap_counts *c, uint64_t *stamp, uint64_t serial,
                      const struct snap_stack *st)
{
	if (*stamp == serial)
		return;
	*stamp = serial;
	c->total += st->samples;
	c->total_win += st->samples_win;
	c->total_s += st->seconds;
}

/* The callee row of (line row, function row), made if need be. */
static bool callee_row(struct derive *d, uint32_t lr, uint32_t fr, uint64_t *v)
{
	struct stack_derived *o = d->out;
	uint64_t key = (uint64_t)lr << 32 | fr;
	if (hashmap_get(&d->callee_by_key, key, v))
		return true;
	if (!new_callee(d, v))
		return false;
	o->callees[*v] = (struct snap_callee){ .name = "" };
	d->callee_line[*v] = lr;
	d->callee_func[*v] = fr;
	return hashmap_put(&d->callee_by_key, key, *v);
}

/* A stack whose leaf is native: its own samples under the line of its
 * innermost Python frame (lr) and the leaf's function (fr); own and total
 * alike.  false on OOM. */
static bool count_callee(struct derive *d, uint32_t lr, uint32_t fr,
                         const struct snap_stack *st)
{
	struct stack_derived *o = d->out;
	uint64_t v;
	if (!callee_row(d, lr, fr, &v))
		return false;
	add_own(&o->callees[v].c, st);
	o->callees[v].c.total += st->samples;
	o->callees[v].c.total_win += st->samples_win;
	o->callees[v].c.total_s += st->seconds;
	return true;
}

/* One stack: walk its nodes from the leaf to the root. */
static bool count_stack(struct derive *d, const struct snapshot *s,
                        const struct snap_stack *st, uint64_t serial)
{
	struct stack_derived *o = d->out;
	bool leaf = true, own_line = false, callee = false;
	uint32_t n = st->node, leaf_fr = 0;
	for (size_t guard = 0; n != 0 && n < s->nstack_nodes &&
	     guard < s->nstack_nodes; n = s->stack_nodes[n].parent, guard++) {
		uint32_t f = s->stack_nodes[n].frame;
		uint32_t fr = d->frame_func[f], lr = d->frame_line[f];
		const struct snap_frame *sf = &s->stack_frames[f];
		/* The callee waits for the first frame out of native code. */
		if (callee && !sf->native) {
			callee = false;
			if (lr != NO_LINE && !count_callee(d, lr, leaf_fr, st))
				return false;
		}
		if (leaf) {
			callee = sf->native && !sf->other;
			leaf_fr = fr;
			add_own(&o->funcs[fr].c, st);
		}
		add_total(&o->funcs[fr].c, &d->func_stamp[fr], serial, st);
		leaf = false;
		if (lr == NO_LINE)
			continue;
		if (!own_line)
			add_own(&o->lines[lr].c, st);
		own_line = true;
		add_total(&o->lines[lr].c, &d->line_stamp[lr], serial, st);
	}
	return true;
}

/* A thread's folded "[other]" entry (r->other) holds the samples of its
 * stacks folded into "[other stacks]" that hold a folded row; when rows
 * fold after their stacks did, the aggregator adds their totals up (a
 * sample holding two of them counts twice: which of its rows a folded
 * stack held is not kept), so its total is held to the samples of the
 * thread's "[other stacks]", which it cannot exceed counted once per
 * sample: exact when they all hold a folded row. */
static struct snap_counts folded_other(const struct derive *d, const struct snap_folded_row *r)
{
	struct snap_counts c = r->c;
	uint64_t v;
	const struct snap_counts *n = hashmap_get(&d->folded_by_tid, (uint32_t)r->tid, &v)
		? &d->folded[v - 1] : &(const struct snap_counts){ .total = 0 };
	if (c.total > n->total) {
		c.total = n->total;
		c.total_s = n->total_s;
	}
	if (c.total_win > n->total_win)
		c.total_win = n->total_win;
	return c;
}

/* What the stacks folded into "[other stacks]" were samples of
 * (snapshot.h: stack_folded_rows), added to the rows: callees after the
 * functions and lines they name.  false on OOM. */
static bool count_folded(struct derive *d, const struct snapshot *s, pid_t tid, pid_t pid)
{
	struct stack_derived *o = d->out;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s->nstack_folded_rows; i++) {
			const struct snap_folded_row *r = &s->stack_folded_rows[i];
			uint32_t fr, lr;
			uint64_t v;
			if ((tid != 0 && r->tid != tid) || (pid != 0 && r->pid != pid) ||
			    (r->kind == SNAP_FOLDED_CALLEE) != (pass == 1))
				continue;
			if (r->kind == SNAP_FOLDED_FUNC) {
				if (!folded_func_row(d, r, &fr))
					return false;
				struct snap_counts c = r->other ? folded_other(d, r) : r->c;
				add_counts(&o->funcs[fr].c, &c);
			} else if (r->kind == SNAP_FOLDED_LINE) {
				if (!folded_line_row(d, r, &lr))
					return false;
				struct snap_counts c = r->other ? folded_other(d, r) : r->c;
				add_counts(&o->lines[lr].c, &c);
			} else {
				if (!folded_line_row(d, r, &lr) || !folded_func_row(d, r, &fr) ||
				    !callee_row(d, lr, fr, &v))
					return false;
				add_counts(&o->callees[v].c, &r->c);
			}
		}
	return true;
}

/* A stack folded into "[other stacks]" whose rows the snapshot tells
 * apart (count_folded). */
static bool told_apart(const struct snapshot *s, const struct snap_stack *st)
{
	if (!s->has_folded_rows || st->node >= s->nstack_nodes)
		return false;
	uint32_t f = s->stack_nodes[st->node].frame;
	return f < s->nstack_frames && s->stack_frames[f].other;
}

/* A told-apart stack's samples, to its thread's (folded_other). */
static bool note_folded(struct derive *d, const struct snap_stack *st)
{
	uint64_t v;
	if (!hashmap_get(&d->folded_by_tid, (uint32_t)st->tid, &v)) {
		struct snap_counts *n = realloc(d->folded, (d->nfolded + 1) * sizeof *n);
		if (n == NULL)
			return false;
		d->folded = n;
		n[d->nfolded] = (struct snap_counts){ .total = 0 };
		v = ++d->nfolded;
		if (!hashmap_put(&d->folded_by_tid, (uint32_t)st->tid, v))
			return false;
	}
	struct snap_counts *c = &d->folded[v - 1];
	c->total += st->samples;
	c->total_win += st->samples_win;
	c->total_s += st->seconds;
	return true;
}

/* The callees' names, once their rows are final. */
static void name_callees(struct derive *d)
{
	struct stack_derived *o = d->out;
	for (size_t i = 0; i < o->ncallees; i++) {
		const struct snap_line *l = &o->lines[d->callee_line[i]];
		const struct snap_func *f = &o->funcs[d->callee_func[i]];
		struct snap_callee *c = &o->callees[i];
		c->caller_file = l->file;
		c->caller_line = l->line;
		c->name = f->name;
		c->file = f->file;
		c->line = f->line;
		c->module = f->module;
	}
}

static bool derive_run(struct derive *d, const struct snapshot *s, pid_t tid, pid_t pid)
{
	struct stack_derived *o = d->out;
	/* Each frame's rows; the rows themselves grow as they come. */
	size_t nf = s->nstack_frames ? s->nstack_frames : 1;
	d->frame_func = malloc(nf * sizeof *d->frame_func);
	d->frame_line = malloc(nf * sizeof *d->frame_line);
	d->keys = strtab_new();
	if (!d->frame_func || !d->frame_line || !d->keys)
		return false;
	for (size_t i = 0; i < s->nstack_frames; i++)
		if (!frame_rows(d, &s->stack_frames[i], &d->frame_func[i], &d->frame_line[i]))
			return false;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct snap_stack *st = &s->stacks[i];
		if ((tid != 0 && st->tid != tid) || (pid != 0 && st->pid != pid))
			continue;
		o->samples += st->samples;
		o->samples_win += st->samples_win;
		snap_split_add(&o->split, &st->split);
		if (told_apart(s, st) ? !note_folded(d, st) : !count_stack(d, s, st, i + 1))
			return false;
	}
	if (!count_folded(d, s, tid, pid))
		return false;
	name_callees(d);
	return true;
}

bool stack_derive(const struct snapshot *s, pid_t tid, pid_t pid,
                  struct stack_derived *out)
{
	struct derive d = { .out = out, .other_func = NO_LINE, .other_line = NO_LINE };
	*out = (struct stack_derived){ .funcs = NULL };
	hashmap_init(&d.func_by_key);
	hashmap_init(&d.line_by_key);
	hashmap_init(&d.callee_by_key);
	hashmap_init(&d.folded_by_tid);
	bool ok = derive_run(&d, s, tid, pid);
	hashmap_destroy(&d.func_by_key);
	hashmap_destroy(&d.line_by_key);
	hashmap_destroy(&d.callee_by_key);
	hashmap_destroy(&d.folded_by_tid);
	free(d.folded);
	strtab_free(d.keys);
	free(d.callee_line);
	free(d.callee_func);
	free(d.frame_func);
	free(d.frame_line);
	free(d.func_stamp);
	free(d.line_stamp);
	if (!ok)
		stack_derived_free(out);
	return ok;
}

void stack_derived_free(struct stack_derived *d)
{
	free(d->funcs);
	free(d->lines);
	free(d->callees);
	*d = (struct stack_derived){ .funcs = NULL };
}
