/* export_speedscope.c - speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): the frames
 * shared, one "sampled" profile per thread, each sample a stack of frame
 * indices (outermost first) weighted by the seconds its samples covered. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export.h"

#include <jansson.h>
#include <stdlib.h>

#include "export_stacks.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* A name is valid UTF-8 when pytop read it (py_name_text.h); one from
 * elsewhere that is not becomes "?" rather than failing the export. */
static json_t *text(const char *s)
{
	json_t *j = json_string(s != NULL ? s : "");

	return j != NULL ? j : json_string("?");
}

/* Frame k of the snapshot is speedscope's frame k - 1 (frame 0 is the
 * root's, never on a stack). */
static json_t *frames_json(const struct snapshot *s)
{
	json_t *a = json_array();

	for (size_t k = 1; a != NULL && k < s->nstack_frames; k++) {
		const struct snap_frame *f = &s->stack_frames[k];
		json_t *o = json_pack("{s:o}", "name", text(f->name));
		const char *file = f->file != NULL && f->file[0] != '\0' ? f->file
		                   : f->module;

		if (o != NULL && file != NULL && file[0] != '\0' && !f->other)
			json_object_set_new(o, "file", text(file));
		if (o != NULL && f->line > 0)
			json_object_set_new(o, "line", json_integer(f->line));
		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Stacks by process, then thread: each run of one thread is a profile. */
static int by_thread(const void *a, const void *b)
{
	const struct snap_stack *x = *(const struct snap_stack *const *)a;
	const struct snap_stack *y = *(const struct snap_stack *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static json_t *stack_json(const struct snapshot *s, uint32_t node,
                          uint32_t *path, size_t cap)
{
	size_t depth = export_node_path(s, node, path, cap);
	json_t *a = json_array();

	for (size_t k = 0; a != NULL && k < depth; k++)
		if (json_array_append_new(a, json_integer((json_int_t)path[k] - 1)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* One thread's profile from its stacks st[0..n). */
static json_t *profile_json(const struct snapshot *s,
                            const struct snap_stack *const *st, size_t n,
                            uint32_t *path, size_t cap)
{
	json_t *samples = json_array(), *weights = json_array();
	double total = 0;
	char name[96];

	if (st[0]->tid < 0)
		snprintf(name, sizeof name, "process %d: threads gone", (int)st[0]->pid);
	else
		snprintf(name, sizeof name, "process %d thread %d", (int)st[0]->pid,
		         (int)st[0]->tid);
	for (size_t i = 0; samples != NULL && weights != NULL && i < n; i++) {
		json_t *stack = stack_json(s, st[i]->node, path, cap);

		if (stack == NULL || json_array_append_new(samples, stack) != 0 ||
		    json_array_append_new(weights, json_real(st[i]->seconds)) != 0) {
			json_decref(samples);
			json_decref(weights);
			return NULL;
		}
		total += st[i]->seconds;
	}
	return json_pack("{s:s, s:s, s:s, s:i, s:f, s:o, s:o}",
	                 "type", "sampled", "name", name, "unit", "seconds",
	                 "startValue", 0, "endValue", total,
	                 "samples", samples, "weights", weights);
}

/* The stacks worth a sample, sorted by thread; *n of them. */
static const struct snap_stack **sorted_stacks(const struct snapshot *s,
                                               size_t *n)
{
	const struct snap_stack **v = malloc((s->nstacks ? s->nstacks : 1) * sizeof *v);

	*n = 0;
	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < s->nstacks; i++)
		if (s->stacks[i].samples > 0 && export_node_ok(s, s->stacks[i].node))
			v[(*n)++] = &s->stacks[i];
	qsort(v, *n, sizeof *v, by_thread);
	return v;
}

static json_t *profiles_json(const struct snapshot *s)
{
	size_t n, cap = export_max_depth(s);
	const struct snap_stack **v = sorted_stacks(s, &n);
	uint32_t *path = malloc((cap ? cap : 1) * sizeof *path);
	json_t *a = v != NULL && path != NULL ? json_array() : NULL;

	for (size_t i = 0, j; a != NULL && i < n; i = j) {
		json_t *p;

		for (j = i; j < n && v[j]->pid == v[i]->pid && v[j]->tid == v[i]->tid; j++)
			;
		p = profile_json(s, v + i, j - i, path, cap);
		if (p == NULL || json_array_append_new(a, p) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	free(v);
	free(path);
	return a;
}

int export_speedscope(FILE *out, const struct snapshot *s,
                      const struct export_meta *m)
{
	char name[320];
	json_t *frames = frames_json(s), *profiles = profiles_json(s), *root;
	int rc;

	snprintf(name, sizeof name, "pytop: %s", m->command);
	if (frames == NULL || profiles == NULL) {
		json_decref(frames);
		json_decref(profiles);
		return -1;
	}
	root = json_pack("{s:s, s:{s:o}, s:o, s:o, s:i, s:s}",
	                 "$schema", SCHEMA, "shared", "frames", frames,
	                 "profiles", profiles, "name", text(name),
	                 "activeProfileIndex", 0,
	                 "exporter", "pytop " PACKAGE_VERSION);
	if (root == NULL)
		return -1;
	rc = json_dumpf(root, out, JSON_COMPACT) == 0 && fputc('\n', out) != EOF ? 0 : -1;
	json_decref(root);
	return rc;
}
