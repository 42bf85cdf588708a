#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "native_threads.h"
#include "native_unwind.h"
#include "proc_threads.h"
#include "py_reader.h"
#include "record.h"

#define MAX_KNOWN_TIDS 4096
#define NAMES_EVERY_REPORTS 10 /* re-read thread names every ~1 s */
#define CATCH_UP_PERIODS 10
#define WORK_EVERY 8
#define SAMPLER_NICE -10
#define THREADS_EVERY_NS 100000000ull /* REC_THREADS period */

struct known_thread {
	pid_t tid;
	bool named;
	char name[16];
};

struct sampler {
	struct sampler_config cfg;
	struct sampler_stats stats;
	atomic_bool stop;
	pthread_t thread;

	/* sampler-thread-only state */
	struct py_reader *reader;
	struct proc_threads *threads;
	uint8_t *buf;          /* record scratch, owned */
	size_t buf_cap;
	uint64_t threads_due;  /* when the next REC_THREADS is due */
	struct known_thread known[MAX_KNOWN_TIDS]; /* names already sent */
	size_t nknown;
	unsigned reports;      /* REC_THREADS sent so far */
	uint64_t ticks_taken;
	uint64_t rng;
	uint64_t rss_prev;     /* process RSS at the previous tick, 0 = none */

	/* --native (sampler-thread-only but for the start handshake) */
	struct native_unwind *unwind;    /* NULL without --native */
	struct native_threads *tasks;    /* the threads when rt is NULL */
	uint64_t *nat_ips;               /* NATIVE_MAX_FRAMES per thread index */
	int *nat_n;                      /* IPs taken per thread index, 0 = none */
	pid_t *nat_tid;                  /* the thread of each index this tick */
	size_t nat_cap;                  /* thread indices the three hold */
	int nat_count;                   /* thread indices this tick */
	sem_t started;                   /* posted once the thread can sample */
	int start_rc;
	struct pytop_error start_err;
};

/* How a tick's RSS growth is shared among its samples. */
struct growth_share {
	uint64_t growth;       /* bytes still to hand out */
	uint64_t weight;       /* the remaining samples' total weight */
};

/* xorshift64: jitter needs to be cheap and uncorrelated with the target,
 * not cryptographic. */
static uint64_t next_random(struct sampler *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static bool push_code_def(struct sampler *s, struct py_code *c)
{
	size_t qlen = strlen(c->qualname), flen = strlen(c->filename);
	size_t size;
	struct rec_code_def *r = (struct rec_code_def *)s->buf;

	if (qlen > UINT16_MAX)
		qlen = UINT16_MAX;
	if (flen > UINT16_MAX)
		flen = UINT16_MAX;
	size = REC_ALIGN(sizeof(*r) + qlen + flen + c->linetable_len);
	if (size > s->buf_cap)
		return false;
	*r = (struct rec_code_def){
		.h = { REC_CODE_DEF, (uint32_t)size },
		.code_id = c->id,
		.firstlineno = c->firstlineno,
		.qualname_len = (uint16_t)qlen,
		.filename_len = (uint16_t)flen,
		.linetable_len = c->linetable_len,
	};
	memcpy(r->data, c->qualname, qlen);
	memcpy(r->data + qlen, c->filename, flen);
	if (c->linetable_len)
		memcpy(r->data + qlen + flen, c->linetable, c->linetable_len);
	memset(r->data + qlen + flen + c->linetable_len, 0,
	       size - sizeof(*r) - qlen - flen - c->linetable_len);
	if (!ring_push(s->cfg.ring, r, size))
		return false;
	c->sent = true;
	return true;
}

/* Every code object a sample refers to must be defined first. */
static bool define_codes(struct sampler *s, const struct py_thread_sample *t)
{
	for (uint32_t i = 0; i < t->nframes; i++) {
		struct py_code *c = py_reader_code(s->reader, t->frames[i].code_id);

		if (c != NULL && !c->sent && !push_code_def(s, c))
			return false;
	}
	return true;
}

static bool known_thread(const struct sampler *s, pid_t tid)
{
	for (size_t i = 0; i < s->nknown; i++)
		if (s->known[i].tid == tid)
			return s->known[i].named;
	return false;
}

/* Send a thread's OS name when it is new or has changed (threads often
 * rename themselves after they start; 3.14+ threading names them). */
static void announce_thread(struct sampler *s, pid_t tid)
{
	struct rec_thread r = { .h = { REC_THREAD, sizeof(r) }, .tid = tid };
	struct known_thread *k = NULL;

	for (size_t i = 0; i < s->nknown && k == NULL; i++)
		if (s->known[i].tid == tid)
			k = &s->known[i];
	if (k == NULL) {
		if (s->nknown == MAX_KNOWN_TIDS)
			s->nknown = 0; /* forget them all: names are merely re-sent */
		k = &s->known[s->nknown++];
		*k = (struct known_thread){ .tid = tid };
	}
	proc_threads_name(s->cfg.pid, tid, r.name);
	if (k->named && strcmp(k->name, r.name) == 0)
		return;
	if (ring_push(s->cfg.ring, &r, sizeof(r))) {
		memcpy(k->name, r.name, sizeof(k->name));
		k->named = true;
	}
}

/* Growth goes to the threads that were running, in proportion to the page
 * faults each took since the last tick (faulting is how RSS grows); +1 so
 * that a tick without faults still shares it evenly. */
static uint64_t growth_weight(const struct py_thread_sample *t)
{
	if (t->status != PY_THREAD_OK || !(t->flags & SAMPLE_RUNNING))
		return 0;
	return t->minflt + t->majflt + 1;
}

static uint64_t take_share(struct growth_share *g, const struct py_thread_sample *t)
{
	uint64_t w = growth_weight(t), part;

	if (w == 0 || g->weight == 0)
		return 0;
	/* The last sample takes the remainder: nothing is lost to rounding. */
	part = w == g->weight ? g->growth
	                      : (uint64_t)((double)g->growth * (double)w / (double)g->weight);
	g->growth -= part;
	g->weight -= w;
	return part;
}

/* The tick's threads: the Python runtime's, or every thread of a
 * non-Python target (--native). */
static int sample_threads(struct sampler *s)
{
	if (s->reader != NULL)
		return py_reader_sample(s->reader, s->threads, s->cfg.idle);
	return native_threads_sample(s->tasks, s->threads, s->cfg.idle);
}

static const struct py_thread_sample *thread_at(const struct sampler *s, size_t i)
{
	return s->reader != NULL ? py_reader_thread(s->reader, i) : native_threads_get(s->tasks, i);
}

/* Every thread's state and CPU time, a few times a second: enough for
 * the threads panel, cheap for the ring. */
static void push_thread_states(struct sampler *s, int n, uint64_t now)
{
	struct rec_threads *r = (struct rec_threads *)s->buf;
	size_t size = sizeof(*r) + (size_t)n * sizeof(struct rec_thread_state);

	if (now < s->threads_due || n <= 0 || size > s->buf_cap)
		return;
	s->threads_due = now + THREADS_EVERY_NS;
	*r = (struct rec_threads){
		.h = { REC_THREADS, (uint32_t)size }, .time_ns = now, .nthreads = (uint32_t)n,
	};
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = thread_at(s, (size_t)i);

		if (s->reports % NAMES_EVERY_REPORTS == 0 && t->tid > 0)
			announce_thread(s, t->tid);
		r->threads[i] = (struct rec_thread_state){
			.tid = t->tid, .state = t->state,
			.flags = (uint8_t)(t->flags & (SAMPLE_HAS_GIL | SAMPLE_GIL_WAIT)),
			.utime_ns = t->utime_ns, .stime_ns = t->stime_ns,
		};
	}
	s->reports++;
	ring_push(s->cfg.ring, r, size);
}

/* The tick's RSS growth, and the total weight it is shared by. */
static struct growth_share tick_growth(struct sampler *s, int n)
{
	struct growth_share g = { 0, 0 };
	uint64_t rss = 0;

	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = thread_at(s, (size_t)i);

		if (rss == 0)
			rss = t->rss_bytes;
		g.weight += growth_weight(t);
	}
	if (rss == 0 || !s->cfg.split)
		return (struct growth_share){ 0, 0 };
	if (s->rss_prev != 0 && rss > s->rss_prev)
		g.growth = rss - s->rss_prev;
	s->rss_prev = rss;
	if (g.weight == 0 && g.growth > 0)
		atomic_fetch_add_explicit(&s->stats.mem_unattributed, g.growth,
		                          memory_order_relaxed);
	return g;
}

static void push_sample(struct sampler *s, const struct py_thread_sample *t,
                        uint64_t now, uint64_t interval, uint64_t growth)
{
	struct rec_sample *r = (struct rec_sample *)s->buf;
	size_t size = sizeof(*r) + t->nframes * sizeof(struct rec_frame);

	if (!define_codes(s, t))
		return; /* the ring is full: the sample would be dropped too */
	*r = (struct rec_sample){
		.h = { REC_SAMPLE, (uint32_t)size },
		.time_ns = now,
		.interval_ns = interval > UINT32_MAX ? UINT32_MAX : (uint32_t)interval,
		.tid = t->tid,
		.nframes = (uint16_t)t->nframes,
		.flags = t->flags,
		.pid = s->cfg.pid,
		.cpu_user_ns = t->utime_ns,
		.cpu_sys_ns = t->stime_ns,
		.minflt = t->minflt > UINT32_MAX ? UINT32_MAX : (uint32_t)t->minflt,
		.majflt = t->majflt > UINT32_MAX ? UINT32_MAX : (uint32_t)t->majflt,
		.mem_growth = growth,
	};
	if (t->nframes > 0) /* a non-Python target's threads have no frames */
		memcpy(r->frames, t->frames, t->nframes * sizeof(struct rec_frame));
	if (ring_push(s->cfg.ring, r, size))
		atomic_fetch_add_explicit(&s->stats.samples, 1, memory_order_relaxed);
}

static void take_native(void *ctx, pid_t tid, const uint64_t *ips, int nips)
{
	struct sampler *s = ctx;

	for (int i = 0; i < s->nat_count; i++)
		if (s->nat_tid[i] == tid) {
			memcpy(&s->nat_ips[(size_t)i * NATIVE_MAX_FRAMES], ips,
			       (size_t)nips * sizeof(*ips));
			s->nat_n[i] = nips;
			return;
		}
}

static bool native_room(struct sampler *s, int n)
{
	size_t cap = s->nat_cap;

	if ((size_t)n <= cap)
		return true;
	while (cap < (size_t)n)
		cap = cap ? cap * 2 : 64;
	free(s->nat_ips);
	free(s->nat_n);
	free(s->nat_tid);
	s->nat_ips = malloc(cap * NATIVE_MAX_FRAMES * sizeof(*s->nat_ips));
	s->nat_n = malloc(cap * sizeof(*s->nat_n));
	s->nat_tid = malloc(cap * sizeof(*s->nat_tid));
	s->nat_cap = s->nat_ips && s->nat_n && s->nat_tid ? cap : 0;
	return s->nat_cap != 0;
}

/* Stop, unwind and resume every thread to be sampled this tick, within
 * half a period (see native_unwind.h for why all are asked at once). */
static void native_stacks(struct sampler *s, int n, uint64_t now)
{
	uint64_t period = 1000000000ull / (uint64_t)s->cfg.rate_hz;

	s->nat_count = 0;
	if (n <= 0 || !native_room(s, n))
		return;
	s->nat_count = n;
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = thread_at(s, (size_t)i);

		s->nat_n[i] = 0;
		s->nat_tid[i] = t->tid;
		if (t->status == PY_THREAD_OK && t->tid > 0 && t->state != 'D')
			native_unwind_request(s->unwind, t->tid);
	}
	native_unwind_collect(s->unwind, now + period / 2, take_native, s);
}

/* The REC_NATIVE for thread index i, just before its REC_SAMPLE; false
 * when the thread has no native stack this tick. */
static bool push_native(struct sampler *s, int i, const struct py_thread_sample *t,
                        uint64_t now)
{
	struct rec_native *r = (struct rec_native *)s->buf;
	int nips = i < s->nat_count ? s->nat_n[i] : 0;
	uint16_t *groups = (uint16_t *)(void *)(r->ips + nips);
	uint16_t ng = 0, run = 0;
	size_t size;

	if (nips == 0) {
		atomic_fetch_add_explicit(&s->stats.native_missed, 1, memory_order_relaxed);
		return false;
	}
	for (uint32_t f = 0; f < t->nframes && t->entry != NULL; f++) {
		run++;
		if (t->entry[f] || f + 1 == t->nframes) {
			groups[ng++] = run;
			run = 0;
		}
	}
	size = REC_ALIGN(sizeof(*r) + (size_t)nips * sizeof(uint64_t) + ng * sizeof(uint16_t));
	memset((uint8_t *)(groups + ng), 0, size - sizeof(*r) - (size_t)nips * sizeof(uint64_t) -
	       ng * sizeof(uint16_t));
	r->h = (struct rec_header){ REC_NATIVE, (uint32_t)size };
	r->time_ns = now;
	r->tid = t->tid;
	r->pid = s->cfg.pid;
	r->nips = (uint16_t)nips;
	r->ngroups = ng;
	r->pad = 0;
	memcpy(r->ips, &s->nat_ips[(size_t)i * NATIVE_MAX_FRAMES], (size_t)nips * sizeof(uint64_t));
	return ring_push(s->cfg.ring, r, size);
}

/* One tick: returns false when the target is gone. */
static bool tick(struct sampler *s, uint64_t now, uint64_t interval)
{
	/* A thread CPU clock read is a system call: time one tick in
	 * WORK_EVERY and count it for all of them. */
	bool timed = s->ticks_taken++ % WORK_EVERY == 0;
	uint64_t cpu0 = timed ? clock_thread_cpu_ns() : 0;
	int n = sample_threads(s);
	int running = 0;
	bool gil = false;
	uint64_t errors = 0;
	struct growth_share growth = tick_growth(s, n);

	if (s->unwind != NULL)
		native_stacks(s, n, now);
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = thread_at(s, (size_t)i);

		if (t->flags & SAMPLE_RUNNING)
			running++;
		if (t->flags & SAMPLE_HAS_GIL)
			gil = true;
		if (t->status == PY_THREAD_ERROR)
			errors++;
		if (t->status != PY_THREAD_OK)
			continue;
		if (!known_thread(s, t->tid))
			announce_thread(s, t->tid);
		/* With --native a sample is whole or not at all: a Python
		 * stack without its native part would shift the native
		 * shares (counted in native_missed instead). */
		if (s->unwind != NULL && (!define_codes(s, t) || !push_native(s, i, t, now)))
			continue;
		push_sample(s, t, now, interval, take_share(&growth, t));
	}
	push_thread_states(s, n, now);
	atomic_fetch_add_explicit(&s->stats.gil_ticks, gil, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.active_ticks, running > 0, memory_order_relaxed);
	atomic_store_explicit(&s->stats.threads_total, n < 0 ? 0 : n, memory_order_relaxed);
	atomic_store_explicit(&s->stats.threads_running, running, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.errors, errors, memory_order_relaxed);
	if (timed)
		atomic_fetch_add_explicit(&s->stats.work_ns,
		                          (clock_thread_cpu_ns() - cpu0) * WORK_EVERY,
		                          memory_order_relaxed);
	atomic_store_explicit(&s->stats.last_tick_ns, now, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.ticks, 1, memory_order_relaxed);
	return n >= 0;
}

/* Absolute deadlines keep the mean rate exact however long a tick takes;
 * a random phase within each period keeps the sampler from locking onto a
 * target's periodic work. */
static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	uint64_t period = 1000000000ull / (uint64_t)s->cfg.rate_hz;
	uint64_t base = clock_now_ns(), prev = base - period;

	/* ptrace belongs to the thread that attached: the sampler thread
	 * itself must check that it may trace the target. */
	if (s->cfg.native) {
		s->unwind = native_unwind_new(s->cfg.pid);
		if (s->unwind == NULL)
			error_set(&s->start_err, PYTOP_ERR_INTERNAL, "out of memory starting --native");
		s->start_rc = s->unwind == NULL ? -1 : native_unwind_probe(s->unwind, &s->start_err);
	}
	sem_post(&s->started);
	if (s->start_rc != 0)
		return NULL;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* When allowed (root, CAP_SYS_NICE), let the sampler preempt busy
	 * target threads the moment its deadline comes: its CPU time is small
	 * and counted, and a late wake-up would cost a tick.  Unprivileged, the
	 * call fails and nothing changes. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), SAMPLER_NICE);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint64_t now = clock_now_ns();

		if (!tick(s, now, now - prev))
			break;
		prev = now;
		base += period;
		now = clock_now_ns();
		if (now > base + CATCH_UP_PERIODS * period) {
			/* A short delay is caught up: the late ticks fire back to
			 * back and together weigh what one sample spanning the delay
			 * should.  Far behind (the machine is overloaded) we skip
			 * ahead, so a burst never outweighs a few periods. */
			atomic_fetch_add_explicit(&s->stats.late, 1, memory_order_relaxed);
			base = now;
		}
		clock_sleep_until(base + next_random(s) % (period / 2 + 1) - period / 4);
	}
	/* Release any thread still asked to stop while this thread can. */
	native_unwind_free(s->unwind);
	s->unwind = NULL;
	atomic_store_explicit(&s->stats.finished, true, memory_order_release);
	return NULL;
}

static void free_native(struct sampler *s)
{
	native_threads_free(s->tasks);
	free(s->nat_ips);
	free(s->nat_n);
	free(s->nat_tid);
}

struct sampler *sampler_start(const struct sampler_config *cfg, struct pytop_error *err)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int rc;

	if (s == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory starting the sampler");
		return NULL;
	}
	s->cfg = *cfg;
	s->rng = clock_now_ns() | 1;
	s->buf_cap = ring_capacity(cfg->ring) / 4;
	s->buf = malloc(s->buf_cap);
	if (cfg->rt != NULL)
		s->reader = py_reader_new(cfg->pid, cfg->rt);
	else
		s->tasks = native_threads_new(cfg->pid);
	s->threads = proc_threads_new(cfg->pid);
	if (s->reader != NULL)
		py_reader_want_calls(s->reader, cfg->split);
	if (s->buf == NULL || (s->reader == NULL && s->tasks == NULL) || s->threads == NULL ||
	    sem_init(&s->started, 0, 0) != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory starting the sampler");
		goto fail;
	}
	rc = pthread_create(&s->thread, NULL, sampler_main, s);
	if (rc != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot start the sampler thread: %s", strerror(rc));
		sem_destroy(&s->started);
		goto fail;
	}
	while (sem_wait(&s->started) != 0)
		;
	if (s->start_rc != 0) {
		*err = s->start_err;
		sampler_stop(s);
		return NULL;
	}
	return s;
fail:
	free_native(s);
	py_reader_free(s->reader);
	proc_threads_free(s->threads);
	free(s->buf);
	free(s);
	return NULL;
}

void sampler_stop(struct sampler *s)
{
	if (s == NULL)
		return;
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	sem_destroy(&s->started);
	free_native(s);
	py_reader_free(s->reader);
	proc_threads_free(s->threads);
	free(s->buf);
	free(s);
}

const struct sampler_stats *sampler_stats(const struct sampler *s)
{
	return &s->stats;
}
