/* sampler.h - the sampler thread: wakes at absolute, jittered deadlines,
 * reads every Python thread's stack (py_reader), and pushes records into the
 * ring.  It never blocks on the consumer and never stops the target. */
#ifndef PYTOP_SAMPLER_H
#define PYTOP_SAMPLER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "sample_errors.h"
#include "cpython/py_runtime.h"
#include "transport/ring.h"

/* How --native takes native stacks. */
enum sampler_native {
	SAMPLER_NATIVE_NONE,
	SAMPLER_NATIVE_PTRACE, /* stops each thread a moment (native_unwind.h) */
	SAMPLER_NATIVE_PERF,   /* the kernel's copy at a perf sample (native_perf.h) */
};

/* Written only by the sampler thread; read by anyone. */
struct sampler_stats {
	atomic_uint_fast64_t ticks;     /* ticks taken */
	atomic_uint_fast64_t samples;   /* thread samples pushed */
	atomic_uint_fast64_t errors;    /* thread samples that were torn/unreadable */
	atomic_uint_fast64_t errors_by_kind[SAMPLE_ERR_KINDS]; /* the same by
	                                   why (sample_errors.h); they sum to
	                                   errors */
	atomic_uint_fast64_t deep_cut;  /* samples pushed with frames left out
	                                   (deeper than PY_READER_MAX_FRAMES) */
	atomic_uint_fast64_t work_ns;   /* sampler thread CPU time spent reading
	                                   (measured on every WORK_EVERY-th tick,
	                                   scaled: the clock costs a system call;
	                                   the clock reads' own cost left out) */
	atomic_uint_fast64_t late;      /* ticks that started a whole period late */
	atomic_uint_fast64_t gil_ticks;    /* ticks at which some thread held the GIL */
	atomic_uint_fast64_t runnable_ticks; /* ticks at which some thread of the
	                                   target was runnable (state R: on a
	                                   CPU or waiting for one) */
	atomic_uint_fast64_t run_ns;    /* its runnable threads' scheduler run
	                                   time and run-queue delay seen grow
	                                   (schedstat), summed: how runnable */
	atomic_uint_fast64_t delay_ns;  /* time divides into on and off CPU */
	atomic_int threads_total;       /* Python threads at the last tick, all
	                                   sampled processes */
	atomic_int threads_running;     /* ... of which on a CPU */
	atomic_uint_fast64_t last_tick_ns; /* CLOCK_MONOTONIC of the latest tick */
	atomic_uint_fast64_t mem_unattributed; /* RSS growth (bytes) at ticks
	                                   where no sampled thread was running */
	atomic_uint_fast64_t native_missed; /* --native: thread samples without a
	                                   native stack (not stopped in time,
	                                   gone, or not unwindable) */
	atomic_int native_method;       /* enum sampler_native, set at start */
	atomic_bool exec_seen;          /* the target ran exec: a new program
	                                   the reader cannot follow; its
	                                   samples stop */
	atomic_bool finished;           /* the target is gone; thread exited */
};

struct sampler_config {
	pid_t pid;
	const struct py_runtime *rt; /* borrowed for the sampler's lifetime;
	                                NULL: no Python (--native only) */
	int rate_hz;
	bool idle;                   /* also sample threads that are off CPU */
	bool split;                  /* mark samples in calls, share RSS growth */
	bool native;                 /* also take native stacks (perf, else ptrace) */
	bool native_perf;            /* ... by perf events where permitted */
	struct ring *ring;           /* borrowed; the sampler is its producer */
	struct ring *orders;         /* borrowed, NULL without -s: the follower's
	                                orders (proc_follow.h); the sampler is
	                                its consumer */
};

struct sampler;

/* Start the thread.  NULL and *err filled on failure (with `native`:
 * also when the target cannot be traced). */
struct sampler *sampler_start(const struct sampler_config *cfg, struct pytop_error *err);
/* Ask the thread to stop, join it, free everything. */
void sampler_stop(struct sampler *s);

/* Job control: release every traced thread and pause sampling until
 * sampler_resume.  Returns once nothing is held (true), or after a second
 * without the sampler's answer (false; it never blocks that long, but a
 * stop must not hang).  Async-signal-safe; never call it on the sampler
 * thread (which blocks the job-control signals for this reason).  The
 * time paused is left out of the samples' intervals. */
bool sampler_pause(struct sampler *s);
void sampler_resume(struct sampler *s);
const struct sampler_stats *sampler_stats(const struct sampler *s);

#endif
