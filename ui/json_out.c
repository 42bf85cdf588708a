/* json_out.c - snapshot -> JSON Lines with jansson.
 *
 * One object per refresh:
 *   elapsed (s), pid, python, command, samples, ticks, errors, dropped,
 *   rate_hz, requested_hz, threads_running, threads_total,
 *   pytop_cpu (% of one CPU), sample_work_us (mean sampler CPU time per
 *   tick in the last window), gil_held_pct, active_pct (% of the last
 *   window's ticks), exited, exit_status (only when exited),
 *   functions: [{name, file, line, own, total, own_s, total_s}]
 *              every function, by own samples, most first
 *   lines:     [{file, line, name, own, total}] every line, same order
 *   threads:   [{tid, name, samples, running, top, state, os_state,
 *                cpu_user, cpu_sys, gil_pct}] by TID; state is one of
 *              running_gil running gil_wait idle gone (unknown until the
 *              thread's first report); os_state the /proc letter or "";
 *              cpu_* % of one CPU and gil_pct % of the window's reports
 * Counts are since start; own/total are sample counts (the percentages
 * are count / samples).  Fields are only ever added. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "json_out.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "profile_table.h"
#include "text.h"

/* Real numbers keep this many significant digits: enough for
 * microseconds over days, without 0.1 printing as 0.10000000000000001. */
#define REAL_DIGITS 10

/* jansson rejects invalid UTF-8; names read from another process can
 * hold anything, so those are cleaned first. */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *clean;

	if (s == NULL)
		s = "";
	j = json_string(s);
	if (j != NULL)
		return j;
	clean = text_sanitized_copy(s);
	j = clean != NULL ? json_string(clean) : NULL;
	free(clean);
	return j;
}

static json_t *jcount(uint64_t n)
{
	return json_integer((json_int_t)n);
}

/* jansson refuses NaN and infinities (json_real returns NULL), which
 * would lose the whole line; a figure that is not a number prints 0. */
static json_t *jreal(double d)
{
	return json_real(isfinite(d) ? d : 0.0);
}

static json_t *function_json(const struct profile_row *r)
{
	return json_pack("{s:o, s:o, s:i, s:o, s:o, s:o, s:o}",
	                 "name", jstr(r->name), "file", jstr(r->file),
	                 "line", r->line, "own", jcount(r->c->own),
	                 "total", jcount(r->c->total),
	                 "own_s", jreal(r->c->own_s),
	                 "total_s", jreal(r->c->total_s));
}

static json_t *line_json(const struct profile_row *r)
{
	return json_pack("{s:o, s:i, s:o, s:o, s:o}",
	                 "file", jstr(r->file), "line", r->line,
	                 "name", jstr(r->name), "own", jcount(r->c->own),
	                 "total", jcount(r->c->total));
}

/* Every function (or line) of s, most own samples first. */
static json_t *profile_rows(const struct snapshot *s, enum profile_mode m)
{
	struct profile_table pt;
	json_t *arr = json_array();

	if (profile_table_build(&pt, s, m, NULL, PROFILE_COL_OWN, true) != 0 ||
	    arr == NULL) {
		json_decref(arr);
		return NULL;
	}
	for (size_t i = 0; i < pt.n; i++) {
		const struct profile_row *r = profile_table_row(&pt, i);
		json_t *o = m == PROFILE_FUNCTIONS ? function_json(r)
		                                   : line_json(r);

		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
			break;
		}
	}
	profile_table_free(&pt);
	return arr;
}

static const char *state_name(enum snap_thread_state st)
{
	switch (st) {
	case THREAD_RUNNING_GIL:
		return "running_gil";
	case THREAD_RUNNING:
		return "running";
	case THREAD_GIL_WAIT:
		return "gil_wait";
	case THREAD_IDLE:
		return "idle";
	case THREAD_GONE:
		return "gone";
	case THREAD_UNKNOWN:
		break;
	}
	return "unknown";
}

static json_t *thread_json(const struct snap_thread *t)
{
	char os_state[2] = { t->os_state, '\0' };

	return json_pack("{s:i, s:o, s:o, s:b, s:o, s:s, s:o, s:o, s:o, s:o}",
	                 "tid", (int)t->tid, "name", jstr(t->name),
	                 "samples", jcount(t->samples),
	                 "running", t->running,
	                 "top", jstr(t->top_func),
	                 "state", state_name(t->state),
	                 "os_state", jstr(os_state),
	                 "cpu_user", jreal(t->cpu_user_pct),
	                 "cpu_sys", jreal(t->cpu_sys_pct),
	                 "gil_pct", jreal(t->gil_pct));
}

static json_t *thread_rows(const struct snapshot *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < s->nthreads; i++) {
		json_t *o = thread_json(&s->threads[i]);

		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static json_t *snapshot_object(const struct snapshot *s)
{
	json_t *o = json_pack(
		"{s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:i,"
		" s:o, s:o, s:o, s:o, s:b}",
		"elapsed", jreal(s->elapsed_s), "pid", (int)s->pid,
		"python", jstr(s->python_version), "command", jstr(s->command),
		"samples", jcount(s->samples), "ticks", jcount(s->ticks),
		"errors", jcount(s->errors), "dropped", jcount(s->dropped),
		"rate_hz", jreal(s->rate_hz), "requested_hz", s->requested_hz,
		"threads_running", s->threads_running,
		"threads_total", s->threads_total,
		"pytop_cpu", jreal(s->pytop_cpu_pct),
		"sample_work_us", jreal(s->sample_work_us),
		"gil_held_pct", jreal(s->gil_held_pct),
		"active_pct", jreal(s->active_pct),
		"exited", s->target_exited);

	if (o == NULL)
		return NULL;
	if ((s->target_exited &&
	     json_object_set_new(o, "exit_status",
	                         json_integer(s->exit_status)) != 0) ||
	    json_object_set_new(o, "functions",
	                        profile_rows(s, PROFILE_FUNCTIONS)) != 0 ||
	    json_object_set_new(o, "lines",
	                        profile_rows(s, PROFILE_LINES)) != 0 ||
	    json_object_set_new(o, "threads", thread_rows(s)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int json_out_print(FILE *out, const struct snapshot *s)
{
	json_t *o = snapshot_object(s);
	int rc = -1;

	if (o != NULL &&
	    json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(REAL_DIGITS))
	    == 0 && fputc('\n', out) != EOF)
		rc = 0;
	json_decref(o);
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	return rc;
}
