/* export_chrome.c - Chrome trace-event JSON from bucket timelines
 * (export_chrome.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_chrome.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "export_stacks.h"

/* The frames open on one thread's timeline: path[k] since start_us[k]. */
struct open_frames {
	uint32_t *path;
	int64_t *start_us;
	size_t depth, cap;
};

static int64_t us(double seconds)
{
	return (int64_t)llround(seconds * 1e6);
}

static int add(json_t *events, json_t *e)
{
	return e != NULL && json_array_append_new(events, e) == 0 ? 0 : -1;
}

static int frame_event(json_t *events, const struct snapshot *s, const struct chrome_slice *t,
                       uint32_t frame, int64_t start, int64_t end)
{
	const struct snap_frame *f = &s->stack_frames[frame];

	return add(events, json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:{s:s, s:i}}",
	           "name", f->name ? f->name : "", "cat", f->native ? "native" : "python",
	           "ph", "X", "ts", (json_int_t)start, "dur", (json_int_t)(end - start),
	           "pid", (int)t->pid, "tid", (int)t->tid,
	           "args", "file", f->file ? f->file : "", "line", f->line));
}

/* Close the open frames deeper than keep at end_us, outermost first: a
 * frame and its callee often span the same time, and importers that
 * order events of equal times by their place in the file (speedscope's
 * does) must meet the caller first, or they nest the caller inside its
 * callee and give the callee's time to the caller as its own. */
static int close_to(json_t *events, const struct snapshot *s, const struct chrome_slice *t,
                    struct open_frames *o, size_t keep, int64_t end_us)
{
	for (size_t k = keep; k < o->depth; k++)
		if (frame_event(events, s, t, o->path[k], o->start_us[k], end_us) != 0)
			return -1;
	if (o->depth > keep)
		o->depth = keep;
	return 0;
}

/* One bucket of a thread: keep the frames its stack shares with what is
 * open (and contiguous in time), close the rest, open its new ones. */
static int step(json_t *events, const struct snapshot *s, const struct chrome_slice *t,
                struct open_frames *o, const uint32_t *path, size_t depth, int64_t prev_end)
{
	int64_t start = us(t->t_start);
	size_t same = 0;

	if (start == prev_end)
		while (same < o->depth && same < depth && o->path[same] == path[same])
			same++;
	if (close_to(events, s, t, o, same, prev_end) != 0)
		return -1;
	for (; o->depth < depth; o->depth++) {
		o->path[o->depth] = path[o->depth];
		o->start_us[o->depth] = start;
	}
	return 0;
}

static int counter(json_t *events, const struct chrome_slice *t)
{
	return add(events, json_pack("{s:s, s:s, s:I, s:i, s:i, s:{s:I}}", "name", "samples",
	           "ph", "C", "ts", (json_int_t)us(t->t_start), "pid", (int)t->pid,
	           "tid", (int)t->tid, "args", "samples", (json_int_t)t->samples));
}

static int thread_meta(json_t *events, const struct chrome_slice *t)
{
	return add(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name",
	           "ph", "M", "pid", (int)t->pid, "tid", (int)t->tid, "args", "name",
	           t->thread_name && t->thread_name[0] ? t->thread_name : "thread"));
}

/* The slices of one thread, [i, j). */
static int thread_events(json_t *events, const struct snapshot *s, const struct chrome_slice *sl,
                         size_t i, size_t j, struct open_frames *o, uint32_t *path)
{
	int64_t prev_end = INT64_MIN;

	o->depth = 0;
	if (thread_meta(events, &sl[i]) != 0)
		return -1;
	for (size_t k = i; k < j; k++) {
		size_t depth = sl[k].node > 0 ? export_node_path(s, sl[k].node, path, o->cap) : 0;

		if (step(events, s, &sl[k], o, path, depth, prev_end) != 0 || counter(events, &sl[k]))
			return -1;
		prev_end = us(sl[k].t_end);
	}
	return close_to(events, s, &sl[j - 1], o, 0, prev_end);
}

static int process_meta(json_t *events, pid_t pid, const struct export_meta *m)
{
	return add(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name",
	           "ph", "M", "pid", (int)pid, "tid", 0, "args", "name",
	           m->command ? m->command : ""));
}

static int all_events(json_t *events, const struct snapshot *s, const struct export_meta *m,
                      const struct chrome_slice *sl, size_t n)
{
	size_t cap = export_max_depth(s);
	struct open_frames o = { .cap = cap };
	uint32_t *path = malloc((cap ? cap : 1) * sizeof *path);
	int rc = 0;

	o.path = malloc((cap ? cap : 1) * sizeof *o.path);
	o.start_us = malloc((cap ? cap : 1) * sizeof *o.start_us);
	if (path == NULL || o.path == NULL || o.start_us == NULL)
		rc = -1;
	for (size_t i = 0, j; rc == 0 && i < n; i = j) {
		for (j = i + 1; j < n && sl[j].pid == sl[i].pid && sl[j].tid == sl[i].tid; j++)
			;
		if (i == 0 || sl[i].pid != sl[i - 1].pid)
			rc = process_meta(events, sl[i].pid, m);
		if (rc == 0)
			rc = thread_events(events, s, sl, i, j, &o, path);
	}
	free(path);
	free(o.path);
	free(o.start_us);
	return rc;
}

int export_chrome(FILE *out, const struct snapshot *s, const struct export_meta *m,
                  const struct chrome_slice *sl, size_t n)
{
	json_t *events = json_array();
	json_t *root = json_pack("{s:o, s:s, s:{s:s, s:s, s:f}}", "traceEvents", events,
	                         "displayTimeUnit", "ms", "otherData",
	                         "command", m->command ? m->command : "",
	                         "python", m->python_version ? m->python_version : "",
	                         "start_time", m->start_time);
	int rc = root != NULL ? all_events(events, s, m, sl, n) : -1;

	if (rc == 0)
		rc = json_dumpf(root, out, JSON_COMPACT) == 0 && fputc('\n', out) != EOF ? 0 : -1;
	json_decref(root);
	return rc == 0 && fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
