/* export_pprof.c - pprof's gzipped profile.proto (go tool pprof,
 * Pyroscope, Grafana): functions, a location per (function, line),
 * one sample per (stack, thread) with its counts as values and its
 * thread and process as labels.
 *
 * The message code is generated from ui/pprof_profile.proto by protoc-c
 * and committed (make regen-pprof makes it again): a build then needs
 * only the protobuf-c runtime, and every file ui/ includes is in the
 * tree, where the layer check reads it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export_stacks.h"
#include "pprof_profile.pb-c.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The string table's fixed entries, in order after "" (index 0). */
enum {
	STR_SAMPLES = 1, STR_COUNT, STR_CPU, STR_NANOSECONDS,
	STR_PYTHON, STR_NATIVE, STR_SYSTEM, STR_CPU_WAIT, STR_GIL_WAIT,
	STR_WAITING, STR_THREAD, STR_PROCESS, STR_COMMENT, STR_FIXED
};

/* Sample values, one per sample type: samples (count), cpu (their
 * sampled time, ns), then that time split by kind (ns). */
enum { VAL_SAMPLES, VAL_CPU, VAL_SPLIT, NVALUES = VAL_SPLIT + 6 };

static const int value_strings[NVALUES][2] = {
	{ STR_SAMPLES, STR_COUNT }, { STR_CPU, STR_NANOSECONDS },
	{ STR_PYTHON, STR_NANOSECONDS }, { STR_NATIVE, STR_NANOSECONDS },
	{ STR_SYSTEM, STR_NANOSECONDS }, { STR_CPU_WAIT, STR_NANOSECONDS },
	{ STR_GIL_WAIT, STR_NANOSECONDS }, { STR_WAITING, STR_NANOSECONDS },
};

/* Everything the message points at, allocated per kind, freed at once. */
struct pprof_build {
	pb_profile p;
	pb_value_type types[NVALUES], period_type;
	pb_value_type *type_ptrs[NVALUES];
	int64_t comment;
	char comment_text[400];
	char **strings;
	pb_function *funcs;
	pb_function **func_ptrs;
	uint64_t *func_of_frame;  /* frame index -> function id */
	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_sample *samples;
	pb_sample **sample_ptrs;
	uint64_t *loc_ids;        /* every sample's location ids, pooled */
	int64_t *values;          /* NVALUES per sample */
	pb_label *labels;         /* 2 per sample */
	pb_label **label_ptrs;
};

static void build_free(struct pprof_build *b)
{
	free(b->strings);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->func_of_frame);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->lines);
	free(b->line_ptrs);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->loc_ids);
	free(b->values);
	free(b->labels);
	free(b->label_ptrs);
}

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

/* The function of a frame: its name, file (or module) and first line. */
static const char *frame_file(const struct snap_frame *f)
{
	return f->file != NULL && f->file[0] != '\0' ? f->file : or_empty(f->module);
}

static const struct snapshot *sort_snap; /* qsort has no context */

static int by_function(const void *a, const void *b)
{
	const struct snap_frame *x = &sort_snap->stack_frames[*(const uint32_t *)a];
	const struct snap_frame *y = &sort_snap->stack_frames[*(const uint32_t *)b];
	int c = strcmp(or_empty(x->name), or_empty(y->name));

	if (c == 0)
		c = strcmp(frame_file(x), frame_file(y));
	if (c == 0)
		c = (x->first_line > y->first_line) - (x->first_line < y->first_line);
	return c;
}

/* One function per distinct (name, file, first line); two strings each
 * after the fixed ones.  Returns how many, or -1 on OOM. */
static long add_functions(struct pprof_build *b, const struct snapshot *s)
{
	size_t nf = s->nstack_frames;
	uint32_t *order = malloc((nf ? nf : 1) * sizeof *order);
	long n = 0;

	b->funcs = calloc(nf ? nf : 1, sizeof *b->funcs);
	b->func_ptrs = calloc(nf ? nf : 1, sizeof *b->func_ptrs);
	b->func_of_frame = calloc(nf ? nf : 1, sizeof *b->func_of_frame);
	if (order == NULL || b->funcs == NULL || b->func_ptrs == NULL ||
	    b->func_of_frame == NULL) {
		free(order);
		return -1;
	}
	for (size_t k = 1; k < nf; k++)
		order[k - 1] = (uint32_t)k;
	sort_snap = s;
	qsort(order, nf ? nf - 1 : 0, sizeof *order, by_function);
	for (size_t i = 0; i + 1 < nf; i++) {
		const struct snap_frame *f = &s->stack_frames[order[i]];

		if (i == 0 || by_function(&order[i - 1], &order[i]) != 0) {
			pb_function *fn = &b->funcs[n];

			perftools__profiles__function__init(fn);
			fn->id = (uint64_t)n + 1;
			b->strings[STR_FIXED + 2 * n] = (char *)or_empty(f->name);
			b->strings[STR_FIXED + 2 * n + 1] = (char *)frame_file(f);
			fn->name = fn->system_name = STR_FIXED + 2 * n;
			fn->filename = STR_FIXED + 2 * n + 1;
			fn->start_line = f->first_line;
			b->func_ptrs[n++] = fn;
		}
		b->func_of_frame[order[i]] = (uint64_t)n;
	}
	free(order);
	return n;
}

/* Location k = frame k (id k): its function at its line. */
static int add_locations(struct pprof_build *b, const struct snapshot *s)
{
	size_t n = s->nstack_frames ? s->nstack_frames - 1 : 0;

	b->locs = calloc(n ? n : 1, sizeof *b->locs);
	b->loc_ptrs = calloc(n ? n : 1, sizeof *b->loc_ptrs);
	b->lines = calloc(n ? n : 1, sizeof *b->lines);
	b->line_ptrs = calloc(n ? n : 1, sizeof *b->line_ptrs);
	if (b->locs == NULL || b->loc_ptrs == NULL || b->lines == NULL ||
	    b->line_ptrs == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		perftools__profiles__location__init(&b->locs[i]);
		perftools__profiles__line__init(&b->lines[i]);
		b->lines[i].function_id = b->func_of_frame[i + 1];
		b->lines[i].line = s->stack_frames[i + 1].line;
		b->line_ptrs[i] = &b->lines[i];
		b->locs[i].id = i + 1;
		b->locs[i].n_line = 1;
		b->locs[i].line = &b->line_ptrs[i];
		b->loc_ptrs[i] = &b->locs[i];
	}
	b->p.n_location = n;
	b->p.location = b->loc_ptrs;
	return 0;
}

static int64_t ns(double seconds)
{
	return (int64_t)llround(seconds * 1e9);
}

/* A stack's values: its samples, their time, and that time shared by
 * kind as the split shares its samples. */
static void stack_values(const struct snap_stack *st, int64_t *v)
{
	const struct snap_split *sp = &st->split;
	double per = st->samples ? st->seconds / (double)st->samples : 0;
	const double kinds[6] = { sp->python, sp->native, sp->system,
	                          sp->cpu_wait, sp->gil_wait, sp->waiting };

	v[VAL_SAMPLES] = (int64_t)st->samples;
	v[VAL_CPU] = ns(st->seconds);
	for (int k = 0; k < 6; k++)
		v[VAL_SPLIT + k] = ns(kinds[k] * per);
}

static void stack_labels(struct pprof_build *b, size_t i,
                         const struct snap_stack *st)
{
	pb_label *l = &b->labels[2 * i];

	perftools__profiles__label__init(&l[0]);
	perftools__profiles__label__init(&l[1]);
	l[0].key = STR_THREAD;
	l[0].num = st->tid;
	l[1].key = STR_PROCESS;
	l[1].num = st->pid;
	b->label_ptrs[2 * i] = &l[0];
	b->label_ptrs[2 * i + 1] = &l[1];
	b->samples[i].n_label = 2;
	b->samples[i].label = &b->label_ptrs[2 * i];
}

static int alloc_samples(struct pprof_build *b, size_t n, size_t pool)
{
	b->samples = calloc(n ? n : 1, sizeof *b->samples);
	b->sample_ptrs = calloc(n ? n : 1, sizeof *b->sample_ptrs);
	b->values = calloc((n ? n : 1) * NVALUES, sizeof *b->values);
	b->labels = calloc((n ? n : 1) * 2, sizeof *b->labels);
	b->label_ptrs = calloc((n ? n : 1) * 2, sizeof *b->label_ptrs);
	b->loc_ids = calloc(pool ? pool : 1, sizeof *b->loc_ids);
	return b->samples && b->sample_ptrs && b->values && b->labels &&
	       b->label_ptrs && b->loc_ids ? 0 : -1;
}

/* One sample per (stack, thread) with samples, leaf first. */
static int add_samples(struct pprof_build *b, const struct snapshot *s)
{
	size_t cap = export_max_depth(s), pool = 0, n = 0, used = 0;
	uint32_t *path = malloc((cap ? cap : 1) * sizeof *path);

	for (size_t i = 0; i < s->nstacks; i++)
		if (s->stacks[i].samples > 0 && export_node_ok(s, s->stacks[i].node))
			pool += s->stack_nodes[s->stacks[i].node].depth + 1;
	if (path == NULL || alloc_samples(b, s->nstacks, pool + cap) != 0) {
		free(path);
		return -1;
	}
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct snap_stack *st = &s->stacks[i];
		size_t depth = st->samples > 0 ? export_node_path(s, st->node, path, cap) : 0;
		pb_sample *sm = &b->samples[n];

		if (depth == 0 || used + depth > pool + cap)
			continue;
		perftools__profiles__sample__init(sm);
		sm->location_id = &b->loc_ids[used];
		sm->n_location_id = depth;
		for (size_t k = 0; k < depth; k++)
			sm->location_id[k] = path[depth - 1 - k]; /* id = frame */
		used += depth;
		sm->value = &b->values[n * NVALUES];
		sm->n_value = NVALUES;
		stack_values(st, sm->value);
		stack_labels(b, n, st);
		b->sample_ptrs[n++] = sm;
	}
	free(path);
	b->p.n_sample = n;
	b->p.sample = b->sample_ptrs;
	return 0;
}

static void set_header(struct pprof_build *b, const struct snapshot *s,
                       const struct export_meta *m)
{
	static const char *const fixed[STR_FIXED] = {
		"", "samples", "count", "cpu", "nanoseconds", "python", "native",
		"system", "cpu_wait", "gil_wait", "waiting", "thread", "process", "",
	};

	(void)s;
	for (int i = 0; i < STR_FIXED; i++)
		b->strings[i] = (char *)fixed[i];
	snprintf(b->comment_text, sizeof b->comment_text, "pytop %s: %s (Python %s)",
	         PACKAGE_VERSION, or_empty(m->command), or_empty(m->python_version));
	b->strings[STR_COMMENT] = b->comment_text;
	for (int i = 0; i < NVALUES; i++) {
		perftools__profiles__value_type__init(&b->types[i]);
		b->types[i].type = value_strings[i][0];
		b->types[i].unit = value_strings[i][1];
		b->type_ptrs[i] = &b->types[i];
	}
	b->p.n_sample_type = NVALUES;
	b->p.sample_type = b->type_ptrs;
	perftools__profiles__value_type__init(&b->period_type);
	b->period_type.type = STR_CPU;
	b->period_type.unit = STR_NANOSECONDS;
	b->p.period_type = &b->period_type;
	b->p.period = m->rate_hz > 0 ? 1000000000 / m->rate_hz : 0;
	b->p.default_sample_type = STR_SAMPLES;
	b->p.time_nanos = ns(m->start_time);
	b->p.duration_nanos = ns(m->duration_s);
	b->comment = STR_COMMENT;
	b->p.n_comment = 1;
	b->p.comment = &b->comment;
}

/* The packed message, gzipped onto out. */
static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
	uint8_t chunk[16384];
	z_stream z;
	int rc = 0, zrc;

	memset(&z, 0, sizeof z);
	/* 15 + 16: a gzip header and trailer, as pprof reads. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
	                 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof chunk;
		zrc = deflate(&z, Z_FINISH);
		if (zrc == Z_STREAM_ERROR ||
		    fwrite(chunk, 1, sizeof chunk - z.avail_out, out) != sizeof chunk - z.avail_out)
			rc = -1;
	} while (rc == 0 && zrc != Z_STREAM_END);
	deflateEnd(&z);
	return rc;
}

static int pack_and_write(FILE *out, const pb_profile *p)
{
	size_t len = perftools__profiles__profile__get_packed_size(p);
	uint8_t *buf = malloc(len ? len : 1);
	int rc;

	if (buf == NULL || len > UINT32_MAX) {
		free(buf);
		return -1;
	}
	perftools__profiles__profile__pack(p, buf);
	rc = write_gzip(out, buf, len);
	free(buf);
	return rc;
}

int export_pprof(FILE *out, const struct snapshot *s, const struct export_meta *m)
{
	struct pprof_build b;
	long nfunc;
	int rc = -1;

	memset(&b, 0, sizeof b);
	perftools__profiles__profile__init(&b.p);
	b.strings = calloc(STR_FIXED + 2 * (s->nstack_frames + 1), sizeof *b.strings);
	if (b.strings == NULL)
		goto done;
	set_header(&b, s, m);
	nfunc = add_functions(&b, s);
	if (nfunc < 0 || add_locations(&b, s) != 0 || add_samples(&b, s) != 0)
		goto done;
	b.p.n_function = (size_t)nfunc;
	b.p.function = b.func_ptrs;
	b.p.n_string_table = STR_FIXED + 2 * (size_t)nfunc;
	b.p.string_table = b.strings;
	rc = pack_and_write(out, &b.p);
done:
	build_free(&b);
	return rc;
}
