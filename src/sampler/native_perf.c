/* native_perf.c - (--native) per-thread perf events whose samples carry
 * the user registers and stack top (native_perf.h: the scheme and the
 * pairing rule).
 *
 * Reading a ring costs no system call: the kernel's data_head is read
 * from the mapped control page, the records' headers are walked to the
 * newest sample, only that one is copied out, and data_tail is moved past
 * everything.  The records come from the kernel, but the stack bytes in
 * them are the target's: the unwinder treats them as data, and every
 * length here is checked against the ring before it is used. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/native_perf.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Data pages per thread (a power of two): up to seven samples, where a
 * tick brings SPLIT and a late tick a few more.  A full ring drops the
 * kernel's newest samples: the pairing rule then finds the kept ones too
 * old, never pairs a stale one. */
#define RING_PAGES 32
/* Over the locked-memory allowance (perf_event_mlock_kb, not root): this
 * many, three samples, rather than no ring for the thread at all. */
#define RING_PAGES_MIN 16
/* Perf samples per sampling period: the newest is then at most a
 * SPLIT-th of a period of CPU older than the Python stack, so a short C
 * call's edges lose that much, not a whole period (issue 14: zlib's share
 * under-counted by a fifth at one sample per period). */
#define SPLIT 4
/* ...but not more often than this (10 kHz: one per period), as each
 * sample costs the target an interrupt and a copy of its stack top. */
#define MIN_SAMPLE_NS 100000u
#define PAGE 4096u

/* The registers the unwinder reads (native_unwind.c's reg_value), in
 * perf's order: the kernel writes them by ascending bit. */
static const int sampled_regs[] = {
	PERF_REG_X86_AX, PERF_REG_X86_BX, PERF_REG_X86_CX, PERF_REG_X86_DX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_IP, PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10,
	PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
	PERF_REG_X86_R15,
};
#define NREGS (sizeof(sampled_regs) / sizeof(sampled_regs[0]))

struct watched {
	pid_t tid;
	int fd;
	uint8_t *ring;       /* control page + pages, mapped */
	size_t pages;        /* data pages: RING_PAGES or RING_PAGES_MIN */
	bool listed;         /* in this tick's list */
	bool have;           /* sample holds one */
	struct native_perf_sample sample;
	uint64_t due_ns;     /* task-clock count at which the thread's next
	                        sample is due: one per period of CPU */
};

struct native_perf {
	pid_t pid;
	uint64_t period_ns;  /* the sampling period */
	uint64_t sample_ns;  /* the events' period: CPU time between samples */
	uint64_t pair_ns;    /* pairing bound: CPU run since the sample */
	bool user_only;      /* kernel-mode samples refused to us: skip them */
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
	np->sample_ns = period_ns / SPLIT > MIN_SAMPLE_NS ? period_ns / SPLIT : MIN_SAMPLE_NS;
	/* One sample period, and half as much again: the task-clock timer
	 * fires a little late, and the count read after the Python stack's
	 * includes the time that read took. */
	np->pair_ns = np->sample_ns + np->sample_ns / 2;
	return np;
}

static void unwatch(struct watched *w)
{
	if (w->ring != NULL)
		munmap(w->ring, (w->pages + 1) * PAGE);
	if (w->fd >= 0)
		close(w->fd);
	free(w->sample.stack);
}

void native_perf_free(struct native_perf *np)
{
	if (np == NULL)
		return;
	for (size_t i = 0; i < np->n; i++)
		unwatch(&np->w[i]);
	free(np->w);
	free(np);
}

static uint64_t regs_mask(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < NREGS; i++)
		m |= 1ull << sampled_regs[i];
	return m;
}

/* cpu -1: this thread on any CPU.  The sandbox refuses any other cpu,
 * which would watch every process on that CPU. */
static int open_event(pid_t tid, uint64_t period, bool user_only)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period;
	/* READ: the count (the thread's CPU time) at the sample. */
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
	                PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = regs_mask();
	a.sample_stack_user = NATIVE_PERF_STACK;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	/* No wake-up settings: nobody polls the descriptor, the sampler
	 * reads the ring at its own ticks. */
	return (int)syscall(SYS_perf_event_open, &a, (long)tid, -1L, -1L,
	                    (unsigned long)PERF_FLAG_FD_CLOEXEC);
}

/* The task-clock event of tid, its ring mapped.  -1 with errno on failure. */
static int watch_open(struct native_perf *np, struct watched *w)
{
	w->fd = open_event(w->tid, np->sample_ns, np->user_only);
	if (w->fd < 0 && (errno == EACCES || errno == EPERM) && !np->user_only) {
		/* perf_event_paranoid 2: user-mode samples only.  A sample
		 * that falls in a system call is then lost, not wrong. */
		np->user_only = true;
		w->fd = open_event(w->tid, np->sample_ns, true);
	}
	if (w->fd < 0)
		return -1;
	for (w->pages = RING_PAGES;; w->pages /= 2) {
		w->ring = mmap(NULL, (w->pages + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		               w->fd, 0);
		if (w->ring != MAP_FAILED || errno != EPERM || w->pages == RING_PAGES_MIN)
			break;
	}
	if (w->ring == MAP_FAILED) {
		w->ring = NULL;
		return -1; /* EPERM: over perf_event_mlock_kb (not root) */
	}
	w->sample.stack = malloc(NATIVE_PERF_STACK);
	return w->sample.stack == NULL ? -1 : 0;
}

static struct watched *find(const struct native_perf *np, pid_t tid)
{
	for (size_t i = 0; i < np->n; i++)
		if (np->w[i].tid == tid)
			return &np->w[i];
	return NULL;
}

/* The new slot for tid, its event opened; NULL (errno) when refused.  A
 * refused thread keeps a slot without an event, so that it is not asked
 * again every tick (over perf_event_mlock_kb it would fail every time). */
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
	w->fd = -1;
	np->n++;
	if (watch_open(np, w) != 0) {
		int e = errno;

		unwatch(w);
		memset(w, 0, sizeof(*w));
		w->tid = tid;
		w->fd = -1;
		w->listed = true;
		errno = e;
		return NULL;
	}
	return w;
}

int native_perf_probe(struct native_perf *np, struct pytop_error *err)
{
	if (add(np, np->pid) != NULL)
		return 0;
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
	for (size_t i = 0; i < np->n; i++)
		np->w[i].listed = false;
}

bool native_perf_watch(struct native_perf *np, pid_t tid, bool open)
{
	struct watched *w = find(np, tid);

	if (w == NULL && open)
		w = add(np, tid);
	if (w != NULL)
		w->listed = true;
	return w != NULL && w->ring != NULL;
}

void native_perf_end(struct native_perf *np)
{
	size_t i = 0;

	while (i < np->n) {
		if (np->w[i].listed) {
			i++;
			continue;
		}
		unwatch(&np->w[i]);
		np->w[i] = np->w[--np->n];
	}
}

void native_perf_close_all(struct native_perf *np)
{
	if (np == NULL)
		return;
	native_perf_begin(np);
	native_perf_end(np); /* none listed: all closed */
}

/* len (<= size) bytes at ring offset off, wrapping. */
static void ring_copy(const uint8_t *data, uint64_t size, uint64_t off, void *dst, size_t len)
{
	size_t at = (size_t)(off % size), first = len < size - at ? len : (size_t)(size - at);

	memcpy(dst, data + at, first);
	memcpy((uint8_t *)dst + first, data, len - first);
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

/* Reads a sample record field by field, never past its end. */
struct cursor {
	const uint8_t *data;
	uint64_t size, off, end; /* ring size; next field; record end */
};

static bool take(struct cursor *c, void *dst, size_t len)
{
	if (len > c->end - c->off)
		return false;
	ring_copy(c->data, c->size, c->off, dst, len);
	c->off += len;
	return true;
}

/* The sample record of rec_size bytes at ring offset off, as laid out
 * for our sample_type: pid/tid, time, count, abi, registers, stack size,
 * stack, dynamic size.  False when it is not one whole sample of this
 * thread. */
static bool parse_sample(struct watched *w, const uint8_t *data, uint64_t size, uint64_t off,
                         size_t rec_size)
{
	struct native_perf_sample *s = &w->sample;
	struct cursor c = { data, size, off + sizeof(struct perf_event_header), off + rec_size };
	uint64_t abi, regs[NREGS], stack_size, dyn, stack_at;
	uint32_t pid_tid[2];

	if (!take(&c, pid_tid, 8) || !take(&c, &s->time_ns, 8) || !take(&c, &s->cpu_ns, 8) ||
	    !take(&c, &abi, 8))
		return false;
	if (abi != PERF_SAMPLE_REGS_ABI_64 || (pid_t)pid_tid[1] != w->tid)
		return false; /* no user registers: 32-bit code */
	if (!take(&c, regs, sizeof(regs)) || !take(&c, &stack_size, 8) ||
	    stack_size == 0 || stack_size > NATIVE_PERF_STACK)
		return false;
	stack_at = c.off;
	c.off += stack_size;
	if (c.off > c.end || !take(&c, &dyn, 8) || dyn > stack_size)
		return false;
	memset(&s->regs, 0, sizeof(s->regs));
	for (size_t i = 0; i < NREGS; i++)
		set_reg(&s->regs, sampled_regs[i], regs[i]);
	s->tid = w->tid;
	s->stack_base = s->regs.rsp;
	s->stack_len = (size_t)dyn;
	ring_copy(data, size, stack_at, s->stack, s->stack_len);
	return true;
}

/* The newest sample in w's ring since the last read, then the ring
 * emptied. */
static void drain_one(struct watched *w)
{
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)w->ring;
	const uint8_t *data = w->ring + PAGE;
	uint64_t size = (uint64_t)w->pages * PAGE;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail, newest = head;
	size_t newest_size = 0;

	if (head - tail > size)
		tail = head - size; /* cannot happen with a writable map; never trust it */
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			newest = tail;
			newest_size = h.size;
		}
		tail += h.size;
	}
	if (newest_size != 0 && parse_sample(w, data, size, newest, newest_size))
		w->have = true;
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

void native_perf_drain(struct native_perf *np)
{
	for (size_t i = 0; i < np->n; i++)
		if (np->w[i].ring != NULL)
			drain_one(&np->w[i]);
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

/* Whether w's newest sample is at most pair_ns of its CPU time older than
 * a Python stack read that ended at read_ns. */
static bool young(const struct native_perf *np, const struct watched *w, uint64_t read_ns)
{
	uint64_t count;

	/* Young enough by the wall clock: it cannot have run longer. */
	if (w->sample.time_ns + np->pair_ns >= read_ns)
		return true;
	/* Older: most likely it has been waiting for a CPU since (a thread
	 * on one is sampled every period), so reading its count costs no
	 * interrupt of the target; schedstat's run time would not do, as it
	 * lags a running thread by up to a scheduler tick. */
	if (read(w->fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		return false;
	return count - w->sample.cpu_ns <= np->pair_ns;
}

/* Whether w's thread ran a whole sampling period of CPU since its event
 * opened without a sample read from its ring (one that cannot be
 * parsed, say): due, and missed. */
static bool ran_unsampled(const struct native_perf *np, const struct watched *w)
{
	uint64_t count;

	return read(w->fd, &count, sizeof(count)) != (ssize_t)sizeof(count) ||
	       count >= np->period_ns;
}

enum native_perf_pairing native_perf_pair(struct native_perf *np, pid_t tid, uint64_t read_ns,
                                          const struct native_perf_sample **out)
{
	struct watched *w = find(np, tid);

	*out = NULL;
	if (w == NULL || w->ring == NULL)
		return NATIVE_PERF_MISSED; /* no event: refused */
	/* No sample since its event opened: it ran less than a sample
	 * period since, so no period is due yet (a thread just seen, or
	 * one that runs in short bursts: not a miss at every tick until
	 * its first sample), unless its count says otherwise. */
	if (!w->have)
		return ran_unsampled(np, w) ? NATIVE_PERF_MISSED : NATIVE_PERF_NOT_DUE;
	if (!due(np, w))
		return NATIVE_PERF_NOT_DUE;
	if (!young(np, w, read_ns))
		return NATIVE_PERF_MISSED;
	*out = &w->sample;
	return NATIVE_PERF_PAIRED;
}
