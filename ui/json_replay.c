/* json_replay.c - a replay's JSON line (json_replay.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "json_replay.h"

#include <stddef.h>
#include <stdlib.h>

#include "text.h"

/* Not in a recording (man pytop: REPLAY): the sampler's and pytop's own
 * health per window, the scheduler's and GIL's shares, the errors by
 * kind, the cgroup, and what the live view derives from history. */
static const char *const unknown_top[] = {
	"pytop_cpu", "sample_work_us", "gil_held_pct", "active_pct", "runnable_pct",
	"cpu_wait_pct", "threads_running", "errors_by_kind", "deep_stacks_cut", "exec",
	"functions_folded", "lines_folded", "stacks_folded",
};
static const char *const unknown_gauges[] = {
	"rss_growth_per_min", "mem_limit", "cpu_limit", "cpu_throttled_pct",
	"mem_unattributed", "verdict", "verdict_reason",
};
/* Per thread and per process: what the scheduler and /proc said. */
static const char *const unknown_thread[] = {
	"py_name", "running", "state", "os_state", "cpu_user", "cpu_sys", "gil_pct",
};
static const char *const unknown_process[] = {
	"os_state", "cpu_user", "cpu_sys", "rss",
};
/* Per row: memory kept is a minute's history, not per stack. */
static const char *const unknown_row[] = { "mem_kept" };

#define N(a) (sizeof (a) / sizeof (a)[0])

static int set_null(json_t *o, const char *const *keys, size_t n)
{
	if (!json_is_object(o))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (json_object_get(o, keys[i]) != NULL &&
		    json_object_set_new(o, keys[i], json_null()) != 0)
			return -1;
	return 0;
}

static int set_null_each(json_t *arr, const char *const *keys, size_t n)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) {
		if (set_null(v, keys, n) != 0)
			return -1;
	}
	return 0;
}

static json_t *replay_object(const struct snapshot *s)
{
	const struct snap_replay *r = &s->replay;
	char *file = text_sanitized_copy(r->file);
	json_t *o = json_pack("{s:s?, s:f, s:f, s:f, s:f, s:b}",
	                      "file", file, "from", r->from_s, "to", r->to_s,
	                      "at", r->at_s, "extent", r->extent_s, "window", r->window);

	free(file);
	return o;
}

int json_replay_mark(json_t *o, const struct snapshot *s)
{
	if (set_null(o, unknown_top, N(unknown_top)) != 0 ||
	    set_null(json_object_get(o, "gauges"), unknown_gauges, N(unknown_gauges)) != 0 ||
	    set_null_each(json_object_get(o, "threads"), unknown_thread, N(unknown_thread)) != 0 ||
	    set_null_each(json_object_get(o, "processes"), unknown_process,
	                  N(unknown_process)) != 0 ||
	    set_null_each(json_object_get(o, "functions"), unknown_row, N(unknown_row)) != 0 ||
	    set_null_each(json_object_get(o, "lines"), unknown_row, N(unknown_row)) != 0)
		return -1;
	return json_object_set_new(o, "replay", replay_object(s));
}
