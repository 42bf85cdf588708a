/* perf_rings.c - per-CPU rings fed by a process's inherited task-clock
 * events (perf_rings.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/perf_rings.h"

#include <asm/perf_regs.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A thread's events start a whole sample period when it starts, so a
 * thread that runs less CPU time than that in its life is never sampled:
 * the period is this short (a thread per request runs a few hundred
 * microseconds) unless the rings cannot hold a tick's samples at it. */
#define SAMPLE_NS_MIN 100000u
/* A sample's bytes in a ring: its stack copy, registers and fields. */
#define SAMPLE_BYTES (PERF_RINGS_STACK + 256u)
/* Samples a ring holds beyond one sampling period's of its CPU: a tick
 * a little late, the timer's lateness. */
#define SLACK_SAMPLES 4u
/* Locked memory for all rings at most (a 64-CPU machine at 100 Hz would
 * want 2 MiB per CPU); fewer pages per ring, a longer sample period. */
#define RINGS_BUDGET (64u << 20)
/* Fewer pages than this per ring (the locked-memory allowance,
 * perf_event_mlock_kb, when not root): no perf events. */
#define RING_PAGES_MIN 16
#define PAGE 4096u
/* Times the thread list is read again for threads started while the
 * events of their parent were being opened. */
#define LIST_PASSES 4

const int perf_rings_regs[PERF_RINGS_NREGS] = {
	PERF_REG_X86_AX, PERF_REG_X86_BX, PERF_REG_X86_CX, PERF_REG_X86_DX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,
	PERF_REG_X86_IP, PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10,
	PERF_REG_X86_R11, PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14,
	PERF_REG_X86_R15,
};

struct ring {
	int cpu;
	int fd;          /* the event that owns the mapping; -1: none yet */
	uint8_t *map;    /* control page + pages */
	size_t pages;
};

struct perf_rings {
	pid_t pid;
	uint64_t period_ns;  /* the sampling period */
	uint64_t sample_ns;  /* the events': chosen with the rings' size */
	size_t pages;        /* data pages per ring */
	bool map_refused;    /* a ring's mapping was over the allowance */
	bool user_only;  /* kernel-mode samples refused to us */
	bool no_read;    /* the kernel refuses PERF_SAMPLE_READ with inherit */
	bool open;
	struct ring *rings; /* one per online CPU, owned */
	size_t nrings;
	int *fds;           /* every event, owned */
	size_t nfds, cap_fds;
	pid_t *threads;     /* the threads whose events were opened here */
	size_t nthreads, cap_threads;
	pid_t *refused;     /* listed threads whose events could not be opened */
	size_t nrefused, cap_refused;
};

/* "0-3,6,8-9": the online CPUs, into pr->rings. */
static int list_cpus(struct perf_rings *pr)
{
	char buf[4096], *p = buf;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f != NULL)
		fclose(f);
	buf[len] = '\0';
	while (*p >= '0' && *p <= '9') {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		for (long c = lo; c <= hi && hi - lo < 65536; c++) {
			struct ring *nr = realloc(pr->rings, (pr->nrings + 1) * sizeof(*nr));

			if (nr == NULL)
				return -1;
			pr->rings = nr;
			pr->rings[pr->nrings++] = (struct ring){ .cpu = (int)c, .fd = -1 };
		}
		if (*p == ',')
			p++;
	}
	return pr->nrings > 0 ? 0 : -1;
}

struct perf_rings *perf_rings_new(pid_t pid, uint64_t period_ns)
{
	struct perf_rings *pr = calloc(1, sizeof(*pr));

	if (pr == NULL)
		return NULL;
	pr->pid = pid;
	pr->period_ns = period_ns;
	if (list_cpus(pr) != 0) {
		perf_rings_free(pr);
		return NULL;
	}
	return pr;
}

void perf_rings_free(struct perf_rings *pr)
{
	if (pr == NULL)
		return;
	perf_rings_close(pr);
	free(pr->rings);
	free(pr->fds);
	free(pr->threads);
	free(pr->refused);
	free(pr);
}

static uint64_t regs_mask(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < PERF_RINGS_NREGS; i++)
		m |= 1ull << perf_rings_regs[i];
	return m;
}

static int open_event(const struct perf_rings *pr, pid_t tid, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = pr->sample_ns;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
	                PERF_SAMPLE_STACK_USER | (pr->no_read ? 0 : PERF_SAMPLE_READ);
	a.sample_regs_user = regs_mask();
	a.sample_stack_user = PERF_RINGS_STACK;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = pr->user_only;
	a.exclude_hv = 1;
	/* Threads only: a child process is not pytop's to sample here. */
	a.inherit = 1;
	a.inherit_thread = 1;
	/* No wake-up settings: nobody polls, the sampler reads at its ticks. */
	return (int)syscall(SYS_perf_event_open, &a, (long)tid, (long)cpu, -1L,
	                    (unsigned long)PERF_FLAG_FD_CLOEXEC);
}

/* An event of tid on CPU cpu, falling back to what the kernel permits:
 * user-mode samples only (perf_event_paranoid 2), no count in the
 * samples (before Linux 6.12).  -1 with errno when refused. */
static int open_permitted(struct perf_rings *pr, pid_t tid, int cpu)
{
	int fd = open_event(pr, tid, cpu);

	if (fd < 0 && errno == EINVAL && !pr->no_read) {
		pr->no_read = true;
		fd = open_event(pr, tid, cpu);
		if (fd < 0)
			pr->no_read = false;
	}
	if (fd < 0 && (errno == EACCES || errno == EPERM) && !pr->user_only) {
		pr->user_only = true;
		fd = open_event(pr, tid, cpu);
		if (fd < 0 && errno == EINVAL && !pr->no_read) {
			pr->no_read = true;
			fd = open_event(pr, tid, cpu);
		}
	}
	return fd;
}

static bool keep_fd(struct perf_rings *pr, int fd)
{
	if (pr->nfds == pr->cap_fds) {
		size_t cap = pr->cap_fds ? pr->cap_fds * 2 : 16;
		int *n = realloc(pr->fds, cap * sizeof(*n));

		if (n == NULL)
			return false;
		pr->fds = n;
		pr->cap_fds = cap;
	}
	pr->fds[pr->nfds++] = fd;
	return true;
}

/* fd's samples into its CPU's ring: the ring is mapped on the CPU's first
 * event, the others write into it. */
static int attach_ring(struct perf_rings *pr, struct ring *r, int fd)
{
	if (r->fd >= 0)
		return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd);
	r->pages = pr->pages;
	r->map = mmap(NULL, (r->pages + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		/* EPERM: over perf_event_mlock_kb (and RLIMIT_MEMLOCK) */
		pr->map_refused = pr->map_refused || errno == EPERM;
		r->map = NULL;
		return -1;
	}
	r->fd = fd;
	return 0;
}

/* tid's event on every CPU.  -1 (errno) when not one could be opened. */
static int open_thread(struct perf_rings *pr, pid_t tid)
{
	size_t opened = 0;
	int err = 0;

	for (size_t i = 0; i < pr->nrings; i++) {
		int fd = open_permitted(pr, tid, pr->rings[i].cpu);

		if (fd >= 0 && (!keep_fd(pr, fd) || attach_ring(pr, &pr->rings[i], fd) != 0)) {
			err = errno;
			if (pr->nfds > 0 && pr->fds[pr->nfds - 1] == fd)
				pr->nfds--;
			close(fd);
			continue;
		}
		if (fd < 0)
			err = errno;
		else
			opened++;
	}
	errno = err;
	return opened > 0 ? 0 : -1;
}

static bool opened_here(const struct perf_rings *pr, pid_t tid)
{
	for (size_t i = 0; i < pr->nthreads; i++)
		if (pr->threads[i] == tid)
			return true;
	return false;
}

static bool add_tid(pid_t **list, size_t *n, size_t *cap, pid_t tid)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		pid_t *nl = realloc(*list, c * sizeof(*nl));

		if (nl == NULL)
			return false;
		*list = nl;
		*cap = c;
	}
	(*list)[(*n)++] = tid;
	return true;
}

static bool note_thread(struct perf_rings *pr, pid_t tid)
{
	return add_tid(&pr->threads, &pr->nthreads, &pr->cap_threads, tid);
}

/* The pages a ring would need for a sampling period's samples of its CPU
 * at the shortest sample period, within the budget (a power of two). */
static size_t wanted_pages(const struct perf_rings *pr)
{
	uint64_t bytes = (pr->period_ns / SAMPLE_NS_MIN + SLACK_SAMPLES) * SAMPLE_BYTES;
	uint64_t budget = RINGS_BUDGET / pr->nrings / PAGE;
	size_t pages = RING_PAGES_MIN;

	while (pages * PAGE < bytes && pages * 2 <= budget)
		pages *= 2;
	return pages;
}

/* The sample period that rings of pages pages hold a sampling period's
 * samples of (and the slack) at: SAMPLE_NS_MIN when they can. */
static uint64_t sample_ns_for(const struct perf_rings *pr, size_t pages)
{
	uint64_t fit = pages * PAGE / SAMPLE_BYTES;
	uint64_t per = fit > SLACK_SAMPLES ? fit - SLACK_SAMPLES : 1;
	uint64_t ns = pr->period_ns / per;

	return ns > SAMPLE_NS_MIN ? ns : SAMPLE_NS_MIN;
}

static bool all_mapped(const struct perf_rings *pr)
{
	for (size_t i = 0; i < pr->nrings; i++)
		if (pr->rings[i].map == NULL)
			return false;
	return true;
}

/* The process's main thread's events, on rings as large as the locked-
 * memory allowance permits (halved until they fit), with the sample
 * period they can hold.  -1 (errno) when refused. */
static int open_sized(struct perf_rings *pr)
{
	for (pr->pages = wanted_pages(pr); pr->pages >= RING_PAGES_MIN; pr->pages /= 2) {
		int err;

		pr->sample_ns = sample_ns_for(pr, pr->pages);
		pr->map_refused = false;
		if (open_thread(pr, pr->pid) == 0 && all_mapped(pr) && note_thread(pr, pr->pid))
			return 0;
		err = errno;
		perf_rings_close(pr);
		if (!pr->map_refused) {
			errno = err;
			return -1; /* the events refused, not their rings */
		}
	}
	errno = EPERM; /* over the locked-memory allowance even at the least */
	return -1;
}

/* One pass over /proc/PID/task: the events of each thread not opened
 * yet.  The number opened, -1 (errno) when the list cannot be read. */
static int open_listed(struct perf_rings *pr, int *first_err)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pr->pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0 || opened_here(pr, (pid_t)tid))
			continue;
		if (open_thread(pr, (pid_t)tid) != 0) {
			/* Gone meanwhile, or refused (out of descriptors, say): a
			 * refused thread's samples are missed, not never due. */
			if (errno != ESRCH)
				add_tid(&pr->refused, &pr->nrefused, &pr->cap_refused, (pid_t)tid);
			if (*first_err == 0)
				*first_err = errno;
			continue;
		}
		if (!note_thread(pr, (pid_t)tid))
			break;
		n++;
	}
	closedir(d);
	return n;
}

/* A descriptor per thread and CPU: a target with many threads on a
 * machine with many CPUs needs more than the usual soft limit. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int perf_rings_open(struct perf_rings *pr)
{
	int first_err = 0;

	raise_fd_limit();
	if (open_sized(pr) != 0)
		return -1;
	/* A thread that cannot be opened (ended meanwhile) is left out;
	 * the main thread's events are what the rings stand on. */
	for (int pass = 0; pass < LIST_PASSES; pass++)
		if (open_listed(pr, &first_err) <= 0)
			break;
	pr->open = true;
	return 0;
}

bool perf_rings_is_open(const struct perf_rings *pr)
{
	return pr->open;
}

bool perf_rings_refused(const struct perf_rings *pr, pid_t tid)
{
	for (size_t i = 0; i < pr->nrefused; i++)
		if (pr->refused[i] == tid)
			return true;
	return false;
}

void perf_rings_close(struct perf_rings *pr)
{
	for (size_t i = 0; i < pr->nrings; i++) {
		struct ring *r = &pr->rings[i];

		if (r->map != NULL)
			munmap(r->map, (r->pages + 1) * PAGE);
		r->map = NULL;
		r->fd = -1;
	}
	for (size_t i = 0; i < pr->nfds; i++)
		close(pr->fds[i]);
	pr->nfds = 0;
	pr->nthreads = 0;
	pr->nrefused = 0;
	pr->open = false;
}

size_t perf_rings_count(const struct perf_rings *pr)
{
	return pr->nrings;
}

uint64_t perf_rings_sample_ns(const struct perf_rings *pr)
{
	return pr->sample_ns;
}

bool perf_rings_read_count(const struct perf_rings *pr)
{
	return !pr->no_read;
}

bool perf_rings_user_only(const struct perf_rings *pr)
{
	return pr->user_only;
}

bool perf_rings_span(const struct perf_rings *pr, size_t i, struct perf_ring_span *out)
{
	const struct ring *r = &pr->rings[i];
	struct perf_event_mmap_page *pg;

	if (r->map == NULL)
		return false;
	pg = (struct perf_event_mmap_page *)(void *)r->map;
	out->data = r->map + PAGE;
	out->size = (uint64_t)r->pages * PAGE;
	out->head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	out->tail = pg->data_tail;
	if (out->head - out->tail > out->size)
		out->tail = out->head - out->size; /* cannot happen writable; never trust it */
	return true;
}

void perf_rings_consume(struct perf_rings *pr, size_t i, uint64_t head)
{
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)(void *)pr->rings[i].map;

	if (pg != NULL)
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

void perf_ring_copy(const struct perf_ring_span *s, uint64_t off, void *dst, size_t len)
{
	size_t at = (size_t)(off % s->size);
	size_t first = len < s->size - at ? len : (size_t)(s->size - at);

	memcpy(dst, s->data + at, first);
	memcpy((uint8_t *)dst + first, s->data, len - first);
}
