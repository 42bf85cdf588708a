/* sampler.c - the sampler thread: one tick per period reads every sampled
 * thread's stack and pushes records into the ring (sampler.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/sampler.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "sampler/family_end.h"
#include "sampler/job_control.h"
#include "sampler/native_perf.h"
#include "sampler/native_unwind.h"
#include "sampler/sampler_priority.h"
#include "sampler/proc_follow.h"
#include "target/proc_threads.h"
#include "cpython/py_reader.h"
#include "transport/record.h"
#include "sampler/sampler_proc.h"

_Static_assert(PY_READER_MAX_FRAMES == REC_MAX_PY_FRAMES,
               "the reader walks as deep as a record carries");

#define NAMES_EVERY_REPORTS 10 /* re-read thread names every ~1 s */
#define CATCH_UP_PERIODS 10
#define WORK_EVERY 16
#define THREADS_EVERY_NS 100000000ull /* REC_THREADS period */
/* Pausing: how long the sampler waits for requested threads to stop so
 * that it can release them, and how long a pause request waits for the
 * sampler (longer: it includes that wait).  A thread asked to stop must
 * get a CPU to do so: on a loaded machine 0.5 s was too short (a target
 * thread stayed stopped with pytop in 2 of 10 SIGTTINs), and pytop
 * stopping a little later is the lesser harm. */
#define PAUSE_RELEASE_NS (2 * NSEC_PER_SEC)
#define PAUSE_ACK_NS (3 * NSEC_PER_SEC)
#define PAUSE_POLL_NS 100000
#define FAMILY_END_GRACE_NS (2 * NSEC_PER_SEC)
#define FAMILY_END_POLL_NS 10000000ull

struct sampler {
	struct sampler_config cfg;
	struct sampler_stats stats;
	atomic_bool stop;
	pthread_t thread;
	atomic_bool pause;     /* asked to release everything and wait */
	atomic_bool paused;    /* the sampler's answer: nothing is held */
	sem_t wake;            /* posted to cut the sampler's sleep short */

	/* sampler-thread-only state */
	struct sampler_proc *procs[FOLLOW_MAX_SAMPLED]; /* [0] the target */
	size_t nprocs;
	uint32_t next_code_id; /* session-wide code ids handed out */
	uint8_t *buf;          /* record scratch, owned */
	size_t buf_cap;
	uint8_t *order;        /* one follower message, owned */
	struct family_end family; /* -s: who was last reported alive */
	struct rec_frame *frames; /* one sample's frames in session ids, owned */
	uint64_t ticks_taken;
	uint64_t clock_cost_ns; /* what one thread CPU clock read adds to a
	                           timed span: the shortest of back-to-back pairs */
	uint64_t period_ns;    /* NSEC_PER_SEC / rate */
	uint64_t rng;

	/* --native, the target only (sampler-thread-only but for the start
	 * handshake) */
	struct native_unwind *unwind;    /* NULL without --native */
	struct native_perf *perf;        /* the perf path; NULL: ptrace's */
	uint64_t *nat_ips;               /* NATIVE_MAX_FRAMES per thread index */
	int *nat_n;                      /* IPs taken per thread index, 0 = none,
	                                    NAT_NOT_DUE: not sampled this tick */
	pid_t *nat_tid;                  /* the thread of each index this tick */
	size_t nat_cap;                  /* thread indices the three hold */
	int nat_count;                   /* thread indices this tick */
	sem_t started;                   /* posted once the thread can sample */
	int start_rc;
	struct pytop_error start_err;
};

/* How a tick's RSS change is shared among its samples. */
struct growth_share {
	uint64_t growth;       /* bytes of growth still to hand out */
	uint64_t shrink;       /* bytes of shrink still to hand out */
	uint64_t weight;       /* the remaining samples' total weight */
};

/* One sample's part of the tick's change. */
struct growth_part {
	uint64_t growth, shrink;
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

static bool push_code_def(struct sampler *s, struct py_code *c, uint32_t id)
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
		.code_id = id,
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

/* Every code object a sample refers to must be defined first.  The
 * frames are copied to out with the session's code ids (not into s->buf:
 * each definition is built there).  A run of frames of one code (a
 * recursion) is looked up once: defined at its first frame, it stays so. */
static bool define_codes(struct sampler *s, struct sampler_proc *p,
                         const struct py_thread_sample *t, struct rec_frame *out)
{
	uint32_t local = UINT32_MAX, id = 0;

	for (uint32_t i = 0; i < t->nframes; i++) {
		if (t->frames[i].code_id == REC_MORE_FRAMES) { /* no code: the count */
			out[i] = t->frames[i];
			continue;
		}
		if (t->frames[i].code_id != local) {
			struct py_code *c;

			local = t->frames[i].code_id;
			c = py_reader_code(p->reader, local);
			id = sampler_proc_code_id(p, local, &s->next_code_id);
			if (id == SAMPLER_PROC_NO_ID)
				return false;
			if (c != NULL && !c->sent && !push_code_def(s, c, id))
				return false;
		}
		out[i] = (struct rec_frame){ id, t->frames[i].instr_offset };
	}
	return true;
}

/* Send the name the program gave a thread when it is new or changed.
 * Built on the stack, not in s->buf: push_thread_states is building its
 * REC_THREADS there when it asks. */
static void announce_py_name(struct sampler *s, struct sampler_proc *p,
                             struct known_thread *k, const struct py_thread_sample *t)
{
	uint64_t rec[(sizeof(struct rec_thread_py_name) + REC_MAX_THREAD_PY_NAME) / 8 + 1];
	uint64_t hash = k->py_name_hash;
	size_t size;

	/* An idle thread is not sampled (no --idle) but still listed: its
	 * thread state is known, and so can its name be. */
	if (t->status == PY_THREAD_ERROR || p->reader == NULL)
		return;
	size = thread_py_names_record(&p->py_names, t->tid, t->tstate, &hash, rec, sizeof(rec));
	if (size > 0 && ring_push(s->cfg.ring, rec, size))
		k->py_name_hash = hash;
}

/* Send a thread's OS name and its Python name when it is new or has
 * changed (threads often rename themselves after they start; 3.14+
 * threading names them). */
static void announce_thread(struct sampler *s, struct sampler_proc *p,
                            const struct py_thread_sample *t)
{
	struct rec_thread r = { .h = { REC_THREAD, sizeof(r) }, .tid = t->tid };
	struct known_thread *k = sampler_proc_thread(p, t->tid);

	announce_py_name(s, p, k, t);
	proc_threads_name(p->pid, t->tid, r.name);
	if (k->named && strcmp(k->name, r.name) == 0)
		return;
	if (ring_push(s->cfg.ring, &r, sizeof(r))) {
		memcpy(k->name, r.name, sizeof(k->name));
		k->named = true;
	}
}

/* Growth goes to the threads that were running, in proportion to the page
 * faults each took since the last tick (faulting is how RSS grows); +1 so
 * that a tick without faults still shares it evenly.  Shrink is shared the
 * same way: a free that unmaps takes no fault, but charging it by other
 * rules would make net growth (growth - shrink) mix two measures. */
static uint64_t growth_weight(const struct py_thread_sample *t)
{
	if (t->status != PY_THREAD_OK || !(t->flags & SAMPLE_RUNNING))
		return 0;
	return t->minflt + t->majflt + 1;
}

/* w of weight's share of *left, taken from it; the last sample (w ==
 * weight) takes the remainder, so nothing is lost to rounding. */
static uint64_t take_part(uint64_t *left, uint64_t w, uint64_t weight)
{
	uint64_t part = w == weight ? *left
	                            : (uint64_t)((double)*left * (double)w / (double)weight);

	*left -= part;
	return part;
}

static struct growth_part take_share(struct growth_share *g, const struct py_thread_sample *t)
{
	uint64_t w = growth_weight(t);
	struct growth_part part = { 0, 0 };

	if (w == 0 || g->weight == 0)
		return part;
	part.growth = take_part(&g->growth, w, g->weight);
	part.shrink = take_part(&g->shrink, w, g->weight);
	g->weight -= w;
	return part;
}

/* The tick's RSS growth or shrink, and the total weight it is shared by. */
static struct growth_share tick_growth(struct sampler *s, struct sampler_proc *p, int n)
{
	struct growth_share g = { 0, 0, 0 };
	uint64_t rss = 0;

	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);

		if (rss == 0)
			rss = t->rss_bytes;
		g.weight += growth_weight(t);
	}
	if (rss == 0 || !s->cfg.split)
		return (struct growth_share){ 0, 0, 0 };
	if (p->rss_prev != 0 && rss > p->rss_prev)
		g.growth = rss - p->rss_prev;
	if (p->rss_prev != 0 && rss < p->rss_prev)
		g.shrink = p->rss_prev - rss;
	p->rss_prev = rss;
	if (g.weight == 0 && g.growth > 0)
		atomic_fetch_add_explicit(&s->stats.mem_unattributed, g.growth,
		                          memory_order_relaxed);
	return g;
}

/* How many outermost frames of f (n, leaf first) are those of the
 * thread's last sample that reached the ring: what a REC_SAMPLE_DELTA
 * need not carry.  0 when there is none recent enough. */
static uint32_t kept_frames(const struct known_thread *k, const struct rec_frame *f,
                            uint32_t n, uint64_t now)
{
	uint32_t keep = 0;

	if (k->sent == NULL || now < k->sent_ns || now - k->sent_ns >= REC_DELTA_MAX_AGE_NS)
		return 0;
	while (keep < n && keep < k->nsent && f[n - 1 - keep].code_id == k->sent[keep].code_id &&
	       f[n - 1 - keep].instr_offset == k->sent[keep].instr_offset)
		keep++;
	return keep;
}

/* The sample just pushed becomes the thread's last sent one: only the
 * frames past the kept ones are written.  Out of memory, the thread's
 * samples are sent whole. */
static void remember_sent(struct known_thread *k, const struct rec_frame *f, uint32_t n,
                          uint32_t keep, uint64_t now)
{
	if (n > k->sent_cap) {
		uint32_t cap = k->sent_cap ? k->sent_cap : 64;
		struct rec_frame *nv;

		while (cap < n)
			cap *= 2;
		nv = realloc(k->sent, cap * sizeof(*nv));
		if (nv == NULL) {
			free(k->sent);
			*k = (struct known_thread){ .tid = k->tid, .named = k->named,
			                            .py_name_hash = k->py_name_hash };
			return;
		}
		k->sent = nv;
		k->sent_cap = cap;
	}
	for (uint32_t i = keep; i < n; i++)
		k->sent[i] = f[n - 1 - i];
	k->nsent = n;
	k->sent_ns = now;
}

static bool push_sample(struct sampler *s, struct sampler_proc *p, struct known_thread *k,
                        const struct py_thread_sample *t, uint64_t now, uint64_t interval,
                        struct growth_part mem)
{
	struct rec_sample *r = (struct rec_sample *)s->buf;
	uint32_t keep = kept_frames(k, s->frames, t->nframes, now);
	uint32_t nsend = t->nframes - keep;
	size_t size = sizeof(*r) + nsend * sizeof(struct rec_frame) +
	              (keep ? sizeof(struct rec_sample_keep) : 0);

	*r = (struct rec_sample){
		.h = { keep ? REC_SAMPLE_DELTA : REC_SAMPLE, (uint32_t)size },
		.time_ns = now,
		.interval_ns = interval > UINT32_MAX ? UINT32_MAX : (uint32_t)interval,
		.tid = t->tid,
		.nframes = (uint16_t)t->nframes,
		.flags = t->flags,
		.pid = p->pid,
		.cpu_user_ns = t->utime_ns,
		.cpu_sys_ns = t->stime_ns,
		.minflt = t->minflt > UINT32_MAX ? UINT32_MAX : (uint32_t)t->minflt,
		.majflt = t->majflt > UINT32_MAX ? UINT32_MAX : (uint32_t)t->majflt,
		.mem_growth = mem.growth,
		.mem_shrink = mem.shrink,
		.run_ns = t->run_ns,
		.delay_ns = t->delay_ns,
	};
	if (nsend > 0) /* a non-Python target's threads have no frames */
		memcpy(r->frames, s->frames, nsend * sizeof(struct rec_frame));
	if (keep)
		memcpy(&r->frames[nsend], &(struct rec_sample_keep){ .keep = keep },
		       sizeof(struct rec_sample_keep));
	if (!ring_push(s->cfg.ring, r, size))
		return false;
	atomic_fetch_add_explicit(&s->stats.samples, 1, memory_order_relaxed);
	remember_sent(k, s->frames, t->nframes, keep, now);
	return true;
}

/* Every thread's state and CPU time, a few times a second: enough for
 * the threads panel, cheap for the ring. */
static void push_thread_states(struct sampler *s, struct sampler_proc *p, int n, uint64_t now)
{
	struct rec_threads *r = (struct rec_threads *)s->buf;
	size_t size = sizeof(*r) + (size_t)n * sizeof(struct rec_thread_state);

	if (now < p->threads_due || n <= 0 || size > s->buf_cap)
		return;
	p->threads_due = now + THREADS_EVERY_NS;
	sampler_proc_forget_stacks(p, now);
	*r = (struct rec_threads){
		.h = { REC_THREADS, (uint32_t)size }, .time_ns = now, .nthreads = (uint32_t)n,
		.pid = p->pid,
	};
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);
		uint8_t flags = (uint8_t)(t->flags & (SAMPLE_HAS_GIL | SAMPLE_GIL_WAIT |
		                                      SAMPLE_IN_CALL | SAMPLE_GIL_KNOWN));

		if (p->reports % NAMES_EVERY_REPORTS == 0 && t->tid > 0)
			announce_thread(s, p, t);
		/* Here, not per sample: the question costs a read per thread
		 * off CPU, and only the reports carry the answer. */
		if (t->state != 'R' && !(flags & (SAMPLE_HAS_GIL | SAMPLE_GIL_WAIT)) &&
		    sampler_proc_gil_wait(p, t->tid))
			flags |= SAMPLE_GIL_WAIT;
		r->threads[i] = (struct rec_thread_state){
			.tid = t->tid, .state = t->state, .flags = flags,
			.utime_ns = t->utime_ns, .stime_ns = t->stime_ns,
		};
	}
	p->reports++;
	ring_push(s->cfg.ring, r, size);
}

/* ---- --native: the target's native stacks ------------------------------ */

/* nat_n's mark for a runnable thread that the perf path does not sample
 * this tick: it waited for a CPU rather than ran (native_perf.h). */
#define NAT_NOT_DUE (-1)

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

/* The modules the unwinder met this tick, for the consumer's symbols:
 * pushed before the REC_NATIVE records whose addresses they hold. */
static bool announce_module(void *ctx, const struct ehframe_module *m)
{
	struct sampler *s = ctx;
	struct rec_module *r = (struct rec_module *)s->buf;
	size_t len = strnlen(m->path, UINT16_MAX);
	size_t size = REC_ALIGN(sizeof(*r) + len);

	if (size > s->buf_cap)
		return true; /* never fits: its addresses stay unknown */
	memset(r, 0, size);
	r->h = (struct rec_header){ REC_MODULE, (uint32_t)size };
	r->pid = s->cfg.pid;
	r->path_len = (uint16_t)len;
	r->lo = m->lo;
	r->hi = m->hi;
	r->map_start = m->map_start;
	r->map_end = m->map_end;
	r->offset = m->offset;
	memcpy(r->path, m->path, len);
	return ring_push(s->cfg.ring, r, size);
}

/* --idle on the perf path: a thread off CPU has no fresh perf sample, but
 * while it is blocked its stack cannot change: it is unwound in place from
 * the stack pointer and program counter /proc gives (the other registers
 * unknown: frames that need them end the unwind). */
static void blocked_stack(struct sampler *s, struct sampler_proc *p, int i, pid_t tid)
{
	struct user_regs_struct regs;
	uint64_t sp, pc;

	if (!proc_threads_blocked_at(p->threads, tid, &sp, &pc))
		return;
	memset(&regs, 0, sizeof(regs));
	regs.rsp = sp;
	regs.rip = pc;
	s->nat_n[i] = native_unwind_copy(s->unwind, tid, &regs, sp, NULL, 0,
	                                 &s->nat_ips[(size_t)i * NATIVE_MAX_FRAMES],
	                                 NATIVE_MAX_FRAMES);
}

/* The perf path: every listed thread keeps an event open; each thread
 * to sample is unwound from its newest perf sample, if that one may be
 * paired with this tick's Python stack (native_perf.h). */
static void perf_stacks(struct sampler *s, struct sampler_proc *p, int n)
{
	/* The Python stacks were read just now, not at the tick's start: the
	 * pairing bound is counted from here. */
	uint64_t read_ns = clock_now_ns();

	native_perf_begin(s->perf);
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);

		if (t->tid > 0)
			native_perf_watch(s->perf, t->tid);
	}
	native_perf_end(s->perf);
	native_perf_drain(s->perf);
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);
		const struct native_perf_sample *ps;

		if (t->status != PY_THREAD_OK || t->tid <= 0)
			continue;
		if (t->state != 'R') {
			blocked_stack(s, p, i, t->tid);
			continue;
		}
		switch (native_perf_pair(s->perf, t->tid, read_ns, t->run_ns, &ps)) {
		case NATIVE_PERF_NOT_DUE:
			s->nat_n[i] = NAT_NOT_DUE;
			break;
		case NATIVE_PERF_MISSED:
			break;
		case NATIVE_PERF_PAIRED:
			s->nat_n[i] = native_unwind_copy(s->unwind, t->tid, &ps->regs, ps->stack_base,
			                                 ps->stack, ps->stack_len,
			                                 &s->nat_ips[(size_t)i * NATIVE_MAX_FRAMES],
			                                 NATIVE_MAX_FRAMES);
			break;
		}
	}
}

/* The ptrace path: stop, unwind and resume every thread to be sampled
 * this tick, within half a period (see native_unwind.h for why all are
 * asked at once). */
static void ptrace_stacks(struct sampler *s, struct sampler_proc *p, int n, uint64_t now)
{
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);

		if (t->status == PY_THREAD_OK && t->tid > 0 && t->state != 'D')
			native_unwind_request(s->unwind, t->tid);
	}
	native_unwind_collect(s->unwind, now + s->period_ns / 2, take_native, s);
}

static void native_stacks(struct sampler *s, struct sampler_proc *p, int n, uint64_t now)
{
	s->nat_count = 0;
	if (n <= 0 || !native_room(s, n))
		return;
	s->nat_count = n;
	for (int i = 0; i < n; i++) {
		s->nat_n[i] = 0;
		s->nat_tid[i] = sampler_proc_thread_at(p, (size_t)i)->tid;
	}
	if (s->perf != NULL)
		perf_stacks(s, p, n);
	else
		ptrace_stacks(s, p, n, now);
	native_unwind_announce_modules(s->unwind, announce_module, s);
}

/* The REC_NATIVE for thread index i, just before its REC_SAMPLE; false
 * when the thread has no native stack this tick (counted in
 * native_missed) or is not sampled this tick (NAT_NOT_DUE). */
static bool push_native(struct sampler *s, struct sampler_proc *p, int i,
                        const struct py_thread_sample *t, uint64_t now)
{
	struct rec_native *r = (struct rec_native *)s->buf;
	int nips = i < s->nat_count ? s->nat_n[i] : 0;
	uint16_t *groups = (uint16_t *)(void *)(r->ips + nips);
	uint16_t ng = 0, run = 0;
	size_t size;

	if (nips == NAT_NOT_DUE)
		return false;
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
	r->pid = p->pid;
	r->nips = (uint16_t)nips;
	r->ngroups = ng;
	r->pad = 0;
	memcpy(r->ips, &s->nat_ips[(size_t)i * NATIVE_MAX_FRAMES], (size_t)nips * sizeof(uint64_t));
	return ring_push(s->cfg.ring, r, size);
}

/* What one tick saw across the sampled processes. */
struct tick_tally {
	int threads, running;
	bool gil;            /* some thread of the target held its GIL */
	uint64_t errors, errors_by_kind[SAMPLE_ERR_KINDS];
	uint64_t deep;       /* samples sent with a REC_MORE_FRAMES marker */
	uint64_t run_ns, delay_ns; /* the target's runnable threads' schedstat
	                              growth since their previous read */
};

/* How much the target's runnable thread t ran and waited for a CPU since
 * its previous runnable sample (counters that went back: a reused TID). */
static void tally_sched(struct sampler_proc *p, const struct py_thread_sample *t,
                        struct tick_tally *tt)
{
	struct known_thread *k;

	if (t->run_ns == 0 && t->delay_ns == 0)
		return;
	k = sampler_proc_thread(p, t->tid);
	if (k->sched_seen && t->run_ns >= k->run_ns && t->delay_ns >= k->delay_ns) {
		tt->run_ns += t->run_ns - k->run_ns;
		tt->delay_ns += t->delay_ns - k->delay_ns;
	}
	k->sched_seen = true;
	k->run_ns = t->run_ns;
	k->delay_ns = t->delay_ns;
}

/* Whether p's program was replaced (exec) since it was first read: its
 * main thread's stack moved, and the reader's addresses are stale.  Its
 * /proc stat is read for this a few times a second. */
static bool ran_exec(struct sampler_proc *p, uint64_t now)
{
	struct proc_thread_stat st;

	if (now < p->exec_due)
		return false;
	p->exec_due = now + THREADS_EVERY_NS;
	proc_threads_read_stat(p->threads, p->pid, &st);
	if (st.start_stack == 0)
		return false;
	if (p->start_stack == 0)
		p->start_stack = st.start_stack;
	return st.start_stack != p->start_stack;
}

/* Sample one process's threads; false when it is gone. */
static bool sample_proc(struct sampler *s, struct sampler_proc *p, uint64_t now,
                        uint64_t interval, struct tick_tally *tt)
{
	int n;
	struct growth_share growth;

	if (p == s->procs[0] && (atomic_load_explicit(&s->stats.exec_seen, memory_order_relaxed) ||
	                         ran_exec(p, now))) {
		/* What the target runs now is not what pytop found: say so
		 * and stop reading it (the follower of -s looks descendants
		 * up again; the target itself would need a new session). */
		atomic_store_explicit(&s->stats.exec_seen, true, memory_order_relaxed);
		/* A thread asked to stop for a native sample before the exec
		 * stops after it: release it (no new requests, so collect
		 * only releases), or it stays stopped while pytop runs. */
		if (s->unwind != NULL && s->perf == NULL)
			native_unwind_collect(s->unwind, now + s->period_ns / 2, take_native, s);
		native_perf_close_all(s->perf); /* its samples are of the new program */
		/* Not kill(pid, 0): it succeeds on a zombie nobody reaps. */
		return !proc_threads_ended(p->pid);
	}
	n = sampler_proc_sample(p, s->cfg.idle);
	growth = tick_growth(s, p, n);
	bool native = s->unwind != NULL && p == s->procs[0];

	if (native)
		native_stacks(s, p, n, now);
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *t = sampler_proc_thread_at(p, (size_t)i);

		if (t->flags & SAMPLE_RUNNING)
			tt->running++;
		if (p == s->procs[0])
			tally_sched(p, t, tt);
		if ((t->flags & SAMPLE_HAS_GIL) && p == s->procs[0])
			tt->gil = true;
		if (t->status == PY_THREAD_ERROR) {
			tt->errors++;
			tt->errors_by_kind[t->error_kind < SAMPLE_ERR_KINDS
			                   ? t->error_kind : SAMPLE_ERR_NONE]++;
		}
		if (t->status != PY_THREAD_OK)
			continue;
		/* One look-up of the thread per sample (the table is scanned). */
		struct known_thread *k = sampler_proc_thread(p, t->tid);

		if (!k->named)
			announce_thread(s, p, t);
		/* The perf path samples a runnable thread by the CPU it ran:
		 * one that waited for a CPU since is not sampled this tick. */
		if (native && i < s->nat_count && s->nat_n[i] == NAT_NOT_DUE)
			continue;
		if (!define_codes(s, p, t, s->frames))
			continue; /* the ring is full: the sample would be dropped too */
		/* With --native a sample is whole or not at all: a Python
		 * stack without its native part would shift the native
		 * shares (counted in native_missed instead). */
		if (native && !push_native(s, p, i, t, now))
			continue;
		if (push_sample(s, p, k, t, now, interval, take_share(&growth, t)) &&
		    (t->flags & SAMPLE_TRUNCATED))
			tt->deep++;
	}
	push_thread_states(s, p, n, now);
	tt->threads += n < 0 ? 0 : n;
	return n >= 0;
}

static void drop_proc(struct sampler *s, size_t i)
{
	sampler_proc_free(s->procs[i]);
	s->procs[i] = s->procs[--s->nprocs];
}

static void drop_pid(struct sampler *s, pid_t pid)
{
	for (size_t i = 1; i < s->nprocs; i++)
		if (s->procs[i]->pid == pid) {
			drop_proc(s, i);
			return;
		}
}

/* The follower's orders (-s): start or stop sampling a descendant, and
 * process records to pass on, in the follower's order. */
static void take_orders(struct sampler *s)
{
	const struct follow_msg *m = (const struct follow_msg *)s->order;
	size_t len;

	while (s->cfg.orders != NULL &&
	       (len = ring_pop(s->cfg.orders, s->order, sizeof(struct follow_msg))) > 0) {
		if (m->h.type == REC_PROCESS) {
			family_end_note(&s->family, s->order, len);
			ring_push(s->cfg.ring, s->order, len);
			continue;
		}
		drop_pid(s, m->pid);
		if (m->h.type == FOLLOW_ADD && len == sizeof(*m) && s->nprocs < FOLLOW_MAX_SAMPLED &&
		    (s->procs[s->nprocs] = sampler_proc_new(m->pid, &m->rt, s->cfg.split)) != NULL)
			s->nprocs++;
	}
}

/* One tick: returns false when the target is gone. */
static bool tick(struct sampler *s, uint64_t now, uint64_t interval)
{
	/* A thread CPU clock read is a system call: time one tick in
	 * WORK_EVERY and count it for all of them. */
	bool timed = s->ticks_taken++ % WORK_EVERY == 0;
	uint64_t cpu0 = timed ? clock_thread_cpu_ns() : 0;
	struct tick_tally tt = { 0 };
	bool alive;

	take_orders(s);
	alive = sample_proc(s, s->procs[0], now, interval, &tt);
	for (size_t i = 1; i < s->nprocs; i++)
		if (!sample_proc(s, s->procs[i], now, interval, &tt))
			drop_proc(s, i--); /* exited: the follower reports it */
	atomic_fetch_add_explicit(&s->stats.gil_ticks, tt.gil, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.runnable_ticks, tt.running > 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.run_ns, tt.run_ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.delay_ns, tt.delay_ns, memory_order_relaxed);
	atomic_store_explicit(&s->stats.threads_total, tt.threads, memory_order_relaxed);
	atomic_store_explicit(&s->stats.threads_running, tt.running, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.errors, tt.errors, memory_order_relaxed);
	for (int k = 0; k < SAMPLE_ERR_KINDS; k++)
		if (tt.errors_by_kind[k] != 0)
			atomic_fetch_add_explicit(&s->stats.errors_by_kind[k],
			                          tt.errors_by_kind[k], memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.deep_cut, tt.deep, memory_order_relaxed);
	if (timed) {
		uint64_t span = clock_thread_cpu_ns() - cpu0;

		/* The clock reads are not the work: they are two in WORK_EVERY
		 * ticks, and their cost shows in pytop's CPU. */
		span = span > s->clock_cost_ns ? span - s->clock_cost_ns : 0;
		atomic_fetch_add_explicit(&s->stats.work_ns, span * WORK_EVERY,
		                          memory_order_relaxed);
	}
	atomic_store_explicit(&s->stats.last_tick_ns, now, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->stats.ticks, 1, memory_order_relaxed);
	return alive;
}

/* What reading the thread CPU clock adds to a span it times (a system
 * call in most VMs: 0.6 us here). */
static uint64_t clock_read_cost(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 16; i++) {
		uint64_t a = clock_thread_cpu_ns(), b = clock_thread_cpu_ns();

		if (b - a < best)
			best = b - a;
	}
	return best;
}

/* Sleep until deadline_ns, or less when asked to pause or stop. */
static void sleep_until(struct sampler *s, uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(deadline_ns % NSEC_PER_SEC),
	};

	while (!atomic_load(&s->pause) && !atomic_load(&s->stop))
		if (sem_clockwait(&s->wake, CLOCK_MONOTONIC, &ts) != 0 && errno != EINTR)
			return; /* the deadline (or a deadline it cannot wait for) */
}

/* Job control stops pytop: release every thread (one still asked to stop
 * is waited for), say so, and wait to be resumed.  Returns the time
 * sampling resumed. */
static uint64_t pause_here(struct sampler *s)
{
	if (s->unwind != NULL)
		native_unwind_release_all(s->unwind, clock_now_ns() + PAUSE_RELEASE_NS);
	/* Stopped, pytop reads no sample: the target should not pay for them. */
	native_perf_close_all(s->perf);
	atomic_store(&s->paused, true);
	while (atomic_load(&s->pause) && !atomic_load(&s->stop))
		sem_wait(&s->wake); /* EINTR: look again */
	atomic_store(&s->paused, false);
	return clock_now_ns();
}

/* pytop's own stop signals go to the other threads, which release the
 * target through this one before pytop stops (job_control.h): the
 * sampler must never be the thread that waits for itself. */
static void block_job_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTTOU);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* -s, the target gone: the family's exits no scan will report.  The
 * target's memory goes before the kernel shows it as a zombie, so give
 * it a moment to end first. */
static void report_family_end(struct sampler *s)
{
	uint64_t give_up = clock_now_ns() + FAMILY_END_GRACE_NS;

	while (!proc_threads_ended(s->cfg.pid) && clock_now_ns() < give_up &&
	       !atomic_load(&s->stop))
		clock_sleep_until(clock_now_ns() + FAMILY_END_POLL_NS);
	take_orders(s);
	family_end_report(&s->family, s->cfg.ring, clock_now_ns());
}

/* --native: perf events where the kernel permits them (nothing stops),
 * else ptrace.  ptrace belongs to the thread that attached: the sampler
 * thread itself must check that it may trace the target. */
static void native_start(struct sampler *s)
{
	struct pytop_error perf_err = { 0 };

	s->unwind = native_unwind_new(s->cfg.pid);
	if (s->unwind == NULL) {
		error_set(&s->start_err, PYTOP_ERR_INTERNAL, "out of memory starting --native");
		s->start_rc = -1;
		return;
	}
	native_unwind_set_abort(s->unwind, &s->pause);
	if (s->cfg.native_perf) {
		s->perf = native_perf_new(s->cfg.pid, s->period_ns);
		if (s->perf != NULL && native_perf_probe(s->perf, &perf_err) == 0) {
			atomic_store(&s->stats.native_method, SAMPLER_NATIVE_PERF);
			/* Pairing asks each runnable thread's run time at every tick. */
			proc_threads_sched_every_read(s->procs[0]->threads, true);
			return;
		}
		native_perf_free(s->perf);
		s->perf = NULL;
	}
	s->start_rc = native_unwind_probe(s->unwind, &s->start_err);
	atomic_store(&s->stats.native_method, SAMPLER_NATIVE_PTRACE);
}

/* Absolute deadlines keep the mean rate exact however long a tick takes;
 * a random phase within each period keeps the sampler from locking onto a
 * target's periodic work. */
static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	const uint64_t period = s->period_ns;
	uint64_t base = clock_now_ns(), prev = base - period;

	block_job_signals();
	s->clock_cost_ns = clock_read_cost();
	if (s->cfg.native)
		native_start(s);
	sem_post(&s->started);
	if (s->start_rc != 0)
		return NULL;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	/* When allowed, the sampler preempts busy threads the moment its
	 * deadline comes: its CPU time is small and counted, and a late
	 * wake-up would cost a tick. */
	struct sampler_priority prio;
	sampler_priority_start(&prio, base);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		uint64_t now = clock_now_ns();

		if (atomic_load(&s->pause)) {
			/* The time stopped is no one's: start afresh. */
			base = pause_here(s);
			prev = base - period;
			continue;
		}
		if (!tick(s, now, now - prev)) {
			if (s->cfg.orders != NULL)
				report_family_end(s);
			break;
		}
		prev = now;
		base += period;
		now = clock_now_ns();
		sampler_priority_check(&prio, now);
		if (now > base + CATCH_UP_PERIODS * period) {
			/* A short delay is caught up: the late ticks fire back to
			 * back and together weigh what one sample spanning the delay
			 * should.  Far behind (the machine is overloaded) we skip
			 * ahead, so a burst never outweighs a few periods. */
			atomic_fetch_add_explicit(&s->stats.late, 1, memory_order_relaxed);
			base = now;
		}
		sleep_until(s, base + next_random(s) % (period / 2 + 1) - period / 4);
	}
	/* Release any thread still asked to stop while this thread can. */
	native_perf_free(s->perf);
	s->perf = NULL;
	native_unwind_free(s->unwind);
	s->unwind = NULL;
	atomic_store_explicit(&s->stats.finished, true, memory_order_release);
	return NULL;
}

static void free_parts(struct sampler *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		sampler_proc_free(s->procs[i]);
	free(s->nat_ips);
	free(s->nat_n);
	free(s->nat_tid);
	free(s->frames);
	free(s->order);
	free(s->buf);
	family_end_free(&s->family);
	free(s);
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
	s->period_ns = NSEC_PER_SEC / (uint64_t)cfg->rate_hz;
	family_end_init(&s->family);
	s->rng = clock_now_ns() | 1;
	s->buf_cap = ring_capacity(cfg->ring) / 4;
	s->buf = malloc(s->buf_cap);
	s->order = malloc(sizeof(struct follow_msg));
	s->frames = malloc(PY_READER_MAX_FRAMES * sizeof(*s->frames));
	s->procs[0] = sampler_proc_new(cfg->pid, cfg->rt, cfg->split);
	s->nprocs = s->procs[0] != NULL;
	if (s->buf == NULL || s->order == NULL || s->frames == NULL || s->procs[0] == NULL ||
	    sem_init(&s->started, 0, 0) != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory starting the sampler");
		free_parts(s);
		return NULL;
	}
	if (sem_init(&s->wake, 0, 0) != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot start the sampler: %s", strerror(errno));
		sem_destroy(&s->started);
		free_parts(s);
		return NULL;
	}
	rc = pthread_create(&s->thread, NULL, sampler_main, s);
	if (rc != 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot start the sampler thread: %s", strerror(rc));
		sem_destroy(&s->wake);
		sem_destroy(&s->started);
		free_parts(s);
		return NULL;
	}
	while (sem_wait(&s->started) != 0)
		;
	if (s->start_rc != 0) {
		*err = s->start_err;
		sampler_stop(s);
		return NULL;
	}
	job_control_install(s);
	return s;
}

void sampler_stop(struct sampler *s)
{
	if (s == NULL)
		return;
	job_control_remove(s);
	atomic_store(&s->stop, true);
	sem_post(&s->wake);
	pthread_join(s->thread, NULL);
	sem_destroy(&s->wake);
	sem_destroy(&s->started);
	free_parts(s);
}

/* Async-signal-safe: atomics, sem_post, clock_gettime, nanosleep. */
bool sampler_pause(struct sampler *s)
{
	uint64_t give_up = clock_now_ns() + PAUSE_ACK_NS;
	struct timespec step = { 0, PAUSE_POLL_NS };

	atomic_store(&s->pause, true);
	sem_post(&s->wake);
	while (!atomic_load(&s->paused)) {
		if (atomic_load(&s->stats.finished) || clock_now_ns() >= give_up)
			return atomic_load(&s->stats.finished);
		nanosleep(&step, NULL);
	}
	return true;
}

void sampler_resume(struct sampler *s)
{
	atomic_store(&s->pause, false);
	sem_post(&s->wake);
}

const struct sampler_stats *sampler_stats(const struct sampler *s)
{
	return &s->stats;
}
