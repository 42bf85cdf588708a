/* dump_native.c - `pytop dump --native`: unwind each thread once and
 * merge (dump_native.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "dump_native.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "profile/native_merge.h"
#include "sampler/native_unwind.h"

/* One native function as the merge named it (strings: the merge's). */
struct native_fn {
	const char *name, *file, *module;
};

struct dn_ctx {
	struct dump *d;
	uint64_t *ips;      /* NATIVE_MAX_FRAMES per thread of d */
	int *nips;          /* per thread: IPs taken, 0 = none */
	struct native_fn *fns; /* by function number */
	size_t nfns;
	struct native_merge *merge;
};

static void take(void *ctx, pid_t tid, const uint64_t *ips, int nips)
{
	struct dn_ctx *c = ctx;

	for (size_t i = 0; i < c->d->nthreads; i++)
		if (c->d->threads[i].tid == tid && nips > 0 && nips <= NATIVE_MAX_FRAMES) {
			memcpy(&c->ips[i * NATIVE_MAX_FRAMES], ips, (size_t)nips * sizeof(*ips));
			c->nips[i] = nips;
		}
}

static bool announce(void *ctx, const struct ehframe_module *m)
{
	struct dn_ctx *c = ctx;
	struct rec_module r = {
		.h = { REC_MODULE, sizeof(r) }, .path_len = (uint16_t)strnlen(m->path, UINT16_MAX),
		.lo = m->lo, .hi = m->hi, .map_start = m->map_start, .map_end = m->map_end,
		.offset = m->offset,
	};

	r.pid = c->d->pid;
	native_merge_add_module(c->merge, &r, m->path);
	return true;
}

static bool define(void *ctx, uint32_t id, const char *name, const char *file, int line,
                   const char *module)
{
	struct dn_ctx *c = ctx;
	size_t i = id - NATIVE_CODE_BASE;

	(void)line;
	if (i >= c->nfns) {
		size_t n = i + 64;
		struct native_fn *grown = realloc(c->fns, n * sizeof(*grown));

		if (grown == NULL)
			return false;
		memset(grown + c->nfns, 0, (n - c->nfns) * sizeof(*grown));
		c->fns = grown;
		c->nfns = n;
	}
	c->fns[i] = (struct native_fn){ name, file, module };
	return true;
}

/* The merge's input: Python frames leaf first, each code id its frame's
 * index in t->frames (outermost first), and how many frames each
 * interpreter-loop invocation runs, innermost first (as the sampler's
 * REC_NATIVE groups). */
static size_t python_side(const struct dump_thread *t, struct rec_frame *py, uint16_t *groups)
{
	size_t ng = 0;
	uint16_t run = 0;

	for (size_t f = 0; f < t->nframes; f++) {
		size_t at = t->nframes - 1 - f;

		py[f] = (struct rec_frame){ (uint32_t)at, 0 };
		run++;
		if (t->frames[at].entry || f + 1 == t->nframes) {
			groups[ng++] = run;
			run = 0;
		}
	}
	return ng;
}

static bool native_frame(const struct dn_ctx *c, const struct rec_frame *m, struct dump_frame *f)
{
	size_t i = m->code_id - NATIVE_CODE_BASE;
	const struct native_fn *fn = i < c->nfns ? &c->fns[i] : NULL;

	*f = (struct dump_frame){ .line = m->instr_offset > 0 ? m->instr_offset : 0 };
	f->function = strdup(fn != NULL && fn->name != NULL ? fn->name : "[unknown]");
	f->file = strdup(fn != NULL && fn->file != NULL ? fn->file : "");
	f->module = strdup(fn != NULL && fn->module != NULL ? fn->module : "");
	return f->function != NULL && f->file != NULL && f->module != NULL;
}

static void free_frames(struct dump_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].function);
		free(f[i].file);
		free(f[i].module);
		free(f[i].source);
		py_frame_locals_free(&f[i].locals);
	}
	free(f);
}

/* Thread t's frames become the merged ones (out, leaf first): its Python
 * frames move over, native ones are made; a Python frame the merge left
 * out (none, normally) is freed. */
static bool rebuild(const struct dn_ctx *c, struct dump_thread *t, const struct rec_frame *out,
                    size_t n)
{
	struct dump_frame *nf = calloc(n ? n : 1, sizeof(*nf));

	if (nf == NULL)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct rec_frame *m = &out[n - 1 - i];

		if (m->code_id < NATIVE_CODE_BASE && m->code_id < t->nframes &&
		    t->frames[m->code_id].function != NULL) {
			nf[i] = t->frames[m->code_id];
			memset(&t->frames[m->code_id], 0, sizeof(nf[i]));
		} else if (m->code_id < NATIVE_CODE_BASE || !native_frame(c, m, &nf[i])) {
			free_frames(nf, i + 1);
			return false;
		}
	}
	free_frames(t->frames, t->nframes);
	t->frames = nf;
	t->nframes = n;
	return true;
}

static void merge_threads(struct dn_ctx *c)
{
	struct rec_frame *py = malloc(REC_MAX_PY_FRAMES * sizeof(*py));
	struct rec_frame *out = malloc(NATIVE_MERGE_MAX_FRAMES * sizeof(*out));
	uint16_t *groups = malloc(REC_MAX_PY_FRAMES * sizeof(*groups));

	for (size_t i = 0; py != NULL && out != NULL && groups != NULL && i < c->d->nthreads; i++) {
		struct dump_thread *t = &c->d->threads[i];
		size_t ng, n;

		if (t->error != NULL)
			continue;
		if (c->nips[i] == 0 || t->nframes > REC_MAX_PY_FRAMES) {
			t->native_error = "not read (the thread did not stop in time)";
			continue;
		}
		ng = python_side(t, py, groups);
		n = native_merge_stack(c->merge, &c->ips[i * NATIVE_MAX_FRAMES], (size_t)c->nips[i],
		                       groups, ng, py, t->nframes, out);
		if (!rebuild(c, t, out, n))
			t->native_error = "not merged (out of memory)";
	}
	free(py);
	free(out);
	free(groups);
}

int dump_native_add(pid_t pid, bool show_all, struct dump *d, struct pytop_error *err)
{
	struct dn_ctx c = { .d = d };
	struct native_unwind *u = native_unwind_new(pid);
	int rc = -1;

	c.ips = malloc((d->nthreads ? d->nthreads : 1) * NATIVE_MAX_FRAMES * sizeof(*c.ips));
	c.nips = calloc(d->nthreads ? d->nthreads : 1, sizeof(*c.nips));
	c.merge = native_merge_new_to(pid, define, &c, show_all);
	if (u == NULL || c.ips == NULL || c.nips == NULL || c.merge == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
	} else if (native_unwind_probe(u, err) == 0) {
		for (size_t i = 0; i < d->nthreads; i++)
			if (d->threads[i].error == NULL)
				native_unwind_request(u, d->threads[i].tid);
		native_unwind_collect(u, clock_now_ns() + DUMP_NATIVE_WAIT_NS, take, &c);
		/* Before the symbols are read (files, DWARF: slow), not after. */
		native_unwind_release_all(u, clock_now_ns() + DUMP_NATIVE_WAIT_NS);
		native_unwind_announce_modules(u, announce, &c);
		merge_threads(&c);
		rc = 0;
	}
	native_unwind_free(u); /* releases any thread that did not stop */
	native_merge_free(c.merge);
	free(c.fns);
	free(c.ips);
	free(c.nips);
	return rc;
}
