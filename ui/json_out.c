/* json_out.c - snapshot -> JSON Lines with jansson.
 *
 * One object per refresh:
 *   elapsed (s), pid, python, command, samples, ticks, errors, dropped,
 *   errors_by_kind: {thread_state, stack_memory, torn_frame, too_deep,
 *              code_object, string, code_changed}: errors by why (every
 *              kind, 0 included; they sum to errors; sample_errors.h),
 *   deep_stacks_cut (samples of stacks deeper than the frame limit: their
 *   middle frames are one "[N more frames]" frame),
 *   rate_hz, requested_hz, threads_running, threads_total,
 *   native_missed (--native only: thread samples without a native stack),
 *   native_method (--native only: "perf", nothing stops, or "ptrace"),
 *   pytop_cpu (% of one CPU), sample_work_us (mean sampler CPU time per
 *   tick in the last window), gil_held_pct, runnable_pct (some thread in
 *   state R), active_pct (... on a CPU), cpu_wait_pct (... waiting in the
 *   run queue for one; active + cpu_wait = runnable) (% of the last
 *   window's ticks), exited, exit_status (only when exited),
 *   recording (-w only): {buckets_merged (100 ms buckets merged into
 *              later ones because the writer was behind), stopped (a
 *              write failed: the file holds what came before)}
 *   functions: [{name, file, line, own, total, own_s, total_s, kind, module}]
 *              kind: "python" or "native" (--native); module: a native
 *              function's library or program file name, else ""
 *              the JSON_MAX_FUNCS (500) functions with most own samples
 *              and the JSON_TOP_TOTAL (20) with most total samples, most
 *              own first, then, if any are left out, one entry named
 *              "[other]" (file "", line 0, kind "other") that sums the
 *              rest (its total: at most samples) and says how many
 *              functions it holds in "rows"
 *   functions_folded, lines_folded: how many functions (lines) pytop
 *              folded into "[other]" to keep its memory bounded (under
 *              code churn: those with at most 0.1 % of the samples and
 *              none in the last 120 000, and those not sampled for a few
 *              seconds once there are over 2048 functions or lines);
 *              "rows" of the
 *              "[other]" entry adds the ones left out of this line
 *   lines:     [{file, line, name, own, total, kind, module}] likewise,
 *              250 of them (JSON_MAX_LINES) and "[other]"; with --native
 *              a Python line also has
 *              native_callees: [{name, module, file, line, own, and the
 *              split fields}], the native leaf functions of its own
 *              samples, most own first (file and line: the native
 *              function's source, or its module and 0)
 *   threads:   [{tid, name, samples, running, top, state, os_state,
 *                cpu_user, cpu_sys, gil_pct}] by TID; state is one of
 *              running_gil running gil_wait idle gone (unknown until the
 *              thread's first report); os_state the /proc letter or "";
 *              cpu_* % of one CPU and gil_pct % of the window's reports
 *   functions and lines also carry python, native, system, cpu_wait,
 *              gil_wait, waiting (the own samples' split, in samples, to
 *              0.1; they add up to own), mem_growth, mem_shrink, mem_net
 *              (growth - shrink) and mem_kept (net over the last minute) in
 *              bytes, and minflt, majflt (page faults) charged to them
 *   gauges:    {rss, rss_peak, mem_limit (bytes), rss_growth_per_min
 *              (bytes per minute over the last minute), cpu_limit (CPUs the
 *              cgroup's quota allows, 0 = no quota), minflt, majflt
 *              (cumulative), minflt_rate, majflt_rate (per second),
 *              cpu_user, cpu_system (seconds), cpu_user_pct,
 *              cpu_system_pct (% of one CPU, last window), threads,
 *              mem_unattributed (bytes), cpu_throttled_pct (the last
 *              window's time the cgroup's CPU quota held the target back,
 *              summed over CPUs, %), verdict (word, "" = none yet),
 *              verdict_reason}; null until /proc was first read
 *   processes: [{pid, ppid, depth, command, python, state, os_state,
 *                cpu_user, cpu_sys, rss, samples, top}] the followed family
 *              (-s; empty without) in tree order; state is one of looking
 *              python not_python unreadable exited; python the version or
 *              why it is not sampled; rss in bytes
 *   subprocesses: {seen, exited, skipped, unsampled} (-s only): processes
 *              found since start, exited, not listed or not sampled
 *              because too many ran at once
 *   process_filter: the PID funcs and lines are restricted to (0 = all)
 *   frames, stacks: with --stacks only (json_stacks.h)
 * Counts are since start, the per-row split and memory figures included
 * (they add up over a run like own does); own/total are sample counts
 * (the percentages are count / samples).  Fields are only ever added. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "json_out.h"
#include "json_arena.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "json_replay.h"
#include "json_stacks.h"
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

/* Split shares are fractions of a sample; a tenth is all they are
 * worth. */
static json_t *jtenth(double d)
{
	return jreal(round(d * 10.0) / 10.0);
}

/* What the row's own samples were doing and what memory they cost, since
 * start, like its own and total (mem_kept: over the last minute).  Takes
 * o; NULL on failure. */
static json_t *with_split(json_t *o, const struct snap_counts *c)
{
	const struct snap_split *sp = &c->split;
	json_t *add = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
	                        "python", jtenth(sp->python),
	                        "native", jtenth(sp->native),
	                        "system", jtenth(sp->system),
	                        "waiting", jtenth(sp->waiting),
	                        "cpu_wait", jtenth(sp->cpu_wait),
	                        "gil_wait", jtenth(sp->gil_wait),
	                        "mem_growth", jcount(sp->mem_growth),
	                        "mem_shrink", jcount(sp->mem_shrink),
	                        "mem_net", (json_int_t)snap_mem_net(sp),
	                        "mem_kept", (json_int_t)c->mem_kept,
	                        "minflt", jcount(sp->minflt),
	                        "majflt", jcount(sp->majflt));

	if (o == NULL || add == NULL || json_object_update(o, add) != 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(add);
	return o;
}

/* "kind": "native" | "python", and the native row's "module". */
static json_t *with_kind(json_t *o, const struct profile_row *r)
{
	if (o != NULL &&
	    (json_object_set_new(o, "kind", json_string(r->native ? "native" : "python")) != 0 ||
	     json_object_set_new(o, "module", jstr(r->module != NULL ? r->module : "")) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *function_json(const struct profile_row *r)
{
	return with_kind(with_split(json_pack("{s:o, s:o, s:i, s:o, s:o, s:o, s:o}",
	                 "name", jstr(r->name), "file", jstr(r->file),
	                 "line", r->line, "own", jcount(r->c->own),
	                 "total", jcount(r->c->total),
	                 "own_s", jreal(r->c->own_s),
	                 "total_s", jreal(r->c->total_s)), r->c), r);
}

static json_t *callee_json(const struct snap_callee *c)
{
	return with_split(json_pack("{s:o, s:o, s:o, s:i, s:o}",
	                  "name", jstr(c->name), "module", jstr(c->module),
	                  "file", jstr(c->file), "line", c->line,
	                  "own", jcount(c->c.own)), &c->c);
}

/* The native functions a Python line called, most own first.  Takes o;
 * NULL on failure. */
static json_t *with_callees(json_t *o, const struct snapshot *s,
                            const struct profile_row *r)
{
	size_t n;
	const struct snap_callee *c = snapshot_callees_of(s, r->file, r->line, &n);
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < n; i++)
		if (json_array_append_new(arr, callee_json(&c[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	if (o == NULL || arr == NULL ||
	    json_object_set_new(o, "native_callees", arr) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *line_json(const struct snapshot *s, const struct profile_row *r)
{
	json_t *o = with_kind(with_split(json_pack("{s:o, s:i, s:o, s:o, s:o}",
	                 "file", jstr(r->file), "line", r->line,
	                 "name", jstr(r->name), "own", jcount(r->c->own),
	                 "total", jcount(r->c->total)), r->c), r);

	return s->native && !r->native ? with_callees(o, s, r) : o;
}

/* A JSON line stays bounded however many functions the target ran: the
 * rows with most own samples, this many functions and lines, and the
 * JSON_TOP_TOTAL with most total (main() and the other outer frames,
 * which have little own time), then one "[other]" entry for the rest.
 * At about 250 bytes a row that stays well under 256 KB. */
#define JSON_MAX_FUNCS 500
#define JSON_MAX_LINES 250
#define JSON_TOP_TOTAL 20

/* The snapshot's own "[other]" row (rows the aggregator folded), if any. */
static const struct snap_counts *folded_counts(const struct snapshot *s,
                                               enum profile_mode m)
{
	if (m == PROFILE_FUNCTIONS) {
		for (size_t i = 0; i < s->nfuncs; i++)
			if (s->funcs[i].other)
				return &s->funcs[i].c;
	} else {
		for (size_t i = 0; i < s->nlines; i++)
			if (s->lines[i].other)
				return &s->lines[i].c;
	}
	return NULL;
}

/* What the "[other]" entry sums: the folded rows and those left out. */
struct json_other {
	struct snap_counts c;
	uint64_t rows;
};

/* The "[other]" entry; takes nothing, NULL on failure. */
static json_t *other_json(const struct snapshot *s, enum profile_mode m,
                          struct json_other *ot)
{
	const struct profile_row r = { .name = "[other]", .file = "",
	                               .c = &ot->c, .module = "" };
	json_t *o;

	if (ot->c.total > s->samples) /* a sample counts once per row */
		ot->c.total = s->samples;
	o = m == PROFILE_FUNCTIONS ? function_json(&r) : line_json(s, &r);
	if (o != NULL &&
	    (json_object_set_new(o, "kind", json_string("other")) != 0 ||
	     json_object_set_new(o, "rows", jcount(ot->rows)) != 0)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static int by_total_desc(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a < b) - (a > b);
}

/* The smallest total among the JSON_TOP_TOTAL rows with most total (0:
 * every row qualifies; UINT64_MAX: none, on OOM).  Rows tied with it get
 * in too, up to JSON_TOP_TOTAL beyond the cap in all. */
static uint64_t top_total_floor(const struct profile_table *pt)
{
	uint64_t *t, floor;

	if (pt->n <= JSON_TOP_TOTAL)
		return 0;
	t = malloc(pt->n * sizeof(*t));
	if (t == NULL)
		return UINT64_MAX;
	for (size_t i = 0; i < pt->n; i++)
		t[i] = profile_table_row(pt, i)->c->total;
	qsort(t, pt->n, sizeof(*t), by_total_desc);
	floor = t[JSON_TOP_TOTAL - 1];
	free(t);
	return floor > 0 ? floor : 1;
}

/* The functions (or lines) of s the JSON line lists, most own first
 * (see JSON_MAX_FUNCS), then "[other]" when rows were folded or left
 * out. */
static json_t *profile_rows(const struct snapshot *s, enum profile_mode m)
{
	struct profile_table pt;
	const struct snap_counts *folded = folded_counts(s, m);
	struct json_other ot = {
		.rows = m == PROFILE_FUNCTIONS ? s->folded_funcs : s->folded_lines };
	size_t max = m == PROFILE_FUNCTIONS ? JSON_MAX_FUNCS : JSON_MAX_LINES;
	json_t *arr = json_array();
	size_t shown = 0;
	uint64_t floor;

	if (profile_table_build(&pt, s, m, NULL, COUNT_OWN, true) != 0 ||
	    arr == NULL) {
		json_decref(arr);
		return NULL;
	}
	floor = top_total_floor(&pt);
	for (size_t i = 0; arr != NULL && i < pt.n; i++) {
		const struct profile_row *r = profile_table_row(&pt, i);
		json_t *o;

		if (r->c == folded ||
		    (shown >= max + JSON_TOP_TOTAL ||
		     (shown >= max && r->c->total < floor))) {
			snap_counts_add(&ot.c, r->c);
			ot.rows += r->c != folded;
			continue;
		}
		shown++;
		o = m == PROFILE_FUNCTIONS ? function_json(r) : line_json(s, r);
		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	if (arr != NULL && ot.rows > 0 &&
	    json_array_append_new(arr, other_json(s, m, &ot)) != 0) {
		json_decref(arr);
		arr = NULL;
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

	return json_pack("{s:i, s:o, s:o, s:o, s:b, s:o, s:s, s:o, s:o, s:o, s:o}",
	                 "tid", (int)t->tid, "name", jstr(t->name),
	                 "py_name", jstr(t->py_name),
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

/* The process gauges and the verdict; null until the first /proc read
 * succeeded. */
static json_t *gauges_json(const struct snapshot *s)
{
	const struct snap_gauges *g = &s->gauges;
	json_t *o;

	if (!g->valid)
		return json_null();
	o = json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i,"
		" s:o, s:s, s:o}",
		"rss", jcount(g->rss), "rss_peak", jcount(g->rss_peak),
		"rss_growth_per_min", jreal(g->rss_growth_per_min),
		"mem_limit", jcount(g->mem_limit), "cpu_limit", jreal(g->cpu_limit),
		"minflt", jcount(g->minflt), "majflt", jcount(g->majflt),
		"minflt_rate", jreal(g->minflt_rate),
		"majflt_rate", jreal(g->majflt_rate),
		"cpu_user", jreal(g->cpu_user),
		"cpu_system", jreal(g->cpu_system),
		"cpu_user_pct", jreal(g->cpu_user_pct),
		"cpu_system_pct", jreal(g->cpu_system_pct),
		"threads", g->threads,
		"mem_unattributed", jcount(g->mem_unattributed),
		"verdict", snapshot_verdict_word(s->verdict),
		"verdict_reason", jstr(s->verdict_reason));
	if (o != NULL && json_object_set_new(o, "cpu_throttled_pct",
	                                     jreal(g->cpu_throttled_pct)) != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static const char *process_state_name(enum snap_process_state st)
{
	switch (st) {
	case PROCESS_PYTHON:
		return "python";
	case PROCESS_NOT_PYTHON:
		return "not_python";
	case PROCESS_UNREADABLE:
		return "unreadable";
	case PROCESS_EXITED:
		return "exited";
	case PROCESS_LOOKING:
		break;
	}
	return "looking";
}

static json_t *process_json(const struct snap_process *p)
{
	char os_state[2] = { p->os_state, '\0' };

	return json_pack("{s:i, s:i, s:i, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o}",
	                 "pid", (int)p->pid, "ppid", (int)p->ppid, "depth", p->depth,
	                 "command", jstr(p->command), "python", jstr(p->python),
	                 "state", process_state_name(p->state),
	                 "os_state", jstr(os_state),
	                 "cpu_user", jreal(p->cpu_user_pct),
	                 "cpu_sys", jreal(p->cpu_sys_pct),
	                 "rss", jcount(p->rss_bytes),
	                 "samples", jcount(p->samples),
	                 "top", jstr(p->top_func));
}

static json_t *process_rows(const struct snapshot *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < s->nprocesses; i++) {
		json_t *o = process_json(&s->processes[i]);

		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

/* {kind: count} for every error kind (sample_errors.h). */
static json_t *errors_by_kind(const struct snapshot *s)
{
	json_t *o = json_object();

	for (int k = SAMPLE_ERR_NONE + 1; o != NULL && k < SAMPLE_ERR_KINDS; k++)
		if (json_object_set_new(o, sample_error_name((enum sample_error)k),
		                        jcount(s->errors_by_kind[k])) != 0) {
			json_decref(o);
			o = NULL;
		}
	return o;
}

/* Adds processes, process_filter and (-s) subprocesses; 0 or -1. */
static int add_processes(json_t *o, const struct snapshot *s)
{
	if (json_object_set_new(o, "processes", process_rows(s)) != 0 ||
	    json_object_set_new(o, "process_filter", json_integer(s->process_filter)) != 0)
		return -1;
	if (!s->following)
		return 0;
	return json_object_set_new(o, "subprocesses",
		json_pack("{s:o, s:o, s:o, s:o}",
		          "seen", jcount(s->processes_seen),
		          "exited", jcount(s->processes_exited),
		          "skipped", jcount(s->processes_skipped),
		          "unsampled", jcount(s->processes_unsampled)));
}

/* --push's health (man pytop: PUSH). */
static json_t *push_json(const struct snap_push *p)
{
	json_t *o = json_object();

	if (o != NULL &&
	    (json_object_set_new(o, "sent", jcount(p->sent)) != 0 ||
	     json_object_set_new(o, "failed", jcount(p->failed)) != 0 ||
	     json_object_set_new(o, "dropped", jcount(p->dropped)) != 0 ||
	     json_object_set_new(o, "failing_tries", json_integer(p->failing_tries)) != 0 ||
	     json_object_set_new(o, "last_ok_unix", json_integer(p->last_ok_unix)) != 0 ||
	     json_object_set_new(o, "last_error", jstr(p->last_error)) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *snapshot_object(const struct snapshot *s)
{
	json_t *o = json_pack(
		"{s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:i,"
		" s:o, s:o, s:o, s:o, s:b, s:b}",
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
		"exited", s->target_exited, "exec", s->target_exec);

	if (o == NULL)
		return NULL;
	if ((s->target_exited &&
	     json_object_set_new(o, "exit_status",
	                         json_integer(s->exit_status)) != 0) ||
	    (s->native &&
	     (json_object_set_new(o, "native_missed", jcount(s->native_missed)) != 0 ||
	      json_object_set_new(o, "native_method",
	                          json_string(s->native_method ? s->native_method : "")) != 0)) ||
	    json_object_set_new(o, "errors_by_kind", errors_by_kind(s)) != 0 ||
	    json_object_set_new(o, "deep_stacks_cut", jcount(s->deep_cut)) != 0 ||
	    json_object_set_new(o, "time_us", json_integer(s->time_us)) != 0 ||
	    json_object_set_new(o, "runnable_pct", jreal(s->runnable_pct)) != 0 ||
	    json_object_set_new(o, "cpu_wait_pct", jreal(s->cpu_wait_pct)) != 0 ||
	    json_object_set_new(o, "functions",
	                        profile_rows(s, PROFILE_FUNCTIONS)) != 0 ||
	    json_object_set_new(o, "functions_folded", jcount(s->folded_funcs)) != 0 ||
	    json_object_set_new(o, "lines_folded", jcount(s->folded_lines)) != 0 ||
	    json_object_set_new(o, "stacks_held", jcount(s->nstacks)) != 0 ||
	    json_object_set_new(o, "stacks_folded", jcount(s->folded_stacks)) != 0 ||
	    json_object_set_new(o, "lines",
	                        profile_rows(s, PROFILE_LINES)) != 0 ||
	    json_object_set_new(o, "threads", thread_rows(s)) != 0 ||
	    json_object_set_new(o, "gauges", gauges_json(s)) != 0 ||
	    (s->push.on && json_object_set_new(o, "push", push_json(&s->push)) != 0) ||
	    (s->recording &&
	     json_object_set_new(o, "recording",
	                         json_pack("{s:o, s:b}", "buckets_merged",
	                                   jcount(s->record_merged),
	                                   "stopped", s->record_failed)) != 0) ||
	    add_processes(o, s) != 0 ||
	    (s->replay.on && json_replay_mark(o, s) != 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int print_object(FILE *out, const struct snapshot *s, bool stacks)
{
	static bool installed;
	if (!installed) {
		json_arena_install();
		installed = true;
	}
	json_arena_begin();
	json_t *o = snapshot_object(s);
	int rc = -1;

	if (o != NULL && stacks && json_stacks_add(o, s) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL &&
	    json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(REAL_DIGITS))
	    == 0 && fputc('\n', out) != EOF)
		rc = 0;
	json_decref(o);
	json_arena_end();
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	return rc;
}

int json_out_print(FILE *out, const struct snapshot *s)
{
	return print_object(out, s, false);
}

int json_out_print_stacks(FILE *out, const struct snapshot *s)
{
	return print_object(out, s, true);
}
