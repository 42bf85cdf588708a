/* sample_oracle.c - see sample_oracle.h.  Everything is kept per sample
 * and counted again at every oracle_rows: slow, plain, and sharing no
 * counting code with the aggregator. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sample_oracle.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hashmap.h"
#include "profile/code_table.h"
#include "profile/strtab.h"
#include "transport/record.h"

#define NO_LINE UINT32_MAX

/* A function or line key; never folded: fold_before 0. */
struct okey {
	const char *name, *file, *module;
	int line;             /* a function's smallest first line, a line's line */
	bool native;
	uint64_t fold_before; /* the samples before this one count in "[other]" */
	uint64_t last_seen;   /* 1 + the last sample holding it, 0 none */
};

struct oframe {
	uint32_t func, line; /* key indexes; line NO_LINE: the frame has none */
};

struct osample {
	pid_t tid, pid;
	uint64_t ns, win;
	uint64_t growth, minflt, majflt;
	uint64_t shrink;    /* given back: charged to sample shrink_to */
	uint64_t shrink_to;
	size_t frame0;      /* its frames: frames[frame0, frame0 + nframes), leaf first */
	uint32_t nframes;   /* 0: no Python stack */
};

struct okeys {
	struct okey *v;
	size_t n, cap;
	struct hashmap by_key;
};

struct sample_oracle {
	bool split;
	struct strtab *strings;
	struct code_table *codes;
	struct okeys funcs, lines;
	struct osample *samples;
	size_t nsamples, scap;
	struct oframe *frames;
	size_t nframes, fcap;
	size_t start;               /* the first sample since the last reset */
	uint64_t win;               /* the current window */
	struct hashmap prev_by_tid; /* tid -> 1 + its previous sample with a
	                               stack since the last reset */
};

static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t cap2 = *cap ? *cap * 2 : 64;
	while (cap2 < need)
		cap2 *= 2;
	void *nv = realloc(*v, cap2 * elem);
	if (nv == NULL)
		return false;
	*v = nv;
	*cap = cap2;
	return true;
}

struct sample_oracle *oracle_new(bool split)
{
	struct sample_oracle *o = calloc(1, sizeof *o);
	if (o == NULL)
		return NULL;
	o->split = split;
	o->strings = strtab_new();
	o->codes = o->strings ? code_table_new(o->strings) : NULL;
	hashmap_init(&o->funcs.by_key);
	hashmap_init(&o->lines.by_key);
	hashmap_init(&o->prev_by_tid);
	if (o->codes == NULL) {
		oracle_free(o);
		return NULL;
	}
	return o;
}

void oracle_free(struct sample_oracle *o)
{
	if (o == NULL)
		return;
	code_table_free(o->codes);
	strtab_free(o->strings);
	free(o->funcs.v);
	free(o->lines.v);
	hashmap_destroy(&o->funcs.by_key);
	hashmap_destroy(&o->lines.by_key);
	hashmap_destroy(&o->prev_by_tid);
	free(o->samples);
	free(o->frames);
	free(o);
}

bool oracle_define_native(struct sample_oracle *o, uint32_t code_id, const char *name,
                          const char *file, int line, const char *module)
{
	return code_table_add_native(o->codes, code_id, name, file, line, module) == CODE_ADDED;
}

/* Every thread forgets its previous sample: memory it gives back next
 * goes to the sample that tells it, one counted since the reset. */
void oracle_reset(struct sample_oracle *o)
{
	o->start = o->nsamples;
	hashmap_clear(&o->prev_by_tid);
}

void oracle_close_window(struct sample_oracle *o)
{
	o->win++;
}

/* The key's index in k, made with *proto on first sight. */
static bool key_index(struct okeys *k, uint64_t key, const struct okey *proto, uint32_t *out)
{
	uint64_t v;
	if (hashmap_get(&k->by_key, key, &v)) {
		*out = (uint32_t)v;
		return true;
	}
	if (!grow((void **)&k->v, &k->cap, k->n + 1, sizeof *k->v) ||
	    !hashmap_put(&k->by_key, key, k->n))
		return false;
	k->v[k->n] = *proto;
	*out = (uint32_t)k->n++;
	return true;
}

/* A frame's function and line keys; false for an undefined code. */
static bool resolve(struct sample_oracle *o, struct rec_frame f, struct oframe *out)
{
	const struct code_info *ci = f.code_id == REC_MORE_FRAMES
		? code_table_more_frames(o->codes, f.instr_offset)
		: code_table_get(o->codes, f.code_id);
	if (ci == NULL)
		return false;
	struct okey fk = { .name = ci->qualname, .file = ci->filename, .module = ci->module,
	                   .line = ci->firstlineno, .native = ci->native };
	if (!key_index(&o->funcs, (uint64_t)ci->qualname_sid << 32 | ci->filename_sid, &fk,
	               &out->func))
		return false;
	struct okey *fn = &o->funcs.v[out->func];
	if (ci->firstlineno < fn->line)
		fn->line = ci->firstlineno;
	int line = code_info_line(ci, f.instr_offset);
	out->line = NO_LINE;
	if ((ci->native || ci->marker) && line <= 0)
		return true;
	struct okey lk = { .name = ci->qualname, .file = ci->filename, .module = ci->module,
	                   .line = line, .native = ci->native };
	return key_index(&o->lines, (uint64_t)ci->filename_sid << 32 | (uint32_t)line, &lk,
	                 &out->line);
}

/* Where sample i's memory given back goes: its thread's previous sample
 * with a stack since the last reset (its function row not folded since),
 * else itself. */
static uint64_t shrink_target(struct sample_oracle *o, pid_t tid, uint64_t i)
{
	uint64_t prev;
	if (!hashmap_get(&o->prev_by_tid, (uint32_t)tid, &prev) || prev == 0)
		return i;
	const struct osample *p = &o->samples[prev - 1];
	const struct okey *leaf = &o->funcs.v[o->frames[p->frame0].func];
	return leaf->fold_before > prev - 1 ? i : prev - 1;
}

static void ingest_sample(struct sample_oracle *o, const uint8_t *rec, size_t size)
{
	struct rec_sample s;
	if (size < sizeof s)
		return;
	memcpy(&s, rec, sizeof s);
	if ((size - sizeof s) / sizeof(struct rec_frame) < s.nframes ||
	    !grow((void **)&o->frames, &o->fcap, o->nframes + s.nframes, sizeof *o->frames) ||
	    !grow((void **)&o->samples, &o->scap, o->nsamples + 1, sizeof *o->samples))
		return;
	for (size_t i = 0; i < s.nframes; i++) {
		struct rec_frame f;
		memcpy(&f, rec + sizeof s + i * sizeof f, sizeof f);
		if (!resolve(o, f, &o->frames[o->nframes + i]))
			return; /* dropped whole */
	}
	uint64_t i = o->nsamples;
	struct osample *n = &o->samples[i];
	*n = (struct osample){ .tid = s.tid, .pid = s.pid, .ns = s.interval_ns, .win = o->win,
	                       .shrink_to = i, .frame0 = o->nframes, .nframes = s.nframes };
	if (s.nframes > 0 && o->split) {
		n->growth = s.mem_growth;
		n->minflt = s.minflt;
		n->majflt = s.majflt;
		n->shrink = s.mem_shrink;
		n->shrink_to = shrink_target(o, s.tid, i);
	}
	if (s.nframes > 0)
		(void)hashmap_put(&o->prev_by_tid, (uint32_t)s.tid, i + 1);
	for (size_t j = 0; j < s.nframes; j++) {
		const struct oframe *f = &o->frames[o->nframes + j];
		o->funcs.v[f->func].last_seen = i + 1;
		if (f->line != NO_LINE)
			o->lines.v[f->line].last_seen = i + 1;
	}
	o->nframes += s.nframes;
	o->nsamples++;
}

void oracle_ingest(struct sample_oracle *o, const void *rec, size_t len)
{
	struct rec_header h;
	if (len < sizeof h)
		return;
	memcpy(&h, rec, sizeof h);
	if (h.size > len || h.size < sizeof h)
		return;
	if (h.type == REC_CODE_DEF)
		(void)code_table_add_record(o->codes, rec, h.size);
	else if (h.type == REC_SAMPLE)
		ingest_sample(o, rec, h.size);
}

void oracle_ingest_to(void *ctx, const void *rec, size_t len)
{
	oracle_ingest(ctx, rec, len);
}

/* Whether key k was sampled since it last folded. */
static bool sampled_since_fold(const struct okey *k)
{
	return k->last_seen > k->fold_before;
}

size_t oracle_fold(struct sample_oracle *o, const struct oracle_folds *f)
{
	size_t n = 0;
	for (uint32_t k = 0; f->func && k < o->funcs.n; k++) {
		struct okey *key = &o->funcs.v[k];
		if (sampled_since_fold(key) && f->func(f->ctx, key->name, key->file)) {
			key->fold_before = o->nsamples;
			n++;
		}
	}
	for (uint32_t k = 0; f->line && k < o->lines.n; k++) {
		struct okey *key = &o->lines.v[k];
		if (sampled_since_fold(key) && f->line(f->ctx, key->file, key->line)) {
			key->fold_before = o->nsamples;
			n++;
		}
	}
	return n;
}

/* ---- counting --------------------------------------------------------- */

struct ocallee {
	struct snap_counts c;
	uint32_t line, func; /* its caller's line key, its leaf's function key */
};

/* Counts by key index; index n (the number of keys) is "[other]". */
struct ocount {
	struct snap_counts *func, *line;
	struct hashmap callee_by_key; /* line << 32 | func -> index in callee */
	struct ocallee *callee;
	size_t ncallees, ccap;
};

/* A sample's frame j as counted: "[other]" for a key folded after it. */
static uint32_t eff_func(const struct sample_oracle *o, size_t i, const struct oframe *f)
{
	return i < o->funcs.v[f->func].fold_before ? (uint32_t)o->funcs.n : f->func;
}

static uint32_t eff_line(const struct sample_oracle *o, size_t i, const struct oframe *f)
{
	if (f->line == NO_LINE)
		return NO_LINE;
	return i < o->lines.v[f->line].fold_before ? (uint32_t)o->lines.n : f->line;
}

static void add_own(struct snap_counts *c, const struct osample *s, bool win)
{
	c->own++;
	c->own_win += win;
	c->own_s += (double)s->ns / NSEC_PER_SEC;
	c->split.mem_growth += s->growth;
	c->split.minflt += s->minflt;
	c->split.majflt += s->majflt;
	if (win) {
		c->split_win.mem_growth += s->growth;
		c->split_win.minflt += s->minflt;
		c->split_win.majflt += s->majflt;
	}
}

static void add_total(struct snap_counts *c, const struct osample *s, bool win)
{
	c->total++;
	c->total_win += win;
	c->total_s += (double)s->ns / NSEC_PER_SEC;
}

static bool callee_index(struct ocount *c, uint32_t line, uint32_t func, size_t *out)
{
	uint64_t key = (uint64_t)line << 32 | func, v;
	if (hashmap_get(&c->callee_by_key, key, &v)) {
		*out = (size_t)v;
		return true;
	}
	if (!grow((void **)&c->callee, &c->ccap, c->ncallees + 1, sizeof *c->callee) ||
	    !hashmap_put(&c->callee_by_key, key, c->ncallees))
		return false;
	c->callee[c->ncallees] = (struct ocallee){ .line = line, .func = func };
	*out = c->ncallees++;
	return true;
}

/* Whether frame j's effective function (line) appeared before in the
 * sample: total counts once per sample. */
static bool func_seen(const struct sample_oracle *o, size_t i, const struct osample *s,
                      uint32_t j, uint32_t fn)
{
	for (uint32_t k = 0; k < j; k++)
		if (eff_func(o, i, &o->frames[s->frame0 + k]) == fn)
			return true;
	return false;
}

static bool line_seen(const struct sample_oracle *o, size_t i, const struct osample *s,
                      uint32_t j, uint32_t ln)
{
	for (uint32_t k = 0; k < j; k++)
		if (eff_line(o, i, &o->frames[s->frame0 + k]) == ln)
			return true;
	return false;
}

/* A native leaf: a callee of its innermost Python frame's line. */
static bool count_callee(const struct sample_oracle *o, size_t i, const struct osample *s,
                         struct ocount *c, bool win)
{
	const struct oframe *fr = &o->frames[s->frame0];
	uint32_t j = 1;
	while (j < s->nframes && o->funcs.v[fr[j].func].native)
		j++;
	if (j >= s->nframes || fr[j].line == NO_LINE)
		return true;
	size_t k;
	if (!callee_index(c, eff_line(o, i, &fr[j]), eff_func(o, i, &fr[0]), &k))
		return false;
	add_own(&c->callee[k].c, s, win);
	add_total(&c->callee[k].c, s, win);
	return true;
}

static bool count_sample(const struct sample_oracle *o, size_t i, struct ocount *c)
{
	const struct osample *s = &o->samples[i];
	const struct oframe *fr = &o->frames[s->frame0];
	bool win = s->win == o->win, own_line = false;
	add_own(&c->func[eff_func(o, i, &fr[0])], s, win);
	for (uint32_t j = 0; j < s->nframes; j++) {
		uint32_t fn = eff_func(o, i, &fr[j]), ln = eff_line(o, i, &fr[j]);
		if (!func_seen(o, i, s, j, fn))
			add_total(&c->func[fn], s, win);
		if (ln == NO_LINE)
			continue;
		if (!own_line)
			add_own(&c->line[ln], s, win);
		own_line = true;
		if (!line_seen(o, i, s, j, ln))
			add_total(&c->line[ln], s, win);
	}
	return !o->funcs.v[fr[0].func].native || count_callee(o, i, s, c, win);
}

/* Sample i's memory given back, to the own rows of the sample it goes to. */
static void count_shrink(const struct sample_oracle *o, size_t i, struct ocount *c)
{
	const struct osample *s = &o->samples[i];
	size_t t = s->shrink_to;
	const struct osample *to = &o->samples[t];
	const struct oframe *fr = &o->frames[to->frame0];
	bool win = s->win == o->win;
	if (s->shrink == 0)
		return;
	struct snap_counts *rows[3] = { &c->func[eff_func(o, t, &fr[0])], NULL, NULL };
	for (uint32_t j = 0; j < to->nframes && rows[1] == NULL; j++)
		if (fr[j].line != NO_LINE)
			rows[1] = &c->line[eff_line(o, t, &fr[j])];
	uint32_t j = 1;
	while (o->funcs.v[fr[0].func].native && j < to->nframes &&
	       o->funcs.v[fr[j].func].native)
		j++;
	uint64_t key = (uint64_t)(j < to->nframes ? eff_line(o, t, &fr[j]) : NO_LINE) << 32 |
	               eff_func(o, t, &fr[0]), v;
	if (o->funcs.v[fr[0].func].native && hashmap_get(&c->callee_by_key, key, &v))
		rows[2] = &c->callee[v].c;
	for (int r = 0; r < 3; r++) {
		if (rows[r] == NULL)
			continue;
		rows[r]->split.mem_shrink += s->shrink;
		if (win)
			rows[r]->split_win.mem_shrink += s->shrink;
	}
}

static bool in_scope(const struct osample *s, pid_t tid, pid_t pid)
{
	if (tid != 0)
		return s->tid == tid;
	return pid == 0 || s->pid == pid;
}

/* ---- the rows ---------------------------------------------------------- */

static const struct okey other_key = { .name = "[other]", .file = "", .module = "" };

static const struct okey *key_of(const struct okeys *k, size_t i)
{
	return i < k->n ? &k->v[i] : &other_key;
}

static bool emit_funcs(const struct sample_oracle *o, const struct ocount *c,
                       struct oracle_rows *out)
{
	out->funcs = calloc(o->funcs.n + 1, sizeof *out->funcs);
	if (out->funcs == NULL)
		return false;
	for (size_t i = 0; i <= o->funcs.n; i++) {
		const struct okey *k = key_of(&o->funcs, i);
		if (c->func[i].total > 0)
			out->funcs[out->nfuncs++] = (struct snap_func){
				.name = k->name, .file = k->file, .line = k->line, .c = c->func[i],
				.native = k->native, .module = k->module, .other = i == o->funcs.n };
	}
	qsort(out->funcs, out->nfuncs, sizeof *out->funcs, snapshot_func_cmp);
	return true;
}

static bool emit_lines(const struct sample_oracle *o, const struct ocount *c,
                       struct oracle_rows *out)
{
	out->lines = calloc(o->lines.n + 1, sizeof *out->lines);
	if (out->lines == NULL)
		return false;
	for (size_t i = 0; i <= o->lines.n; i++) {
		const struct okey *k = key_of(&o->lines, i);
		if (c->line[i].total > 0)
			out->lines[out->nlines++] = (struct snap_line){
				.name = k->name, .file = k->file, .line = k->line, .c = c->line[i],
				.native = k->native, .module = k->module, .other = i == o->lines.n };
	}
	qsort(out->lines, out->nlines, sizeof *out->lines, snapshot_line_cmp);
	return true;
}

static bool emit_callees(const struct sample_oracle *o, const struct ocount *c,
                         struct oracle_rows *out)
{
	out->callees = calloc(c->ncallees + 1, sizeof *out->callees);
	if (out->callees == NULL)
		return false;
	for (size_t i = 0; i < c->ncallees; i++) {
		const struct okey *l = key_of(&o->lines, c->callee[i].line);
		const struct okey *f = key_of(&o->funcs, c->callee[i].func);
		out->callees[out->ncallees++] = (struct snap_callee){
			.caller_file = l->file, .caller_line = l->line, .name = f->name,
			.file = f->file, .line = f->line, .module = f->module, .c = c->callee[i].c };
	}
	qsort(out->callees, out->ncallees, sizeof *out->callees, snapshot_callee_cmp);
	return true;
}

bool oracle_rows(const struct sample_oracle *o, pid_t tid, pid_t pid, struct oracle_rows *out)
{
	struct ocount c = { .func = calloc(o->funcs.n + 1, sizeof *c.func),
	                    .line = calloc(o->lines.n + 1, sizeof *c.line) };
	bool ok = c.func != NULL && c.line != NULL;
	*out = (struct oracle_rows){ .funcs = NULL };
	hashmap_init(&c.callee_by_key);
	for (size_t i = o->start; ok && i < o->nsamples; i++) {
		const struct osample *s = &o->samples[i];
		if (s->nframes == 0 || !in_scope(s, tid, pid))
			continue;
		out->samples++;
		out->samples_win += s->win == o->win;
		ok = count_sample(o, i, &c);
	}
	/* Once every sample's rows exist: memory given back goes to an
	 * earlier one's. */
	for (size_t i = o->start; ok && i < o->nsamples; i++)
		if (o->samples[i].nframes > 0 && in_scope(&o->samples[i], tid, pid))
			count_shrink(o, i, &c);
	ok = ok && emit_funcs(o, &c, out) && emit_lines(o, &c, out) && emit_callees(o, &c, out);
	free(c.func);
	free(c.line);
	free(c.callee);
	hashmap_destroy(&c.callee_by_key);
	if (!ok)
		oracle_rows_free(out);
	return ok;
}

void oracle_rows_free(struct oracle_rows *r)
{
	free(r->funcs);
	free(r->lines);
	free(r->callees);
	*r = (struct oracle_rows){ .funcs = NULL };
}
