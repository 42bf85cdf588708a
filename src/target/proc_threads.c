/* proc_threads.c - per-thread kernel facts from /proc through kept
 * descriptors, container thread ids, whether a process ended
 * (proc_threads.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/proc_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

/* Small linear table: a Python process rarely has more than a few hundred
 * threads, and the table is scanned once per thread per tick. */
struct thread_fd {
	pid_t tid;
	int fd;
	int sys_fd;              /* its syscall file, -1 until first asked */
	int sched_fd;            /* its schedstat file, -1 until first running */
	int wchan_fd;            /* its wchan file, -1 until first asleep, -2 none */
	bool touched;
	bool read_once;          /* minflt/majflt below are from a real read */
	bool dead;               /* its last read failed: the thread exited */
	uint64_t minflt, majflt; /* at the previous read, for the deltas */
	uint64_t cpu_ticks;      /* utime + stime at the last schedstat read */
	uint64_t sched_read_ns;  /* when schedstat was last read, 0: never */
	struct proc_stat_line last; /* its last whole stat line */
	uint64_t stat_read_ns;   /* when, 0: never */
};

/* A thread ID in the target's PID namespace and in ours. */
struct tid_pair {
	pid_t inner, host;
};

/* How often at most the TID map is rebuilt while a TID stays unknown (a
 * thread state that names no thread of the process must not cost a
 * /proc/PID/task scan per tick). */
#define MAP_RESCAN_NS 20000000ull

/* How long a runnable thread whose CPU time in stat has not moved (it
 * waits for a CPU, or ran under one clock tick of it) goes without a
 * schedstat read. */
#define SCHED_EVERY_NS 10000000ull

/* How long a thread found asleep by its wchan goes without a stat read:
 * the threads panel's CPU times and states come every 100 ms. */
#define STAT_EVERY_NS 100000000ull

struct proc_threads {
	pid_t pid;
	uint64_t ns_per_tick; /* NSEC_PER_SEC / sysconf(_SC_CLK_TCK) */
	uint64_t page_size;
	struct thread_fd *v; /* owned */
	size_t n, cap;
	enum { NS_UNKNOWN, NS_SAME, NS_OTHER } ns; /* the target's PID namespace */
	struct tid_pair *map; /* owned; NS_OTHER only */
	size_t nmap, map_cap;
	uint64_t map_built_ns;
	bool read_failed; /* some thread's stat was unreadable since the last sweep */
	bool sched_every_read; /* proc_threads_sched_every_read */
	bool light_sleepers;   /* proc_threads_light_sleepers */
	int fd_room;           /* descriptors a wchan file may not reach */
};

struct proc_threads *proc_threads_new(pid_t pid)
{
	struct proc_threads *pt = calloc(1, sizeof(*pt));

	long hz = sysconf(_SC_CLK_TCK);

	if (pt != NULL) {
		pt->pid = pid;
		pt->ns_per_tick = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
		pt->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
		/* A wchan file per sleeping thread must not take the
		 * descriptors the stat files of later threads need. */
		struct rlimit rl;
		pt->fd_room = getrlimit(RLIMIT_NOFILE, &rl) != 0 ? 512
		              : rl.rlim_cur >= INT_MAX ? INT_MAX / 2 : (int)(rl.rlim_cur / 2);
	}
	return pt;
}

static void close_thread(struct thread_fd *t)
{
	close(t->fd);
	if (t->sys_fd >= 0)
		close(t->sys_fd);
	if (t->sched_fd >= 0)
		close(t->sched_fd);
	if (t->wchan_fd >= 0)
		close(t->wchan_fd);
}

void proc_threads_free(struct proc_threads *pt)
{
	if (pt == NULL)
		return;
	for (size_t i = 0; i < pt->n; i++)
		close_thread(&pt->v[i]);
	free(pt->v);
	free(pt->map);
	free(pt);
}

static struct thread_fd *lookup(struct proc_threads *pt, pid_t tid)
{
	char path[64];
	int fd;

	for (size_t i = 0; i < pt->n; i++)
		if (pt->v[i].tid == tid)
			return &pt->v[i];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pt->pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (pt->n == pt->cap) {
		size_t ncap = pt->cap ? pt->cap * 2 : 16;
		struct thread_fd *nv = realloc(pt->v, ncap * sizeof(*nv));

		if (nv == NULL) {
			close(fd);
			return NULL;
		}
		pt->v = nv;
		pt->cap = ncap;
	}
	pt->v[pt->n] = (struct thread_fd){ .tid = tid, .fd = fd, .sys_fd = -1,
	                                     .sched_fd = -1, .wchan_fd = -1 };
	return &pt->v[pt->n++];
}

/* The fields after "state", numbered as in proc(5) from 4 (ppid) on. */
enum { F_MINFLT = 10, F_MAJFLT = 12, F_UTIME = 14, F_STIME = 15, F_RSS = 24,
       F_STARTSTACK = 28, F_LAST = F_STARTSTACK };

/* One decimal field at p (a leading '-' for tty_nr, tpgid, priority,
 * nice: read as 0); *end past it, or p when there is no digit.  Not
 * strtoull: this runs for 25 fields of every thread many times a second,
 * and the kernel writes plain digits.  A value past 2^64 wraps: it is
 * hostile or broken either way, never trusted as a pointer. */
static uint64_t field(const char *p, const char **end)
{
	bool negative = *p == '-';
	const char *q = p + negative;
	uint64_t v = 0;

	while (*q >= '0' && *q <= '9')
		v = v * 10 + (uint64_t)(*q++ - '0');
	if (q == p + negative) {
		*end = p;
		return 0;
	}
	*end = q;
	return negative ? 0 : v;
}

/* Parse the numeric fields 4..F_LAST that follow the state letter. */
static bool parse_fields(const char *p, uint64_t f[F_LAST + 1])
{
	for (int i = 4; i <= F_LAST; i++) {
		const char *end;

		while (*p == ' ')
			p++;
		f[i] = field(p, &end);
		if (end == p)
			return false;
		p = end;
	}
	return true;
}

bool proc_threads_parse_stat(const char *line, struct proc_stat_line *out)
{
	const char *paren;
	uint64_t f[F_LAST + 1];

	*out = (struct proc_stat_line){ 0 };
	/* comm may contain spaces and parentheses: the fields follow the
	 * last ')'. */
	paren = strrchr(line, ')');
	if (paren == NULL || paren[1] != ' ' || paren[2] == '\0')
		return false;
	out->state = paren[2];
	if (!parse_fields(paren + 3, f))
		return false;
	out->minflt = f[F_MINFLT];
	out->majflt = f[F_MAJFLT];
	out->utime_ticks = f[F_UTIME];
	out->stime_ticks = f[F_STIME];
	out->rss_pages = f[F_RSS];
	out->start_stack = f[F_STARTSTACK];
	return true;
}

bool proc_threads_parse_schedstat(const char *line, uint64_t *run_ns, uint64_t *delay_ns)
{
	char *end;

	if (*line < '0' || *line > '9')
		return false;
	*run_ns = strtoull(line, &end, 10);
	if (*end != ' ' || end[1] < '0' || end[1] > '9')
		return false;
	*delay_ns = strtoull(end + 1, &end, 10);
	return *end == ' ' || *end == '\n' || *end == '\0';
}

/* The scheduler's run time and run-queue delay of a runnable thread: a
 * second pread, only for threads in state R (the others neither run nor
 * wait for a CPU), from a descriptor kept like the stat one. */
static void read_schedstat(struct proc_threads *pt, struct thread_fd *t,
                           struct proc_thread_stat *out)
{
	char path[64], buf[96];
	ssize_t n;
	uint64_t run, delay;

	if (t->sched_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pt->pid,
		         (int)t->tid);
		t->sched_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->sched_fd < 0)
			return;
	}
	n = pread(t->sched_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (!proc_threads_parse_schedstat(buf, &run, &delay))
		return;
	out->sched_known = true;
	out->run_ns = run;
	out->delay_ns = delay;
}

/* Whether a runnable thread's schedstat is worth its pread this time
 * (proc_threads.h): its CPU time in stat moved, or it has not been read
 * for SCHED_EVERY_NS.  Its figures are cumulative, so a read skipped
 * loses nothing: the next one carries the growth. */
static bool sched_due(const struct proc_threads *pt, struct thread_fd *t,
                      const struct proc_stat_line *line)
{
	uint64_t cpu = line->utime_ticks + line->stime_ticks, now = clock_now_ns();

	if (!pt->sched_every_read && t->sched_read_ns != 0 && cpu == t->cpu_ticks &&
	    now - t->sched_read_ns < SCHED_EVERY_NS)
		return false;
	t->cpu_ticks = cpu;
	t->sched_read_ns = now;
	return true;
}

/* One stat read, and schedstat when due. */
static void read_stat(struct proc_threads *pt, struct thread_fd *t, struct proc_thread_stat *out)
{
	char buf[512];
	ssize_t n;
	struct proc_stat_line line;

	n = pread(t->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		t->dead = pt->read_failed = true;
		return;
	}
	buf[n] = '\0';
	bool whole = proc_threads_parse_stat(buf, &line);
	out->state = line.state;
	if (!whole)
		return;
	out->utime_ns = line.utime_ticks * pt->ns_per_tick;
	out->stime_ns = line.stime_ticks * pt->ns_per_tick;
	out->rss_bytes = line.rss_pages * pt->page_size;
	out->start_stack = line.start_stack;
	/* The first read of a thread has no "before": its faults so far are
	 * not charged to whatever it runs now. */
	if (t->read_once) {
		out->minflt = line.minflt - t->minflt;
		out->majflt = line.majflt - t->majflt;
		out->faults_known = true;
	}
	t->minflt = line.minflt;
	t->majflt = line.majflt;
	t->read_once = true;
	t->last = line;
	t->stat_read_ns = clock_now_ns();
	if (line.state == 'R' && sched_due(pt, t, &line))
		read_schedstat(pt, t, out);
}

/* Whether thread t, asleep at its last stat read, is asleep still: its
 * wchan names where it waits.  The kernel prints "0" for a runnable
 * thread, and also when it cannot name the wait: then stat decides. */
static bool still_asleep(const struct proc_threads *pt, struct thread_fd *t)
{
	char path[64], buf[64];
	ssize_t n;

	if (t->wchan_fd == -1) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pt->pid, (int)t->tid);
		t->wchan_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->wchan_fd >= pt->fd_room) {
			close(t->wchan_fd);
			t->wchan_fd = -1;
		}
		if (t->wchan_fd < 0)
			t->wchan_fd = -2;
	}
	if (t->wchan_fd < 0)
		return false;
	n = pread(t->wchan_fd, buf, sizeof(buf), 0);
	return n > 0 && buf[0] != '0';
}

/* The figures of t's last stat read, for a thread that has slept since. */
static void fill_last(const struct proc_threads *pt, const struct thread_fd *t,
                      struct proc_thread_stat *out)
{
	out->state = t->last.state;
	out->utime_ns = t->last.utime_ticks * pt->ns_per_tick;
	out->stime_ns = t->last.stime_ticks * pt->ns_per_tick;
	out->rss_bytes = t->last.rss_pages * pt->page_size;
	out->start_stack = t->last.start_stack;
}

/* A thread asleep at its last stat read (under STAT_EVERY_NS ago) and
 * still asleep by its wchan needs no stat read: wchan costs the kernel
 * half as much (it formats one name, not 52 fields). */
static bool read_light(struct proc_threads *pt, struct thread_fd *t,
                       struct proc_thread_stat *out)
{
	if (!pt->light_sleepers || t->stat_read_ns == 0 || t->last.state == 'R' ||
	    clock_now_ns() - t->stat_read_ns >= STAT_EVERY_NS || !still_asleep(pt, t))
		return false;
	fill_last(pt, t, out);
	return true;
}

void proc_threads_light_sleepers(struct proc_threads *pt, bool on)
{
	pt->light_sleepers = on;
}

/* Thread tid's entry, marked as read this sweep, with *out cleared; NULL
 * when it cannot be read (noted for the sweep). */
static struct thread_fd *start_read(struct proc_threads *pt, pid_t tid,
                                    struct proc_thread_stat *out)
{
	struct thread_fd *t = lookup(pt, tid);

	*out = (struct proc_thread_stat){ 0 };
	if (t == NULL)
		pt->read_failed = true;
	else
		t->touched = true;
	return t;
}

void proc_threads_read(struct proc_threads *pt, pid_t tid, struct proc_thread_stat *out)
{
	struct thread_fd *t = start_read(pt, tid, out);

	if (t != NULL && !read_light(pt, t, out))
		read_stat(pt, t, out);
}

void proc_threads_read_stat(struct proc_threads *pt, pid_t tid, struct proc_thread_stat *out)
{
	struct thread_fd *t = start_read(pt, tid, out);

	if (t != NULL)
		read_stat(pt, t, out);
}

void proc_threads_sched_every_read(struct proc_threads *pt, bool on)
{
	pt->sched_every_read = on;
}

/* ---- thread IDs across PID namespaces ------------------------------------
 * CPython stores each thread's gettid() as seen inside the target's PID
 * namespace; /proc and ptrace here want the ID in pytop's.  The kernel
 * lists both in /proc/PID/task/TID/status as "NSpid: <ours> ... <its own>". */

/* The first and last IDs of the NSpid line of a status file; false when it
 * has none (kernels before 4.1, a process gone). */
static bool read_nspid(const char *path, pid_t *first, pid_t *last)
{
	char buf[4096], *line;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int got = 0;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	line = strstr(buf, "\nNSpid:");
	if (line == NULL)
		return false;
	for (char *p = line + 7, *end;; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || v > INT32_MAX)
			break;
		if (got++ == 0)
			*first = (pid_t)v;
		*last = (pid_t)v;
	}
	return got > 0;
}

static void detect_ns(struct proc_threads *pt)
{
	char path[64];
	pid_t ours = 0, its = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pt->pid);
	pt->ns = read_nspid(path, &ours, &its) && ours != its ? NS_OTHER : NS_SAME;
}

/* Rebuild the map from every thread's status file: at thread discovery,
 * not per tick. */
static void build_map(struct proc_threads *pt)
{
	char path[96];
	DIR *d;
	struct dirent *e;

	pt->nmap = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pt->pid);
	d = opendir(path);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);
		struct tid_pair tp;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/status", (int)pt->pid, tid);
		if (!read_nspid(path, &tp.host, &tp.inner) || tp.host != (pid_t)tid)
			continue;
		if (pt->nmap == pt->map_cap) {
			size_t ncap = pt->map_cap ? pt->map_cap * 2 : 16;
			struct tid_pair *nv = realloc(pt->map, ncap * sizeof(*nv));

			if (nv == NULL)
				break;
			pt->map = nv;
			pt->map_cap = ncap;
		}
		pt->map[pt->nmap++] = tp;
	}
	closedir(d);
}

/* Monotonic nanoseconds; not clock.c's, so that this file still depends
 * on no other pytop file (a program linking the reader and it alone). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static pid_t map_find(const struct proc_threads *pt, pid_t inner)
{
	for (size_t i = 0; i < pt->nmap; i++)
		if (pt->map[i].inner == inner)
			return pt->map[i].host;
	return 0;
}

pid_t proc_threads_host_tid(struct proc_threads *pt, pid_t tid)
{
	pid_t host;
	uint64_t now;

	if (pt->ns == NS_UNKNOWN)
		detect_ns(pt);
	if (pt->ns == NS_SAME || tid <= 0)
		return tid;
	if ((host = map_find(pt, tid)) != 0)
		return host;
	now = now_ns();
	if (pt->map_built_ns != 0 && now - pt->map_built_ns < MAP_RESCAN_NS)
		return 0;
	build_map(pt);
	pt->map_built_ns = now;
	return map_find(pt, tid);
}

/* A mapped thread whose /proc stat could not be opened or read has exited:
 * forget it, so that a new thread given the same ID inside the namespace
 * is looked up again.  Only after a failed read: the search is not free. */
static void forget_dead_tids(struct proc_threads *pt)
{
	size_t kept = 0;

	if (!pt->read_failed)
		return;
	pt->read_failed = false;
	for (size_t i = 0; i < pt->nmap; i++) {
		bool live = false;

		for (size_t k = 0; k < pt->n && !live; k++)
			live = pt->v[k].tid == pt->map[i].host && !pt->v[k].dead;
		if (live)
			pt->map[kept++] = pt->map[i];
	}
	pt->nmap = kept;
}

void proc_threads_sweep(struct proc_threads *pt)
{
	size_t kept = 0;

	for (size_t i = 0; i < pt->n; i++) {
		if (!pt->v[i].touched) {
			close_thread(&pt->v[i]);
			continue;
		}
		pt->v[i].touched = false;
		pt->v[kept++] = pt->v[i];
	}
	pt->n = kept;
	forget_dead_tids(pt);
}

bool proc_threads_parse_syscall(const char *line, uint64_t *uaddr)
{
	char *end;

	if (strtol(line, &end, 10) != SYS_futex || end == line || *end != ' ')
		return false;
	const char *arg = end + 1;
	*uaddr = strtoull(arg, &end, 16);
	return end != arg;
}

/* Thread tid's /proc syscall line into buf (NUL-terminated); false
 * when unreadable.  "NR arg1 ... arg6 sp pc", or "running", or "-1 sp pc". */
static bool read_syscall(struct proc_threads *pt, pid_t tid, char *buf, size_t size)
{
	struct thread_fd *t = lookup(pt, tid);
	ssize_t n;

	if (t == NULL)
		return false;
	if (t->sys_fd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall",
		         (int)pt->pid, (int)tid);
		t->sys_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (t->sys_fd < 0)
			return false;
	}
	n = pread(t->sys_fd, buf, size - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

bool proc_threads_futex(struct proc_threads *pt, pid_t tid, uint64_t *uaddr)
{
	char buf[256];

	return read_syscall(pt, tid, buf, sizeof(buf)) && proc_threads_parse_syscall(buf, uaddr);
}

bool proc_threads_parse_blocked(const char *line, uint64_t *sp, uint64_t *pc)
{
	uint64_t v[9];
	int n = 0;
	char *end;

	strtol(line, &end, 10); /* the system call's number, or -1 */
	if (end == line)
		return false; /* "running" */
	while (*end == ' ' && n < 9) {
		const char *arg = end + 1;

		v[n] = strtoull(arg, &end, 16);
		if (end == arg)
			return false;
		n++;
	}
	if ((n != 2 && n != 8) || (*end != '\n' && *end != '\0'))
		return false;
	*sp = v[n - 2];
	*pc = v[n - 1];
	return true;
}

bool proc_threads_blocked_at(struct proc_threads *pt, pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char buf[256];

	return read_syscall(pt, tid, buf, sizeof(buf)) && proc_threads_parse_blocked(buf, sp, pc);
}

void proc_threads_name(pid_t pid, pid_t tid, char name[16])
{
	char path[64];
	int fd;
	ssize_t n;

	name[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, 15);
	close(fd);
	if (n <= 0)
		n = 0;
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
}

/* The state letter of a /proc stat file, 0 if unreadable. */
static char stat_state(const char *path)
{
	char buf[512], *paren;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

static bool live_state(char st)
{
	return st != 0 && st != 'Z' && st != 'X';
}

static bool any_live_thread(pid_t pid)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	bool live = false;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return false;
	while (!live && (e = readdir(d)) != NULL) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/stat", (int)pid, tid);
		live = live_state(stat_state(path));
	}
	closedir(d);
	return live;
}

bool proc_threads_ended(pid_t pid)
{
	char path[64];
	char st;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	st = stat_state(path);
	if (st == 'Z')
		return !any_live_thread(pid);
	return !live_state(st);
}
