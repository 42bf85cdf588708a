/* native_perf.c - (--native) each thread's newest perf sample, sorted
 * out of perf_rings.h's per-CPU rings, and the pairing rule
 * (native_perf.h).
 *
 * A drain walks every ring's records, noting per thread where its newest
 * sample is and its count on that CPU; only each thread's newest is
 * copied out, then the rings are emptied.  The records come from the
 * kernel, but the stack bytes in them are the target's: the unwinder
 * treats them as data, and every length here is checked against the
 * ring before it is used. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/native_perf.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

/* Where a thread's newest sample in this drain's rings is. */
struct pending {
	size_t ring;
	uint64_t off, time_ns;
	size_t size;             /* 0: none this drain */
};

struct watched {
	pid_t tid;
	bool listed;         /* in this tick's list */
	bool sampled;        /* samples drained since the last end */
	bool have;           /* sample holds one */
	bool fresh;          /* sample not yet seen by native_perf_pair */
	struct native_perf_sample sample;
	uint64_t *count;     /* per ring: its task-clock count there, at its
	                        newest sample there */
	struct pending pend;
	uint64_t due_ns;     /* CPU count at which the thread's next sample
	                        is due: one per period of CPU */
	uint64_t ran_before; /* CPU it ran between sample and the tick that
	                        first saw it, at most */
	uint64_t run_seen;   /* its schedstat run time at that tick */
};

struct native_perf {
	pid_t pid;
	uint64_t period_ns;  /* the sampling period */
	uint64_t sample_ns;  /* the events' period: CPU time between samples */
	uint64_t pair_ns;    /* pairing bound: CPU run since the sample */
	bool lost;           /* the kernel dropped samples in this drain */
	struct perf_rings *rings; /* owned */
	struct perf_ring_span *spans; /* owned: one per ring, for a drain */
	struct watched *w;   /* owned */
	size_t n, cap;
};

struct native_perf *native_perf_new(pid_t pid, uint64_t period_ns)
{
	struct native_perf *np = calloc(1, sizeof(*np));

	if (np == NULL)
		return NULL;
	np->pid = pid;
	np->period_ns = period_ns;
	np->rings = perf_rings_new(pid, period_ns);
	np->spans = np->rings ? calloc(perf_rings_count(np->rings), sizeof(*np->spans)) : NULL;
	if (np->spans == NULL) {
		perf_rings_free(np->rings);
		free(np);
		return NULL;
	}
	return np;
}

static void forget(struct watched *w)
{
	free(w->sample.stack);
	free(w->count);
}

static void forget_all(struct native_perf *np)
{
	for (size_t i = 0; i < np->n; i++)
		forget(&np->w[i]);
	np->n = 0;
}

void native_perf_free(struct native_perf *np)
{
	if (np == NULL)
		return;
	forget_all(np);
	perf_rings_free(np->rings);
	free(np->spans);
	free(np->w);
	free(np);
}

static struct watched *find(const struct native_perf *np, pid_t tid)
{
	for (size_t i = 0; i < np->n; i++)
		if (np->w[i].tid == tid)
			return &np->w[i];
	return NULL;
}

/* The new slot for tid; NULL on OOM. */
static struct watched *add(struct native_perf *np, pid_t tid)
{
	struct watched *w;

	if (np->n == np->cap) {
		size_t cap = np->cap ? np->cap * 2 : 8;
		struct watched *nw = realloc(np->w, cap * sizeof(*nw));

		if (nw == NULL)
			return NULL;
		np->w = nw;
		np->cap = cap;
	}
	w = &np->w[np->n];
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	/* Its first sampling period is due at its first sample: a thread
	 * that lives less than a period is sampled once if a tick finds it
	 * running after that (a due point at random in its CPU time instead
	 * lands past its end or at a tick late in its life: a thread per
	 * request's last part over-counted by 10-20 points). */

	w->count = calloc(perf_rings_count(np->rings), sizeof(*w->count));
	w->sample.stack = malloc(NATIVE_PERF_STACK);
	if (w->count == NULL || w->sample.stack == NULL) {
		forget(w);
		return NULL;
	}
	np->n++;
	return w;
}

/* The events just opened: the bounds follow their sample period. */
static void opened(struct native_perf *np)
{
	np->sample_ns = perf_rings_sample_ns(np->rings);
	/* One sample period, and half as much again: the task-clock timer
	 * fires a little late, and the Python stack's read takes time too. */
	np->pair_ns = np->sample_ns + np->sample_ns / 2;
}

int native_perf_probe(struct native_perf *np, struct pytop_error *err)
{
	if (perf_rings_open(np->rings) == 0) {
		opened(np);
		return 0;
	}
	if (errno == ESRCH)
		error_set(err, PYTOP_ERR_NO_PROCESS, "process %d exited; check the PID (ps -e)",
		          (int)np->pid);
	else
		error_set(err, PYTOP_ERR_PERMISSION, "perf events on process %d are refused "
		          "(%s); --native stops each thread with ptrace instead: allow them "
		          "with sysctl kernel.perf_event_paranoid=2 or CAP_PERFMON",
		          (int)np->pid, strerror(errno));
	return -1;
}

void native_perf_begin(struct native_perf *np)
{
	/* Closed (pytop was paused, or the target ran exec): its threads'
	 * counts start again from zero, so do their references. */
	if (!perf_rings_is_open(np->rings) && perf_rings_open(np->rings) == 0) {
		opened(np);
		forget_all(np);
	}
	for (size_t i = 0; i < np->n; i++)
		np->w[i].listed = false;
}

void native_perf_watch(struct native_perf *np, pid_t tid)
{
	struct watched *w = find(np, tid);

	if (w != NULL)
		w->listed = true;
}

void native_perf_end(struct native_perf *np)
{
	size_t i = 0;

	while (i < np->n) {
		struct watched *w = &np->w[i];

		if (w->listed || w->sampled) {
			w->sampled = false;
			i++;
			continue;
		}
		forget(w);
		np->w[i] = np->w[--np->n];
	}
}

void native_perf_close_all(struct native_perf *np)
{
	if (np == NULL)
		return;
	perf_rings_close(np->rings);
}

/* Reads a sample record field by field, never past its end. */
struct cursor {
	const struct perf_ring_span *span;
	uint64_t off, end; /* next field; record end */
};

static bool take(struct cursor *c, void *dst, size_t len)
{
	if (len > c->end - c->off)
		return false;
	perf_ring_copy(c->span, c->off, dst, len);
	c->off += len;
	return true;
}

static void set_reg(struct user_regs_struct *r, int which, uint64_t v)
{
	unsigned long long *slot[PERF_REG_X86_64_MAX] = {
		[PERF_REG_X86_AX] = &r->rax, [PERF_REG_X86_BX] = &r->rbx,
		[PERF_REG_X86_CX] = &r->rcx, [PERF_REG_X86_DX] = &r->rdx,
		[PERF_REG_X86_SI] = &r->rsi, [PERF_REG_X86_DI] = &r->rdi,
		[PERF_REG_X86_BP] = &r->rbp, [PERF_REG_X86_SP] = &r->rsp,
		[PERF_REG_X86_IP] = &r->rip, [PERF_REG_X86_R8] = &r->r8,
		[PERF_REG_X86_R9] = &r->r9, [PERF_REG_X86_R10] = &r->r10,
		[PERF_REG_X86_R11] = &r->r11, [PERF_REG_X86_R12] = &r->r12,
		[PERF_REG_X86_R13] = &r->r13, [PERF_REG_X86_R14] = &r->r14,
		[PERF_REG_X86_R15] = &r->r15,
	};

	*slot[which] = v;
}

/* The head of a sample record at c: pid/tid, time and (when the kernel
 * gives it) the thread's count on this CPU. */
static bool take_head(struct cursor *c, bool counted, pid_t *tid, uint64_t *time_ns,
                      uint64_t *count)
{
	uint32_t pid_tid[2];

	*count = 0;
	if (!take(c, pid_tid, 8) || !take(c, time_ns, 8) || (counted && !take(c, count, 8)))
		return false;
	*tid = (pid_t)pid_tid[1];
	return *tid > 0;
}

/* w's newest sample, at its pending place in span, as laid out for our
 * sample_type: the head, abi, registers, stack size, stack, dynamic size.
 * False when it is not one whole sample. */
static bool parse_sample(const struct native_perf *np, struct watched *w,
                         const struct perf_ring_span *span)
{
	struct native_perf_sample *s = &w->sample;
	struct cursor c = { span, w->pend.off + sizeof(struct perf_event_header),
	                    w->pend.off + w->pend.size };
	uint64_t abi, regs[PERF_RINGS_NREGS], stack_size, dyn, stack_at, count, time_ns;
	pid_t tid;

	if (!take_head(&c, perf_rings_read_count(np->rings), &tid, &time_ns, &count) ||
	    tid != w->tid || !take(&c, &abi, 8))
		return false;
	if (abi != PERF_SAMPLE_REGS_ABI_64)
		return false; /* no user registers: 32-bit code */
	if (!take(&c, regs, sizeof(regs)) || !take(&c, &stack_size, 8) ||
	    stack_size == 0 || stack_size > NATIVE_PERF_STACK)
		return false;
	stack_at = c.off;
	c.off += stack_size;
	if (c.off > c.end || !take(&c, &dyn, 8) || dyn > stack_size)
		return false;
	memset(&s->regs, 0, sizeof(s->regs));
	for (size_t i = 0; i < PERF_RINGS_NREGS; i++)
		set_reg(&s->regs, perf_rings_regs[i], regs[i]);
	s->tid = w->tid;
	s->time_ns = time_ns;
	s->stack_base = s->regs.rsp;
	s->stack_len = (size_t)dyn;
	perf_ring_copy(span, stack_at, s->stack, s->stack_len);
	return true;
}

/* One sample record of ring i: its thread's count there, and whether it
 * is that thread's newest so far. */
static void note_sample(struct native_perf *np, size_t i, const struct perf_ring_span *span,
                        uint64_t off, size_t size)
{
	struct cursor c = { span, off + sizeof(struct perf_event_header), off + size };
	bool counted = perf_rings_read_count(np->rings);
	uint64_t time_ns, count;
	struct watched *w;
	pid_t tid;

	if (!take_head(&c, counted, &tid, &time_ns, &count))
		return;
	w = find(np, tid);
	if (w == NULL && (w = add(np, tid)) == NULL)
		return;
	/* Without the count, each sample stands for one sample period. */
	w->count[i] = counted ? count : w->count[i] + np->sample_ns;
	w->sampled = true;
	if (w->pend.size == 0 || time_ns >= w->pend.time_ns)
		w->pend = (struct pending){ i, off, time_ns, size };
}

/* Ring i's records since the last drain: noted, not yet consumed. */
static void walk_ring(struct native_perf *np, size_t i, const struct perf_ring_span *span)
{
	uint64_t tail = span->tail;

	while (span->head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		perf_ring_copy(span, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > span->head - tail)
			break;
		if (h.type == PERF_RECORD_SAMPLE)
			note_sample(np, i, span, tail, h.size);
		else if (h.type == PERF_RECORD_LOST)
			np->lost = true;
		tail += h.size;
	}
}

static uint64_t count_sum(const struct native_perf *np, const struct watched *w)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < perf_rings_count(np->rings); i++)
		sum += w->count[i];
	return sum;
}

void native_perf_drain(struct native_perf *np)
{
	size_t nr = perf_rings_count(np->rings);
	struct perf_ring_span *spans = np->spans;

	if (!perf_rings_is_open(np->rings))
		return;
	np->lost = false;
	for (size_t i = 0; i < np->n; i++)
		np->w[i].pend.size = 0;
	for (size_t i = 0; i < nr; i++) {
		spans[i] = (struct perf_ring_span){ 0 };
		if (perf_rings_span(np->rings, i, &spans[i]))
			walk_ring(np, i, &spans[i]);
	}
	for (size_t i = 0; i < np->n; i++) {
		struct watched *w = &np->w[i];

		if (w->pend.size != 0 && parse_sample(np, w, &spans[w->pend.ring])) {
			w->have = w->fresh = true;
			w->sample.cpu_ns = count_sum(np, w);
		}
	}
	for (size_t i = 0; i < nr; i++)
		if (spans[i].data != NULL)
			perf_rings_consume(np->rings, i, spans[i].head);
}

/* Whether w's thread ran another sampling period of CPU, by the count in
 * its newest sample, since the last sample it was due for; if so, that
 * period is used up.  The backlog is kept to one period: a thread that
 * ran while pytop was late is not sampled at every later tick. */
static bool due(const struct native_perf *np, struct watched *w)
{
	uint64_t ran = w->sample.cpu_ns;

	if (ran < w->due_ns)
		return false;
	w->due_ns += np->period_ns;
	if (ran > w->due_ns + np->period_ns)
		w->due_ns = ran - np->period_ns;
	return true;
}

/* The first tick that looks at w's newest sample: the CPU the thread ran
 * since it, at most (native_perf.h), and its run time now. */
static void first_look(const struct native_perf *np, struct watched *w, uint64_t read_ns,
                       uint64_t run_ns)
{
	uint64_t age = read_ns > w->sample.time_ns ? read_ns - w->sample.time_ns : 0;

	w->fresh = false;
	w->run_seen = run_ns;
	/* A thread that ran another sample period on its CPU would have a
	 * newer sample there, unless the kernel dropped it (a full ring) or
	 * did not take it (in the kernel, user-mode samples only). */
	w->ran_before = np->lost || perf_rings_user_only(np->rings) || age < np->sample_ns
	                ? age : np->sample_ns;
}

/* Whether w's newest sample is at most pair_ns of its CPU time older than
 * a Python stack read that ended at read_ns, when the thread's run time
 * was run_ns. */
static bool young(const struct native_perf *np, const struct watched *w, uint64_t read_ns,
                  uint64_t run_ns)
{
	/* Young enough by the wall clock: it cannot have run longer. */
	if (w->sample.time_ns + np->pair_ns >= read_ns)
		return true;
	/* Older: most likely it has been waiting for a CPU since (a thread
	 * on one is sampled every sample period), when schedstat's run time,
	 * which lags only a thread on a CPU, has not moved. */
	return run_ns >= w->run_seen && w->ran_before + (run_ns - w->run_seen) <= np->pair_ns;
}

enum native_perf_pairing native_perf_pair(struct native_perf *np, pid_t tid, uint64_t read_ns,
                                          uint64_t run_ns,
                                          const struct native_perf_sample **out)
{
	struct watched *w = find(np, tid);

	*out = NULL;
	if (!perf_rings_is_open(np->rings))
		return NATIVE_PERF_MISSED; /* no events: refused since */
	/* No sample since its events opened (or since it started): it ran
	 * less than a sample period on each CPU since, so no period is due
	 * yet (a thread just started, or one that runs in short bursts: not
	 * a miss at every tick until its first sample). */
	if (w == NULL || !w->have)
		return perf_rings_refused(np->rings, tid) ? NATIVE_PERF_MISSED : NATIVE_PERF_NOT_DUE;
	if (w->fresh)
		first_look(np, w, read_ns, run_ns);
	if (!due(np, w))
		return NATIVE_PERF_NOT_DUE;
	if (!young(np, w, read_ns, run_ns))
		return NATIVE_PERF_MISSED;
	*out = &w->sample;
	return NATIVE_PERF_PAIRED;
}
