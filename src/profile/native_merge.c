/* native_merge.c - (--native) each native stack merged with its Python
 * stack on the consumer side: loop frames replaced by the Python frames
 * they run, plumbing hidden (native_merge.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/native_merge.h"

#include <stdlib.h>
#include <string.h>

#include "profile/native_syms.h"
#include "transport/record.h"

#define MAX_GROUPS REC_MAX_PY_FRAMES
#define MAX_OUT NATIVE_MERGE_MAX_FRAMES
#define NATIVE_REC_MAX (sizeof(struct rec_native) + REC_MAX_NATIVE_FRAMES * 8 + MAX_GROUPS * 2 + 8)

/* What a native function is to the merge. */
enum func_kind { KIND_UNSEEN = 0, KIND_PLAIN, KIND_PLUMBING, KIND_EVAL };

/* One native frame of the sample being merged. */
struct nframe {
	struct native_sym sym;
	enum func_kind kind;
	bool interp; /* in the interpreter's module */
};

struct native_merge {
	struct aggregator *agg;     /* borrowed; NULL: merged stacks are only
	                               returned (native_merge_stack) */
	native_define_fn *define;   /* names each native function once */
	void *define_ctx;
	struct native_syms *syms;   /* owned */
	bool show_all;
	uint8_t *kinds;             /* per native function number */
	size_t kinds_cap;
	const char *interp_module;  /* module of the loop, once seen */

	bool held;                  /* a REC_NATIVE waits for its sample */
	struct {                    /* the held record's header fields */
		uint64_t time_ns;
		int32_t tid;
		uint16_t nips, ngroups;
	} held_hdr;
	uint64_t held_ips[REC_MAX_NATIVE_FRAMES];
	uint16_t held_groups[MAX_GROUPS];

	struct nframe nat[REC_MAX_NATIVE_FRAMES];
	struct rec_frame py[REC_MAX_PY_FRAMES]; /* the sample's, aligned */
	uint8_t *out;               /* the merged REC_SAMPLE, owned */
};

static const char *const plumbing_parts[] = {
	"ectorcall", "_Call", "call_function", "cfunction_", "method_", "slot_tp_",
	"EvalFrame", "EvalCode", "_PyEval", "PyEval_", "_PyFunction_", "_PyObject_Make",
};

static bool define_in_aggregator(void *ctx, uint32_t id, const char *name, const char *file,
                                 int line, const char *module)
{
	return aggregator_define_native(ctx, id, name, file, line, module);
}

struct native_merge *native_merge_new(pid_t pid, struct aggregator *agg, bool show_all)
{
	struct native_merge *m = native_merge_new_to(pid, define_in_aggregator, agg, show_all);

	if (m != NULL)
		m->agg = agg;
	return m;
}

struct native_merge *native_merge_new_to(pid_t pid, native_define_fn *define, void *ctx,
                                         bool show_all)
{
	struct native_merge *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return NULL;
	m->define = define;
	m->define_ctx = ctx;
	m->show_all = show_all;
	m->syms = native_syms_new(pid);
	m->out = malloc(sizeof(struct rec_sample) + MAX_OUT * sizeof(struct rec_frame));
	if (m->syms == NULL || m->out == NULL) {
		native_merge_free(m);
		return NULL;
	}
	return m;
}

void native_merge_free(struct native_merge *m)
{
	if (m == NULL)
		return;
	native_syms_free(m->syms);
	free(m->kinds);
	free(m->out);
	free(m);
}

void native_merge_show_all(struct native_merge *m, bool show_all)
{
	m->show_all = show_all;
}

static enum func_kind classify(const char *name)
{
	if (strcmp(name, "_PyEval_EvalFrameDefault") == 0)
		return KIND_EVAL;
	for (size_t i = 0; i < sizeof(plumbing_parts) / sizeof(plumbing_parts[0]); i++)
		if (strstr(name, plumbing_parts[i]) != NULL)
			return KIND_PLUMBING;
	return KIND_PLAIN;
}

/* The function's kind; defines it in the aggregator the first time. */
static enum func_kind kind_of(struct native_merge *m, const struct native_sym *s)
{
	if (s->func >= m->kinds_cap) {
		size_t cap = m->kinds_cap ? m->kinds_cap : 256;
		uint8_t *nk;

		while (cap <= s->func)
			cap *= 2;
		nk = realloc(m->kinds, cap);
		if (nk == NULL)
			return KIND_PLAIN;
		memset(nk + m->kinds_cap, 0, cap - m->kinds_cap);
		m->kinds = nk;
		m->kinds_cap = cap;
	}
	if (m->kinds[s->func] == KIND_UNSEEN &&
	    m->define(m->define_ctx, NATIVE_CODE_BASE + s->func, s->name, s->file,
	              s->func_line, s->module))
		m->kinds[s->func] = (uint8_t)classify(s->name);
	if (m->kinds[s->func] == KIND_EVAL)
		m->interp_module = s->module;
	return m->kinds[s->func] == KIND_UNSEEN ? KIND_PLAIN : (enum func_kind)m->kinds[s->func];
}

static void hold(struct native_merge *m, const uint8_t *rec, size_t len)
{
	struct rec_native h;

	m->held = false;
	if (len < sizeof(h) || len > NATIVE_REC_MAX)
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.nips > REC_MAX_NATIVE_FRAMES || h.ngroups > MAX_GROUPS ||
	    sizeof(h) + h.nips * 8u + h.ngroups * 2u > len)
		return;
	m->held_hdr.time_ns = h.time_ns;
	m->held_hdr.tid = h.tid;
	m->held_hdr.nips = h.nips;
	m->held_hdr.ngroups = h.ngroups;
	memcpy(m->held_ips, rec + sizeof(h), h.nips * 8u);
	memcpy(m->held_groups, rec + sizeof(h) + h.nips * 8u, h.ngroups * 2u);
	m->held = true;
}

/* Symbolize the held stack; returns the number of loop frames. */
static int symbolize(struct native_merge *m)
{
	int evals = 0;

	for (int i = 0; i < m->held_hdr.nips; i++) {
		/* Return addresses point after the call: look up the call. */
		uint64_t ip = m->held_ips[i] - (i > 0);
		struct nframe *f = &m->nat[i];

		f->sym = native_syms_lookup(m->syms, ip);
		f->kind = kind_of(m, &f->sym);
		evals += f->kind == KIND_EVAL;
	}
	for (int i = 0; i < m->held_hdr.nips; i++)
		m->nat[i].interp = m->interp_module != NULL && m->nat[i].sym.module == m->interp_module;
	return evals;
}

struct merge_out {
	struct rec_frame *f;
	size_t n;
};

static void emit(struct merge_out *o, uint32_t code_id, int32_t off)
{
	if (o->n < MAX_OUT)
		o->f[o->n++] = (struct rec_frame){ code_id, off };
}

static void emit_native(struct merge_out *o, const struct nframe *f)
{
	emit(o, NATIVE_CODE_BASE + f->sym.func, f->sym.line);
}

static void emit_python(struct merge_out *o, const struct rec_frame *py, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		emit(o, py[i].code_id, py[i].instr_offset);
}

/* Whether native frame i (leaf first) is interpreter plumbing; inner and
 * outer: leaf-first indices of the innermost and outermost loop frame. */
static bool hidden(const struct native_merge *m, int i, int inner, int outer)
{
	const struct nframe *f = &m->nat[i];

	if (m->show_all || inner < 0)
		return false;
	if (i > outer)
		return true;
	return f->interp && (i > inner || f->kind == KIND_PLUMBING);
}

/* Leaf-first merged frames of the held native stack and the sample's
 * Python frames py[0..npy) (see native_merge.h for the alignment). */
static size_t merge(struct native_merge *m, const struct rec_frame *py, size_t npy,
                    struct rec_frame *out)
{
	struct merge_out o = { out, 0 };
	int nips = m->held_hdr.nips, evals = symbolize(m), inner = -1, outer = -1, j = 0;
	size_t start[MAX_GROUPS + 1], ng = m->held_hdr.ngroups, sum = 0;

	for (size_t g = 0; g < ng; g++) {
		start[g] = sum;
		sum += m->held_groups[g];
	}
	if (sum != npy) { /* groups unknown or inconsistent: one group */
		ng = npy > 0;
		start[0] = 0;
	}
	start[ng] = npy;
	for (int i = 0; i < nips; i++)
		if (m->nat[i].kind == KIND_EVAL) {
			outer = i;
			if (inner < 0)
				inner = i;
		}
	for (int i = 0; i < nips; i++) {
		const struct nframe *f = &m->nat[i];

		if (f->kind == KIND_EVAL) {
			/* Aligned from the outermost: loop j (leaf first) runs
			 * group j + ng - evals; the innermost takes the rest. */
			long g = (long)j + (long)ng - evals, lo = j == 0 ? 0 : g;

			if (g >= 0)
				emit_python(&o, py, start[lo], start[g + 1]);
			if (m->show_all)
				emit_native(&o, f);
			j++;
		} else if (!hidden(m, i, inner, outer)) {
			emit_native(&o, f);
		}
	}
	if (evals == 0)
		emit_python(&o, py, 0, npy);
	return o.n;
}

/* The native stack says for sure what the leaf Python frame's
 * instruction only suggests when the thread is outside the interpreter's
 * module (libc, zlib, an extension): native, whatever the instruction.
 * Inside it the instruction still decides: a builtin such as list.sort
 * lives there too, and so does the bytecode loop.  Without a Python
 * runtime (a C program) everything is native. */
static uint16_t sharpen(const struct native_merge *m, uint16_t flags)
{
	if (m->held_hdr.nips == 0 || (m->interp_module != NULL && m->nat[0].interp))
		return flags;
	return flags | SAMPLE_IN_CALL;
}

static void ingest_sample(struct native_merge *m, const uint8_t *rec, size_t len)
{
	struct rec_sample s;
	size_t n;

	if (len < sizeof(s))
		goto pass;
	memcpy(&s, rec, sizeof(s));
	if (!m->held || m->held_hdr.tid != s.tid || m->held_hdr.time_ns != s.time_ns ||
	    s.nframes > REC_MAX_PY_FRAMES ||
	    sizeof(s) + s.nframes * sizeof(struct rec_frame) > len)
		goto pass;
	m->held = false;
	memcpy(m->py, rec + sizeof(s), s.nframes * sizeof(m->py[0]));
	n = merge(m, m->py, s.nframes, (struct rec_frame *)(void *)(m->out + sizeof(s)));
	s.flags = sharpen(m, s.flags);
	s.nframes = (uint16_t)n;
	s.h.size = (uint32_t)(sizeof(s) + n * sizeof(struct rec_frame));
	memcpy(m->out, &s, sizeof(s));
	aggregator_ingest(m->agg, m->out, s.h.size);
	return;
pass:
	m->held = false;
	aggregator_ingest(m->agg, rec, len);
}

/* A module for the symbolizer; the aggregator has no use for it. */
static void ingest_module(struct native_merge *m, const uint8_t *rec, size_t len)
{
	struct rec_module r;

	if (len < sizeof(r))
		return;
	memcpy(&r, rec, sizeof(r));
	if (sizeof(r) + r.path_len <= len)
		native_syms_add_module(m->syms, &r, (const char *)rec + sizeof(r));
}

void native_merge_add_module(struct native_merge *m, const struct rec_module *r,
                             const char *path)
{
	native_syms_add_module(m->syms, r, path);
}

size_t native_merge_stack(struct native_merge *m, const uint64_t *ips, size_t nips,
                          const uint16_t *groups, size_t ngroups,
                          const struct rec_frame *py, size_t npy, struct rec_frame *out)
{
	if (nips > REC_MAX_NATIVE_FRAMES || ngroups > MAX_GROUPS || npy > REC_MAX_PY_FRAMES)
		return 0;
	m->held_hdr.nips = (uint16_t)nips;
	m->held_hdr.ngroups = (uint16_t)ngroups;
	memcpy(m->held_ips, ips, nips * sizeof(*ips));
	memcpy(m->held_groups, groups, ngroups * sizeof(*groups));
	m->held = false;
	return merge(m, py, npy, out);
}

void native_merge_ingest(struct native_merge *m, const void *rec, size_t len)
{
	struct rec_header h;

	if (len >= sizeof(h)) {
		memcpy(&h, rec, sizeof(h));
		if (h.type == REC_MODULE) {
			ingest_module(m, rec, len);
			return;
		}
		if (h.type == REC_NATIVE) {
			hold(m, rec, len);
			return;
		}
		if (h.type == REC_SAMPLE) {
			ingest_sample(m, rec, len);
			return;
		}
	}
	aggregator_ingest(m->agg, rec, len);
}

size_t native_merge_unnamed_modules(const struct native_merge *m, const char *const **paths)
{
	return native_syms_unnamed_modules(m->syms, paths);
}
