/* session.c - one profiling session: target, sampler, ring, aggregator and
 * follower wired into a snapshot_source for the views (session.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/aggregator.h"
#include "clock.h"
#include "target/proc_gauges.h"
#include "target/proc_stat_fast.h"
#include "profile/native_merge.h"
#include "sampler/proc_follow.h"
#include "cpython/py_runtime.h"
#include "cpython/py_runtime_wait.h"
#include "transport/ring.h"
#include "sampler/sampler.h"
#include "sandbox.h"
#include "target/target.h"
#include "profile/rss_rate.h"
#include "profile/debug_package.h"
#include "profile/recent.h"
#include "profile/sample_delta.h"
#include "profile/verdict.h"
#include "record/recorder.h"

/* 16 MiB holds more than a second of 400-frame samples at 10 kHz, so a
 * consumer that stalls for a redraw never costs samples. */
#define RING_BYTES (16u << 20)
#define TARGET_EXIT_GRACE_NS 2000000000ull
#define ORDERS_BYTES (1u << 20) /* follower -> sampler: ~200 runtimes */
/* One poll drains the ring for at most this long.  A consumer slower than
 * the sampler (2 048-frame stacks at 1 kHz on a starved CPU) never found
 * the ring empty and stayed in one poll: no snapshot, no key, --duration
 * overrun by ten seconds.  What is left waits in the ring for the next
 * poll; what no longer fits is dropped and counted.  Long enough that the
 * view's sleep between polls costs little then (100 ms dropped 5 times as
 * many 2 048-frame samples at -r 10000). */
#define POLL_BUDGET_NS 250000000ull
#define SCHED_HORIZON 4

/* Figures at the start of the current refresh window. */
struct window_mark {
	uint64_t wall_ns, cpu_ns, ticks, work_ns, gil_ticks, runnable_ticks;
	uint64_t run_ns, delay_ns;
};

struct session {
	const struct options *opts; /* borrowed */
	struct target target;
	struct py_runtime rt;
	struct ring *ring;          /* owned; sampler produces, we consume */
	struct sampler *sampler;    /* owned */
	struct ring *orders;        /* owned, -s only: follower -> sampler */
	struct follower *follower;  /* owned, -s only */
	struct aggregator *agg;     /* owned */
	struct native_merge *merge; /* owned; --native only */
	bool python;                /* the target has a Python runtime */
	bool native_all;            /* plumbing frames shown (--native) */
	uint8_t *rec;               /* one record being consumed, owned */
	struct sample_delta *delta; /* owned: REC_SAMPLE_DELTA -> REC_SAMPLE */
	size_t rec_cap;
	uint64_t start_ns;
	uint64_t start_unix_ns;     /* the same moment, Unix time: output stamps */
	struct window_mark mark;
	/* The window starts of the last SCHED_HORIZON windows, oldest at
	 * sched_next: the horizon of the runnable time's split. */
	struct window_mark sched_marks[SCHED_HORIZON];
	size_t sched_next;
	pid_t thread_filter;        /* 0 = all threads */
	struct proc_gauges *gauges; /* owned */
	struct proc_gauge_read gauge_prev; /* at the previous snapshot */
	uint64_t gauge_prev_ns;     /* when it was read; 0 = never */
	struct rss_rate rss_rate;   /* RSS reads of the last minute */
	double rss_growth_per_min;  /* at the latest read */
	bool gauges_final;          /* gauge_prev holds the reaped program's
	                               final figures */
	struct recent *recent;      /* owned: counts at past refreshes */
	size_t nosym_checked;       /* --native: modules without names looked
	                               up in the dpkg database so far */
	char debug_packages[128];   /* what they found */
	double window_s;            /* > 0: snapshots count the last window_s */
	struct proc_gauge_read gauge_first; /* the first read, and when */
	uint64_t gauge_first_ns;
	uint64_t mem_limit;
	double started;             /* the target's start (proc_gauges_started) */
	double cpu_limit;
	uint64_t throttled_prev;    /* the cgroup's throttled ns at the previous
	                               snapshot */
	pid_t process_filter;       /* 0 = all processes */
	struct pytop_error sandbox; /* why the seccomp filter is off; code 0: on */
	struct recorder *recorder;  /* owned; -w or pytop record, else NULL */
	struct proc_stat_fast *stat_fast; /* owned, recording only: its gauges */
};

static struct window_mark take_mark(const struct session *s)
{
	const struct sampler_stats *st = sampler_stats(s->sampler);
	uint64_t now = clock_now_ns();

	/* Once the sampler has stopped, time stops with its last tick, so the
	 * rate is not diluted by the wait for the target's exit status. */
	if (atomic_load_explicit(&st->finished, memory_order_acquire) &&
	    atomic_load(&st->last_tick_ns) != 0)
		now = atomic_load(&st->last_tick_ns);
	return (struct window_mark){
		.wall_ns = now,
		.cpu_ns = clock_process_cpu_ns(),
		.ticks = atomic_load(&st->ticks),
		.work_ns = atomic_load(&st->work_ns),
		.gil_ticks = atomic_load(&st->gil_ticks),
		.runnable_ticks = atomic_load(&st->runnable_ticks),
		.run_ns = atomic_load(&st->run_ns),
		.delay_ns = atomic_load(&st->delay_ns),
	};
}

/* Seconds since sampling started: the recording's clock. */
static double session_elapsed(const struct session *s)
{
	return (double)(clock_now_ns() - s->start_ns) / NSEC_PER_SEC;
}

/* The figures a recording keeps per bucket: the process (cumulative, as
 * read now, on the consumer side like the snapshot's gauges: the fast
 * ones from /proc/PID/stat; the peak and the OS threads as the last
 * refresh read them) and the sampler's health. */
static struct rb_gauges record_gauges(struct session *s)
{
	const struct sampler_stats *st = sampler_stats(s->sampler);
	struct proc_stat_fast_read r;
	struct rb_gauges g = {
		.ticks = atomic_load(&st->ticks), .errors = atomic_load(&st->errors),
		.dropped = ring_dropped(s->ring),
	};

	/* A zombie has no memory left: no figures rather than a 0 RSS. */
	if (!s->target.exited && s->stat_fast != NULL &&
	    proc_stat_fast_read(s->stat_fast, &r) && r.rss > 0) {
		g.valid = true;
		g.rss = r.rss;
		g.rss_peak = s->gauge_prev.rss_peak > r.rss ? s->gauge_prev.rss_peak : r.rss;
		g.minflt = r.minflt;
		g.majflt = r.majflt;
		g.utime_ns = r.utime_ns;
		g.stime_ns = r.stime_ns;
		g.threads = s->gauge_prev.threads;
	}
	return g;
}

static void record_tick(struct session *s)
{
	double now = session_elapsed(s);
	struct rb_gauges g;

	if (!recorder_due(s->recorder, now))
		return;
	g = record_gauges(s);
	recorder_tick(s->recorder, s->agg, now, &g);
}

/* Before the aggregator forgets its counts, the recording takes them. */
static void record_flush(struct session *s)
{
	struct rb_gauges g;

	if (s->recorder == NULL)
		return;
	g = record_gauges(s);
	recorder_flush(s->recorder, s->agg, session_elapsed(s), &g);
}

/* A snapshot is taken: its boundary is a bucket's (see recorder_refresh). */
static void record_refresh(struct session *s)
{
	struct rb_gauges g;

	if (s->recorder == NULL)
		return;
	g = record_gauges(s);
	recorder_refresh(s->recorder, s->agg, session_elapsed(s), &g);
}

static bool session_poll(void *ctx)
{
	struct session *s = ctx;
	size_t n;
	bool finished = atomic_load_explicit(&sampler_stats(s->sampler)->finished,
	                                     memory_order_acquire);
	uint64_t until = clock_now_ns() + POLL_BUDGET_NS;

	while ((n = ring_pop(s->ring, s->rec, s->rec_cap)) > 0) {
		const void *rec = sample_delta_expand(s->delta, s->rec, n, &n);

		if (s->merge != NULL)
			native_merge_ingest(s->merge, rec, n);
		else
			aggregator_ingest(s->agg, rec, n);
		if (clock_now_ns() >= until)
			break;
	}
	target_poll_exit(&s->target);
	record_tick(s);
	/* Only finished once the sampler stopped producing and all it
	 * produced has been consumed. */
	if (!finished || ring_used(s->ring) != 0)
		return true;
	/* The sampler stops on its own only when the target's memory is gone,
	 * which happens before the kernel shows the process as a zombie. */
	target_wait_exit(&s->target, TARGET_EXIT_GRACE_NS);
	aggregator_settle(s->agg);
	return false;
}

/* --native: each module found with unnamed functions is looked up once
 * (a read of the target's dpkg database, here on the consumer side, never
 * on the sampler's clock). */
static void fill_debug_packages(struct session *s, struct snapshot *out)
{
	const char *const *paths;
	size_t n = s->merge != NULL ? native_merge_unnamed_modules(s->merge, &paths) : 0;

	for (; s->nosym_checked < n; s->nosym_checked++) {
		char pkg[64];
		size_t len = strlen(s->debug_packages);

		if (debug_package_of(s->target.pid, paths[s->nosym_checked], pkg, sizeof(pkg)) &&
		    strstr(s->debug_packages, pkg) == NULL)
			snprintf(s->debug_packages + len, sizeof(s->debug_packages) - len, "%s%s",
			         len > 0 ? " " : "", pkg);
	}
	snprintf(out->debug_packages, sizeof(out->debug_packages), "%s", s->debug_packages);
}

static void fill_following(const struct session *s, struct snapshot *out)
{
	const struct follow_stats *fs;

	out->following = s->follower != NULL;
	if (s->follower == NULL)
		return;
	fs = follower_stats(s->follower);
	out->processes_seen = atomic_load(&fs->seen);
	out->processes_exited = atomic_load(&fs->exited);
	out->processes_skipped = atomic_load(&fs->skipped);
	out->processes_unsampled = atomic_load(&fs->unsampled);
}

/* Runnable ticks divided into on a CPU and waiting for one by how the
 * runnable threads' run time and run-queue delay grew.  The kernel books
 * a wait when it ends, so one window's growth may hold the wait of the
 * window before: the ratio is taken over the last SCHED_HORIZON windows.
 * Neither grew: no runnable thread got a CPU, so all of it was waiting
 * (unless the kernel has no schedstat at all: then runnable is all
 * pytop can tell, and counts as on a CPU). */
static void fill_active(struct session *s, struct snapshot *out,
                        const struct window_mark *now, uint64_t dticks)
{
	const struct window_mark *old = &s->sched_marks[s->sched_next];
	double runnable = dticks ? 100.0 * (double)(now->runnable_ticks - s->mark.runnable_ticks) /
	                           (double)dticks : 0;
	uint64_t run = now->run_ns - old->run_ns, delay = now->delay_ns - old->delay_ns;
	bool known = now->run_ns + now->delay_ns > 0;
	double wait = run + delay ? (double)delay / (double)(run + delay) : known;

	out->runnable_pct = runnable;
	out->active_pct = runnable * (1 - wait);
	out->cpu_wait_pct = runnable * wait;
	s->sched_marks[s->sched_next] = s->mark;
	s->sched_next = (s->sched_next + 1) % SCHED_HORIZON;
}

static void fill_header(struct session *s, struct snapshot *out, const struct window_mark *now)
{
	const struct sampler_stats *st = sampler_stats(s->sampler);
	double window = (double)(now->wall_ns - s->mark.wall_ns) / NSEC_PER_SEC;
	uint64_t dticks = now->ticks - s->mark.ticks;

	out->pid = s->target.pid;
	out->target_started = s->started;
	snprintf(out->command, sizeof(out->command), "%s", s->target.command);
	snprintf(out->python_version, sizeof(out->python_version), "%s", s->rt.version);
	out->target_exited = s->target.exited;
	out->target_exec = atomic_load(&st->exec_seen);
	out->exit_status = target_exit_code(&s->target);
	out->elapsed_s = (double)(now->wall_ns - s->start_ns) / NSEC_PER_SEC;
	/* From the monotonic clock: a clock step during the session moves
	 * no window. */
	out->time_us = (int64_t)((s->start_unix_ns + (now->wall_ns - s->start_ns)) / 1000);
	out->window_s = window;
	out->ticks = now->ticks;
	out->errors = atomic_load(&st->errors);
	for (int k = 0; k < SAMPLE_ERR_KINDS; k++)
		out->errors_by_kind[k] = atomic_load(&st->errors_by_kind[k]);
	out->deep_cut = atomic_load(&st->deep_cut);
	out->dropped = ring_dropped(s->ring);
	out->rate_hz = window > 0 ? (double)dticks / window : 0;
	out->requested_hz = s->opts->rate_hz;
	out->threads_running = atomic_load(&st->threads_running);
	out->threads_total = atomic_load(&st->threads_total);
	out->pytop_cpu_pct = window > 0
		? 100.0 * (double)(now->cpu_ns - s->mark.cpu_ns) / NSEC_PER_SEC / window : 0;
	out->sample_work_us = dticks
		? (double)(now->work_ns - s->mark.work_ns) / 1e3 / (double)dticks : 0;
	out->idle_mode = s->opts->idle;
	out->gil_held_pct = dticks ? 100.0 * (double)(now->gil_ticks - s->mark.gil_ticks) / (double)dticks : 0;
	fill_active(s, out, now, dticks);
	out->thread_filter = s->thread_filter;
	out->split_off = s->opts->no_split;
	out->native = s->merge != NULL;
	out->native_all = s->native_all;
	out->native_missed = atomic_load(&st->native_missed);
	out->native_method = atomic_load(&st->native_method) == SAMPLER_NATIVE_PERF ? "perf"
	                     : out->native ? "ptrace" : "";
	out->process_filter = s->process_filter;
	fill_following(s, out);
	fill_debug_packages(s, out);
	out->recording = s->recorder != NULL;
	out->record_merged = recorder_merged(s->recorder);
	out->record_failed = recorder_failure(s->recorder) != NULL;
}

static double per_second(uint64_t now, uint64_t before, double seconds)
{
	return now > before && seconds > 0 ? (double)(now - before) / seconds : 0;
}

/* With -s the work is often in the children (a pool's parent mostly
 * waits): the CPU gauges, and so the verdict, cover the whole followed
 * family; memory and faults stay the target's. */
static void family_cpu(struct snapshot *out)
{
	double user = 0, sys = 0;

	if (out->nprocesses < 2)
		return;
	for (size_t i = 0; i < out->nprocesses; i++)
		if (out->processes[i].state != PROCESS_EXITED) {
			user += out->processes[i].cpu_user_pct;
			sys += out->processes[i].cpu_sys_pct;
		}
	out->gauges.cpu_user_pct = user;
	out->gauges.cpu_system_pct = sys;
}

/* After the target exited no window is left to judge: the verdict is
 * the run's, from the gauges' first read to the final one. */
static void run_verdict(struct session *s, struct snapshot *out, uint64_t t)
{
	const struct sampler_stats *st = sampler_stats(s->sampler);
	const struct proc_gauge_read *f = &s->gauge_first;
	struct snap_gauges run = out->gauges;
	double secs = (double)(t - s->gauge_first_ns) / NSEC_PER_SEC;
	uint64_t ticks = atomic_load(&st->ticks);
	uint64_t run_ns = atomic_load(&st->run_ns), delay_ns = atomic_load(&st->delay_ns);
	double runnable = ticks ? 100.0 * (double)atomic_load(&st->runnable_ticks) / (double)ticks : 0;
	/* As fill_active divides a window, over the whole run. */
	double wait = run_ns + delay_ns ? (double)delay_ns / (double)(run_ns + delay_ns) : 0;

	if (s->gauge_first_ns == 0 || t <= s->gauge_first_ns)
		return;
	run.cpu_user_pct = 100.0 * per_second(s->gauge_prev.utime_ns, f->utime_ns, secs) / NSEC_PER_SEC;
	run.cpu_system_pct = 100.0 * per_second(s->gauge_prev.stime_ns, f->stime_ns, secs) / NSEC_PER_SEC;
	run.majflt_rate = per_second(s->gauge_prev.majflt, f->majflt, secs);
	run.cpu_throttled_pct = 0; /* a quota's hold is a window's figure */
	out->verdict = verdict_decide_loaded(&run, runnable, runnable * wait, secs,
	                                     out->verdict_reason, sizeof(out->verdict_reason));
}

/* The process gauges: cumulative figures now, rates since the previous
 * snapshot.  A target that is gone keeps its last figures. */
static void fill_gauges(struct session *s, struct snapshot *out)
{
	struct snap_gauges *g = &out->gauges;
	const struct proc_gauge_read *p = &s->gauge_prev;
	struct proc_gauge_read r;
	uint64_t t = clock_now_ns();
	double dt;
	bool live = false;

	if (s->target.exited && s->target.usage_valid && s->gauges_final) {
		r = s->gauge_prev; /* the final figures stay */
		t = s->gauge_prev_ns;
	} else if (s->target.exited && s->target.usage_valid) {
		/* Launch mode, reaped: the kernel's own final account, not
		 * the last refresh's (up to a refresh of work late). */
		proc_gauges_final(&s->target.usage, p, &r);
		s->gauges_final = true;
	} else if (s->gauges != NULL && proc_gauges_read(s->gauges, &r)) {
		/* A zombie has no memory left: its RSS stays the last one
		 * seen alive, and it is no growth rate's end point. */
		live = r.rss > 0;
		if (!live)
			r.rss = p->rss;
	} else {
		if (s->gauge_prev_ns == 0)
			return;
		r = s->gauge_prev;
		t = s->gauge_prev_ns;
	}
	/* Nor a high-water mark. */
	if (r.rss_peak < p->rss_peak)
		r.rss_peak = p->rss_peak;
	dt = s->gauge_prev_ns ? (double)(t - s->gauge_prev_ns) / NSEC_PER_SEC : 0;
	*g = (struct snap_gauges){
		.valid = true,
		.rss = r.rss, .rss_peak = r.rss_peak, .mem_limit = s->mem_limit,
		.cpu_limit = s->cpu_limit,
		.minflt = r.minflt, .majflt = r.majflt,
		.minflt_rate = per_second(r.minflt, p->minflt, dt),
		.majflt_rate = per_second(r.majflt, p->majflt, dt),
		.cpu_user = (double)r.utime_ns / NSEC_PER_SEC,
		.cpu_system = (double)r.stime_ns / NSEC_PER_SEC,
		.cpu_user_pct = 100.0 * per_second(r.utime_ns, p->utime_ns, dt) / NSEC_PER_SEC,
		.cpu_system_pct = 100.0 * per_second(r.stime_ns, p->stime_ns, dt) / NSEC_PER_SEC,
		.threads = r.threads,
		.mem_unattributed = atomic_load(&sampler_stats(s->sampler)->mem_unattributed),
	};
	/* Only a read of the living process knows its RSS now. */
	if (live)
		s->rss_growth_per_min = rss_rate_update(&s->rss_rate, t, r.rss);
	g->rss_growth_per_min = s->rss_growth_per_min;
	family_cpu(out);
	uint64_t throttled = proc_gauges_cpu_throttled(s->target.pid);
	if (throttled > s->throttled_prev && dt > 0)
		g->cpu_throttled_pct = 100.0 * (double)(throttled - s->throttled_prev) / NSEC_PER_SEC / dt;
	if (throttled != 0)
		s->throttled_prev = throttled;
	out->verdict = verdict_decide_loaded(g, out->runnable_pct, out->cpu_wait_pct, dt,
	                                     out->verdict_reason, sizeof(out->verdict_reason));
	if (s->gauge_first_ns == 0) {
		s->gauge_first = r;
		s->gauge_first_ns = t;
	}
	if (t != s->gauge_prev_ns) {
		s->gauge_prev = r;
		s->gauge_prev_ns = t;
	}
	if (s->target.exited)
		run_verdict(s, out, t);
}

static void session_take(void *ctx, struct snapshot *out)
{
	struct session *s = ctx;
	struct window_mark now = take_mark(s);

	memset(out, 0, sizeof(*out));
	session_poll(s);
	record_refresh(s);
	aggregator_snapshot(s->agg, out);
	fill_header(s, out, &now);
	fill_gauges(s, out);
	s->mark = now;
	/* Out of memory only shortens the window the history covers. */
	if (s->recent == NULL)
		return;
	(void)recent_push(s->recent, out);
	if (s->window_s > 0) {
		out->recent_asked = s->window_s;
		out->recent_s = recent_window(s->recent, out, s->window_s);
	}
}

static void session_set_window(void *ctx, double seconds)
{
	struct session *s = ctx;

	s->window_s = seconds;
}

static void session_reset(void *ctx)
{
	struct session *s = ctx;

	session_poll(s);
	record_flush(s);
	aggregator_reset(s->agg);
}

static void session_filter_thread(void *ctx, pid_t tid)
{
	struct session *s = ctx;

	s->thread_filter = tid;
	aggregator_filter_thread(s->agg, tid);
}

/* Showing or hiding the plumbing changes how later samples are merged;
 * the counts start again so that no row mixes the two. */
static void session_show_native_all(void *ctx, bool on)
{
	struct session *s = ctx;

	if (s->merge == NULL)
		return;
	session_poll(s);
	s->native_all = on;
	record_flush(s);
	native_merge_show_all(s->merge, on);
	aggregator_reset(s->agg);
}

static void session_filter_process(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	s->process_filter = pid;
	aggregator_filter_process(s->agg, pid);
}

struct snapshot_source session_source(struct session *s)
{
	return (struct snapshot_source){
		.ctx = s, .poll = session_poll, .take = session_take, .reset = session_reset,
		.filter_thread = session_filter_thread,
		.show_native_all = session_show_native_all,
		.filter_process = s->follower != NULL ? session_filter_process : NULL,
		.set_window = s->recent != NULL ? session_set_window : NULL,
	};
}

static int start_target(struct session *s, struct pytop_error *err)
{
	const struct options *o = s->opts;

	if (o->command != NULL)
		return target_launch(o->command, !o->batch && !o->record, &s->target, err);
	return target_attach(o->pid, &s->target, err);
}

static void free_parts(struct session *s)
{
	follower_stop(s->follower); /* first: it feeds the sampler */
	sampler_stop(s->sampler);
	native_merge_free(s->merge);
	ring_free(s->orders);
	aggregator_free(s->agg);
	recent_free(s->recent);
	proc_gauges_free(s->gauges);
	proc_stat_fast_close(s->stat_fast);
	ring_free(s->ring);
	free(s->rec);
	sample_delta_free(s->delta);
	free(s);
}

static bool start_recording(struct session *s, struct pytop_error *err)
{
	struct timespec now;
	struct recorder_target t = {
		.pid = s->target.pid, .launched = s->target.launched,
		.command = s->target.command, .python_version = s->rt.version,
	};

	clock_gettime(CLOCK_REALTIME, &now);
	t.started = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - session_elapsed(s);
	/* The stack table counts per bucket only for a recording. */
	if (!aggregator_keep_buckets(s->agg)) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return false;
	}
	return recorder_start(s->recorder, s->opts, &t, err);
}

struct session *session_open(const struct options *o, struct pytop_error *err)
{
	struct session *s = calloc(1, sizeof(*s));
	struct sampler_config cfg;

	if (s == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->opts = o;
	/* Before the target is touched: a path that cannot be recorded to
	 * fails with nothing started. */
	if (o->record_path != NULL &&
	    (s->recorder = recorder_open(o->record_path, o->force, err)) == NULL) {
		free(s);
		return NULL;
	}
	if (start_target(s, err) != 0) {
		recorder_abandon(s->recorder);
		free(s);
		return NULL;
	}
	/* With --native a process without Python is profiled too: native
	 * stacks only. */
	s->python = py_runtime_wait(&s->target, &s->rt, err) == 0;
	if (!s->python && !(o->native && err->code == PYTOP_ERR_NOT_PYTHON))
		goto fail;
	if (!s->python)
		memset(&s->rt, 0, sizeof(s->rt)); /* python_version "" */
	s->ring = ring_new(RING_BYTES);
	s->agg = aggregator_new(!o->no_split);
	/* Only the TUI has a "last N seconds" view (`w`); batch output is
	 * since start, so it keeps no history (it cost a refresh's copy of
	 * every row per second, for a minute).  NULL: no such view. */
	s->recent = o->batch ? NULL : recent_new();
	s->rec_cap = RING_BYTES / 2;
	s->rec = malloc(s->rec_cap);
	s->delta = sample_delta_new();
	if (o->native)
		s->merge = s->agg != NULL ? native_merge_new(s->target.pid, s->agg, o->native_all)
		                          : NULL;
	s->native_all = o->native_all;
	if (s->ring == NULL || s->agg == NULL || s->rec == NULL || s->delta == NULL ||
	    (o->native && s->merge == NULL)) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (o->subprocesses && (s->orders = ring_new(ORDERS_BYTES)) == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		goto fail;
	}
	cfg = (struct sampler_config){
		.pid = s->target.pid, .rt = s->python ? &s->rt : NULL, .rate_hz = o->rate_hz,
		.idle = o->idle, .native = o->native, .native_perf = !o->native_ptrace,
		.ring = s->ring,
		.split = !o->no_split, .orders = s->orders,
	};
	/* After the launch's fork, so the program runs without the filter,
	 * and before the first sample and the first thread, which inherit it. */
	sandbox_install(s->target.launched ? 0 : s->target.pid, &s->sandbox);
	s->start_ns = clock_now_ns();
	s->start_unix_ns = clock_unix_ns();
	s->sampler = sampler_start(&cfg, err);
	if (s->sampler == NULL)
		goto fail;
	if (o->subprocesses &&
	    (s->follower = follower_start(&(struct follow_config){
		    .root = s->target.pid, .root_rt = &s->rt, .out = s->orders }, err)) == NULL)
		goto fail;
	/* The first window starts with the sampler, at elapsed 0, where its
	 * counters were all zero: taken here instead, it began after the
	 * follower's start, which a busy machine makes tens of ms, and the
	 * first refresh's rate disagreed with its ticks over its elapsed. */
	s->mark = (struct window_mark){ .wall_ns = s->start_ns,
	                                .cpu_ns = clock_process_cpu_ns() };
	/* Without gauges the profile still works: the header just lacks them. */
	s->gauges = proc_gauges_new(s->target.pid);
	s->mem_limit = proc_gauges_mem_limit(s->target.pid);
	s->started = proc_gauges_started(s->target.pid);
	s->cpu_limit = proc_gauges_cpu_limit(s->target.pid);
	if (s->gauges != NULL && proc_gauges_read(s->gauges, &s->gauge_prev))
		s->gauge_prev_ns = clock_now_ns();
	if (s->recorder != NULL) {
		s->stat_fast = proc_stat_fast_open(s->target.pid);
		if (!start_recording(s, err))
			goto fail;
	}
	return s;
fail:
	target_terminate(&s->target);
	recorder_abandon(s->recorder);
	free_parts(s);
	return NULL;
}

const char *session_sandbox_off(const struct session *s)
{
	return s->sandbox.code != PYTOP_OK ? s->sandbox.text : NULL;
}

/* The end of the run into the recording's metadata; the file closed. */
static bool close_recording(struct session *s)
{
	struct pytop_error err = { 0 };
	struct recorder_end end = {
		.elapsed = session_elapsed(s), .exited = s->target.exited,
		.exit_status = s->target.exited ? target_exit_code(&s->target) : -1,
		.dropped = ring_dropped(s->ring),
	};
	bool ok = recorder_close(s->recorder, &end, &err);

	s->recorder = NULL;
	if (!ok)
		fprintf(stderr, "pytop: %s\n", err.text);
	return ok;
}

int session_close(struct session *s)
{
	int status = 0;

	/* The last bucket holds what the views' last snapshot held (the ring
	 * is not drained again), with the gauges while the sampler runs. */
	record_flush(s);
	follower_stop(s->follower);
	s->follower = NULL;
	sampler_stop(s->sampler);
	s->sampler = NULL;
	if (s->target.launched) {
		bool stopped_by_us = !target_poll_exit(&s->target);

		target_terminate(&s->target);
		status = target_exit_code(&s->target);
		if (status < 0)
			status = 1;
		/* The demo runs until the user quits: stopping it is how it
		 * ends, not a failure to report as 143. */
		if (s->opts->demo && stopped_by_us)
			status = 0;
		target_drop_empty_output(&s->target);
		if (s->target.output[0] != '\0')
			fprintf(stderr, "pytop: the program's output is in %s\n", s->target.output);
		else if (s->target.output_error.code != PYTOP_OK)
			fprintf(stderr, "pytop: the program's output was discarded: %s\n",
			        s->target.output_error.text);
	}
	if (s->recorder != NULL && !close_recording(s))
		status = status != 0 ? status : 1;
	free_parts(s);
	return status;
}
