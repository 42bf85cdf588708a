/* json_stacks.c - the frames and stacks of --json --stacks. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "json_stacks.h"

#include <math.h>
#include <stdlib.h>

#include "text.h"

/* Names come from the target: cleaned to valid UTF-8 first. */
static json_t *jstr(const char *s)
{
	char *clean = text_sanitized_copy(s != NULL ? s : "");
	json_t *j = clean != NULL ? json_string(clean) : NULL;

	free(clean);
	return j;
}

static json_t *jtenth(double d)
{
	return json_real(isfinite(d) ? round(d * 10.0) / 10.0 : 0.0);
}

static json_t *frame_json(const struct snap_frame *f)
{
	return json_pack("{s:o, s:o, s:i, s:i, s:s, s:o}",
	                 "name", jstr(f->name), "file", jstr(f->file),
	                 "line", f->line, "first_line", f->first_line,
	                 /* Both folds are pytop's, not the target's. */
	                 "kind", f->other || f->folded_other ? "other"
	                         : f->native ? "native" : "python",
	                 "module", jstr(f->module));
}

/* The frame indices of node n, outermost first; NULL on a broken
 * chain (parents come first) or OOM. */
static json_t *frames_of(const struct snapshot *s, uint32_t n)
{
	json_t *a = json_array();

	for (uint32_t i = n; a != NULL && i != 0; i = s->stack_nodes[i].parent)
		if (i >= s->nstack_nodes || s->stack_nodes[i].parent >= i ||
		    s->stack_nodes[i].frame >= s->nstack_frames) {
			json_decref(a);
			return NULL;
		}
	for (uint32_t i = n; a != NULL && i != 0; i = s->stack_nodes[i].parent)
		if (json_array_insert_new(a, 0,
		        json_integer(s->stack_nodes[i].frame)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *stack_json(const struct snapshot *s, const struct snap_stack *st)
{
	const struct snap_split *sp = &st->split;
	json_t *frames = frames_of(s, st->node);

	if (frames == NULL)
		return NULL;
	return json_pack("{s:o, s:i, s:i, s:I, s:I, s:f, s:o, s:o, s:o, s:o, "
	                 "s:o, s:o, s:I, s:I, s:I, s:I}",
	                 "frames", frames, "tid", (int)st->tid,
	                 "pid", (int)st->pid,
	                 "samples", (json_int_t)st->samples,
	                 "samples_win", (json_int_t)st->samples_win,
	                 "seconds", isfinite(st->seconds) ? st->seconds : 0.0,
	                 "python", jtenth(sp->python),
	                 "native", jtenth(sp->native),
	                 "system", jtenth(sp->system),
	                 "waiting", jtenth(sp->waiting),
	                 "cpu_wait", jtenth(sp->cpu_wait),
	                 "gil_wait", jtenth(sp->gil_wait),
	                 "mem_growth", (json_int_t)sp->mem_growth,
	                 "mem_shrink", (json_int_t)sp->mem_shrink,
	                 "minflt", (json_int_t)sp->minflt,
	                 "majflt", (json_int_t)sp->majflt);
}

static bool counted(const struct snapshot *s, const struct snap_stack *st)
{
	return (s->thread_filter == 0 || st->tid == s->thread_filter) &&
	       (s->process_filter == 0 || st->pid == s->process_filter) &&
	       st->samples > 0;
}

int json_stacks_add(json_t *o, const struct snapshot *s)
{
	json_t *frames = json_array(), *stacks = json_array();
	bool ok = frames != NULL && stacks != NULL;

	for (size_t i = 0; ok && i < s->nstack_frames; i++)
		ok = json_array_append_new(frames,
		                           frame_json(&s->stack_frames[i])) == 0;
	for (size_t i = 0; ok && i < s->nstacks; i++) {
		json_t *st;

		if (!counted(s, &s->stacks[i]))
			continue;
		/* A broken chain is left out, not guessed. */
		st = stack_json(s, &s->stacks[i]);
		ok = st == NULL || json_array_append_new(stacks, st) == 0;
	}
	if (!ok) {
		json_decref(frames);
		json_decref(stacks);
		return -1;
	}
	if (json_object_set_new(o, "frames", frames) != 0) {
		json_decref(stacks);
		return -1;
	}
	return json_object_set_new(o, "stacks", stacks) != 0 ? -1 : 0;
}
