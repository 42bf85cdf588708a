/* replay_snapshot.c - a snapshot of a recording (replay_snapshot.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/replay_snapshot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/stack_derive.h"
#include "record/record_timeline.h"

/* Replay shows at most this many processes (a hand-made file may list
 * millions; their tree order is quadratic). */
#define REPLAY_MAX_PROCESSES 4096

static int stack_key_cmp(const void *pa, const void *pb)
{
	const struct snap_stack *a = pa, *b = pb;

	if (a->node != b->node)
		return a->node < b->node ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The window's figures into the whole span's stacks: both were read
 * from the same tables, so a node is the same stack in both. */
static void merge_window(struct snapshot *all, struct snapshot *win)
{
	for (size_t i = 0; i < all->nstacks; i++) {
		all->stacks[i].samples_win = 0;
		all->stacks[i].split_win = (struct snap_split){ 0 };
	}
	if (win == NULL || win->nstacks == 0)
		return;
	qsort(win->stacks, win->nstacks, sizeof *win->stacks, stack_key_cmp);
	for (size_t i = 0; i < all->nstacks; i++) {
		struct snap_stack *k = &all->stacks[i];
		const struct snap_stack *w = bsearch(k, win->stacks, win->nstacks,
		                                     sizeof *win->stacks, stack_key_cmp);

		if (w != NULL) {
			k->samples_win = w->samples;
			k->split_win = w->split;
		}
	}
}

static int read_stacks(struct record_reader *r, const struct replay_span *sp,
                       struct snapshot *out, struct pytop_error *err)
{
	struct snapshot win;
	int rc;

	memset(out, 0, sizeof *out);
	if (!(sp->at > sp->from))
		return 0;
	if (record_read_span(r, sp->from, sp->at, out, err) != 0)
		return -1;
	if (!(sp->prev > sp->from)) {
		for (size_t i = 0; i < out->nstacks; i++) {
			out->stacks[i].samples_win = out->stacks[i].samples;
			out->stacks[i].split_win = out->stacks[i].split;
		}
		return 0;
	}
	if (!(sp->at > sp->prev)) {
		merge_window(out, NULL);
		return 0;
	}
	rc = record_read_span(r, sp->prev, sp->at, &win, err);
	if (rc == 0) {
		merge_window(out, &win);
		snapshot_free(&win);
	} else {
		snapshot_free(out);
	}
	return rc;
}

static bool stack_counts(const struct snap_stack *k, const struct replay_span *sp)
{
	return (sp->tid == 0 || k->tid == sp->tid) && (sp->pid == 0 || k->pid == sp->pid);
}

static bool fill_rows(struct snapshot *out, const struct replay_span *sp)
{
	struct stack_derived d;

	if (!stack_derive(out, sp->tid, sp->pid, &d))
		return false;
	/* Rows with no samples under the filter (the unused frame 0, other
	 * threads' functions) are not rows a live snapshot has. */
	out->funcs = d.funcs;
	out->nfuncs = 0;
	for (size_t i = 0; i < d.nfuncs; i++)
		if (d.funcs[i].c.own != 0 || d.funcs[i].c.total != 0)
			out->funcs[out->nfuncs++] = d.funcs[i];
	out->lines = d.lines;
	out->nlines = 0;
	for (size_t i = 0; i < d.nlines; i++)
		if (d.lines[i].c.own != 0 || d.lines[i].c.total != 0)
			out->lines[out->nlines++] = d.lines[i];
	/* A --native recording's callees (the lines view's native calls),
	 * in the order snapshot_callees_of searches. */
	free(out->callees);
	out->callees = d.callees;
	out->ncallees = d.ncallees;
	if (out->ncallees > 1)
		qsort(out->callees, out->ncallees, sizeof *out->callees,
		      snapshot_callee_cmp);
	out->samples = d.samples;
	out->samples_win = d.samples_win;
	out->split = d.split;
	for (size_t i = 0; i < out->nstacks; i++)
		if (stack_counts(&out->stacks[i], sp))
			snap_split_add(&out->split_win, &out->stacks[i].split_win);
	out->thread_filter = sp->tid;
	out->process_filter = sp->pid;
	return true;
}

static double rate(uint64_t now, uint64_t before, double seconds)
{
	return now > before && seconds > 0 ? (double)(now - before) / seconds : 0;
}

void replay_gauges(struct record_reader *r, double prev, double at, struct snap_gauges *out)
{
	struct record_gauges_at g, p;
	double dt;

	memset(out, 0, sizeof *out);
	/* The process's figures: its last reading by then. */
	if (!record_timeline_gauges(r, at, true, &g))
		return;
	record_timeline_gauges(r, prev, true, &p);
	dt = g.t_end - p.t_end;
	*out = (struct snap_gauges){
		.valid = true, .rss = g.rss, .rss_peak = g.rss_peak,
		.minflt = g.minflt, .majflt = g.majflt,
		.cpu_user = g.cpu_user, .cpu_system = g.cpu_system, .threads = g.threads,
	};
	if (!p.found || !p.valid || !(dt > 0))
		return;
	out->minflt_rate = rate(g.minflt, p.minflt, dt);
	out->majflt_rate = rate(g.majflt, p.majflt, dt);
	out->cpu_user_pct = g.cpu_user > p.cpu_user ? 100.0 * (g.cpu_user - p.cpu_user) / dt : 0;
	out->cpu_system_pct = g.cpu_system > p.cpu_system
	                      ? 100.0 * (g.cpu_system - p.cpu_system) / dt : 0;
}

static void fill_gauges(struct record_reader *r, const struct replay_span *sp,
                        struct snapshot *out)
{
	struct record_gauges_at g, p;
	double dt;

	if (!record_timeline_gauges(r, sp->at, false, &g))
		return;
	record_timeline_gauges(r, sp->prev, false, &p);
	dt = g.t_end - p.t_end;
	out->ticks = g.ticks;
	out->errors = g.errors;
	out->dropped = g.dropped;
	out->rate_hz = p.found ? rate(g.ticks, p.ticks, dt) : rate(g.ticks, 0, g.t_end);
	replay_gauges(r, sp->prev, sp->at, &out->gauges);
}

/* The leaf function of tid's (or pid's) most sampled stack in the
 * window, "" when it had none. */
static const char *top_func(const struct snapshot *s, pid_t tid, pid_t pid)
{
	const struct snap_stack *best = NULL;

	for (size_t i = 0; i < s->nstacks; i++) {
		const struct snap_stack *k = &s->stacks[i];

		if ((tid != 0 && k->tid != tid) || (pid != 0 && k->pid != pid) ||
		    k->samples_win == 0)
			continue;
		if (best == NULL || k->samples_win > best->samples_win)
			best = k;
	}
	if (best == NULL || best->node >= s->nstack_nodes ||
	    s->stack_nodes[best->node].frame >= s->nstack_frames)
		return "";
	return s->stack_frames[s->stack_nodes[best->node].frame].name;
}

static void samples_of(const struct snapshot *s, pid_t tid, pid_t pid, uint64_t *all,
                       uint64_t *win)
{
	*all = *win = 0;
	for (size_t i = 0; i < s->nstacks; i++)
		if ((tid == 0 || s->stacks[i].tid == tid) && (pid == 0 || s->stacks[i].pid == pid)) {
			*all += s->stacks[i].samples;
			*win += s->stacks[i].samples_win;
		}
}

static int fill_threads(struct record_reader *r, const struct replay_span *sp,
                        struct snapshot *out, struct pytop_error *err)
{
	struct record_life *v;
	size_t n;

	if (record_timeline_threads(r, &v, &n, err) != 0)
		return -1;
	out->threads = calloc(n ? n : 1, sizeof *out->threads);
	if (out->threads == NULL) {
		free(v);
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory replaying; replay a shorter "
		          "window (--from, --to)");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct snap_thread *t = &out->threads[out->nthreads];

		if (!(v[i].first_s < sp->at))
			continue; /* not born yet */
		t->tid = v[i].id;
		t->name = v[i].name;
		t->py_name = "";
		t->top_func = top_func(out, v[i].id, v[i].parent);
		samples_of(out, v[i].id, v[i].parent, &t->samples, &t->samples_win);
		t->running = t->samples_win > 0;
		/* Not in a recording: NaN, which the views show as unknown. */
		t->cpu_user_pct = t->cpu_sys_pct = t->gil_pct = NAN;
		/* Its last samples ended before this window: gone, as live. */
		t->state = v[i].last_s <= sp->prev && sp->prev > sp->from ? THREAD_GONE
		                                                           : THREAD_UNKNOWN;
		if (t->state != THREAD_GONE)
			out->threads_total++;
		out->nthreads++;
	}
	free(v);
	return 0;
}

/* Tree order: each process after its parent, depth from the first
 * listed ancestor.  Iterative (a hostile file's parents may loop: what
 * no root reaches is listed at depth 0 at the end). */
static void tree_order(struct record_life *v, size_t n, struct snap_process *out,
                       const struct record_life **order, size_t *k)
{
	bool *done = calloc(n ? n : 1, sizeof *done);
	size_t *stack = calloc(n ? n : 1, sizeof *stack);
	int *depth = calloc(n ? n : 1, sizeof *depth);

	*k = 0;
	if (done == NULL || stack == NULL || depth == NULL) {
		free(done);
		free(stack);
		free(depth);
		return;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t root = 0; root < n; root++) {
			size_t top = 0;
			bool has_parent = false;

			for (size_t j = 0; pass == 0 && j < n; j++)
				has_parent |= j != root && v[j].id == v[root].parent;
			if (done[root] || (pass == 0 && has_parent))
				continue;
			stack[top++] = root;
			depth[root] = 0;
			done[root] = true;
			while (top > 0) {
				size_t i = stack[--top];

				out[*k].depth = depth[i];
				order[(*k)++] = &v[i];
				for (size_t j = n; j-- > 0;)
					if (!done[j] && v[j].parent == v[i].id) {
						done[j] = true;
						depth[j] = depth[i] + 1;
						stack[top++] = j;
					}
			}
		}
	free(done);
	free(stack);
	free(depth);
}

static int fill_processes(struct record_reader *r, const struct replay_span *sp,
                          struct snapshot *out, struct pytop_error *err)
{
	struct record_life *v, *born;
	const struct record_life **order;
	size_t n, nborn = 0, k = 0;

	if (record_timeline_processes(r, &v, &n, err) != 0)
		return -1;
	born = calloc(n ? n : 1, sizeof *born);
	order = calloc(n ? n : 1, sizeof *order);
	out->processes = calloc(n ? n : 1, sizeof *out->processes);
	for (size_t i = 0; born && i < n && nborn < REPLAY_MAX_PROCESSES; i++)
		if (v[i].first_s < sp->at)
			born[nborn++] = v[i];
	if (born != NULL && order != NULL && out->processes != NULL)
		tree_order(born, nborn, out->processes, order, &k);
	for (size_t i = 0; i < k; i++) {
		struct snap_process *p = &out->processes[i];
		const struct record_life *l = order[i];

		p->pid = l->id;
		p->ppid = l->parent;
		p->command = l->name;
		p->python = l->python;
		samples_of(out, 0, l->id, &p->samples, &p->samples_win);
		p->top_func = top_func(out, 0, l->id);
		p->state = l->last_s <= sp->prev && sp->prev > sp->from ? PROCESS_EXITED
		           : p->samples > 0 ? PROCESS_PYTHON
		           : l->python[0] != '\0' ? PROCESS_UNREADABLE : PROCESS_NOT_PYTHON;
	}
	out->nprocesses = k;
	out->processes_seen = k > 0 ? k - 1 : 0;
	free(born);
	free(order);
	free(v);
	return 0;
}

static void fill_header(struct record_reader *r, const struct replay_span *sp,
                        struct snapshot *out)
{
	const struct record_info *i = record_read_info(r);

	out->pid = i->pid;
	out->target_started = i->started;
	snprintf(out->command, sizeof out->command, "%s", i->command);
	snprintf(out->python_version, sizeof out->python_version, "%s", i->python_version);
	out->elapsed_s = sp->at;
	out->time_us = (int64_t)llround((i->started + sp->at) * 1e6);
	out->window_s = sp->at - sp->prev;
	out->requested_hz = i->rate_hz;
	out->idle_mode = i->idle;
	out->split_off = i->no_split;
	out->native = i->native;
	out->native_method = "";
	out->following = i->subprocesses;
	out->replay.on = true;
	out->replay.extent_s = i->end_s;
	out->replay.at_s = sp->at;
	out->replay.from_s = sp->from;
	out->replay.to_s = sp->at;
	out->replay.delay_s = i->delay_s;
}

int replay_snapshot_build(struct record_reader *r, const struct replay_span *sp,
                          struct snapshot *out, struct pytop_error *err)
{
	if (read_stacks(r, sp, out, err) != 0)
		return -1;
	err->text[0] = '\0';
	if (!fill_rows(out, sp) || fill_threads(r, sp, out, err) != 0 ||
	    (record_read_info(r)->subprocesses && fill_processes(r, sp, out, err) != 0) ||
	    !snapshot_own_strings(out)) {
		if (err->text[0] == '\0')
			error_set(err, PYTOP_ERR_INTERNAL, "out of memory replaying; replay a "
			          "shorter window (--from, --to)");
		snapshot_free(out);
		return -1;
	}
	fill_header(r, sp, out);
	fill_gauges(r, sp, out);
	return 0;
}
