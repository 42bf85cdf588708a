/* proc_children.c - a process's descendants and their kernel facts, in one
 * pass over /proc (proc_children.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/proc_children.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

/* libproc2 has every field used here, but its readproc keeps two 128 KiB
 * buffers in thread-local storage that are never freed: read from the
 * follower thread, they leak each time it ends (LeakSanitizer fails the
 * run).  One line of /proc/PID/stat and /proc/PID/cmdline are all that is
 * needed, so they are read directly. */

/* A process of the last /proc pass, before the family is picked out. */
struct proc_entry {
	pid_t pid, ppid;
	size_t idx; /* into stats */
};

struct proc_children {
	uint64_t ns_per_tick;
	uint64_t page_size;
	struct proc_child *stats;   /* every process of the pass */
	size_t nstats, stats_cap;
	struct proc_entry *entries; /* by ppid, then pid */
	size_t nentries, entries_cap;
	struct proc_child *family;
	size_t nfamily, family_cap;
};

struct proc_children *proc_children_new(void)
{
	struct proc_children *pc = calloc(1, sizeof(*pc));
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);

	if (pc == NULL)
		return NULL;
	pc->ns_per_tick = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
	pc->page_size = (uint64_t)(page > 0 ? page : 4096);
	return pc;
}

void proc_children_free(struct proc_children *pc)
{
	if (pc == NULL)
		return;
	free(pc->stats);
	free(pc->entries);
	free(pc->family);
	free(pc);
}

static int by_parent(const void *pa, const void *pb)
{
	const struct proc_entry *a = pa, *b = pb;

	if (a->ppid != b->ppid)
		return a->ppid < b->ppid ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Index of the first entry whose parent is ppid (nentries if none). */
static size_t first_child(const struct proc_children *pc, pid_t ppid)
{
	size_t lo = 0, hi = pc->nentries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc->entries[mid].ppid < ppid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *nv;

	if (need <= *cap)
		return true;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(*v, ncap * elem);
	if (nv == NULL)
		return false;
	*v = nv;
	*cap = ncap;
	return true;
}

/* Read `len` bytes at most of a /proc file; its length, -1 if unreadable. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

bool proc_children_parse_stat(const struct proc_children *pc, pid_t pid,
                              const char *line, struct proc_child *out)
{
	const char *p;
	char *end;
	unsigned long long v[26] = { 0 }; /* fields 4.. of proc(5) */

	/* The command name may hold spaces and parentheses, so fields are
	 * counted from its last ')'. */
	if ((p = strrchr(line, ')')) == NULL || p[1] != ' ' || p[2] == '\0')
		return false;
	*out = (struct proc_child){ .pid = pid, .state = p[2] };
	p += 3;
	for (int i = 0; i < 25 && *p != '\0'; i++) {
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	/* v[k] is field k + 4: ppid 4, utime 14, stime 15, starttime 22,
	 * rss 24, startstack 28. */
	out->ppid = (pid_t)v[0];
	out->utime_ns = v[10] * pc->ns_per_tick;
	out->stime_ns = v[11] * pc->ns_per_tick;
	out->began = v[18];
	out->rss_bytes = v[20] * pc->page_size;
	out->exec_id = v[24];
	return true;
}

/* Read and parse /proc/PID/stat (proc(5)). */
static bool read_stat(const struct proc_children *pc, pid_t pid, struct proc_child *out)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return read_small(path, buf, sizeof(buf)) > 0 &&
	       proc_children_parse_stat(pc, pid, buf, out);
}

/* Every process's stat line into pc->stats. */
static bool read_all(struct proc_children *pc)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (d == NULL)
		return false;
	pc->nstats = 0;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (!grow((void **)&pc->stats, &pc->stats_cap, pc->nstats + 1, sizeof(*pc->stats))) {
			closedir(d);
			return false;
		}
		if (read_stat(pc, (pid_t)atoi(e->d_name), &pc->stats[pc->nstats]))
			pc->nstats++;
	}
	closedir(d);
	return true;
}

/* Depth-first from the root: a process's children follow it directly, so
 * the list reads as a tree.  The depth bound stops a cycle that a PID
 * reused mid-scan could fake. */
static bool walk(struct proc_children *pc, size_t e, int depth)
{
	pid_t pid = pc->entries[e].pid;

	if (!grow((void **)&pc->family, &pc->family_cap, pc->nfamily + 1, sizeof(*pc->family)))
		return false;
	pc->family[pc->nfamily] = pc->stats[pc->entries[e].idx];
	pc->family[pc->nfamily++].depth = depth;
	if (depth >= 64)
		return true;
	for (size_t c = first_child(pc, pid); c < pc->nentries && pc->entries[c].ppid == pid; c++)
		if (!walk(pc, c, depth + 1))
			return false;
	return true;
}

int proc_children_scan(struct proc_children *pc, pid_t root, const struct proc_child **out)
{
	size_t root_idx = SIZE_MAX;

	pc->nfamily = pc->nentries = 0;
	*out = pc->family;
	if (!read_all(pc) ||
	    !grow((void **)&pc->entries, &pc->entries_cap, pc->nstats + 1, sizeof(*pc->entries)))
		return -1;
	for (size_t k = 0; k < pc->nstats; k++) {
		char st = pc->stats[k].state;

		if (st == 'Z' || st == 'X')
			continue;
		pc->entries[pc->nentries++] = (struct proc_entry){
			.pid = pc->stats[k].pid, .ppid = pc->stats[k].ppid, .idx = k,
		};
	}
	qsort(pc->entries, pc->nentries, sizeof(*pc->entries), by_parent);
	for (size_t e = 0; e < pc->nentries && root_idx == SIZE_MAX; e++)
		if (pc->entries[e].pid == root)
			root_idx = e;
	if (root_idx == SIZE_MAX)
		return 0;
	if (!walk(pc, root_idx, 0))
		return -1;
	*out = pc->family;
	return (int)pc->nfamily;
}

void proc_children_join_cmdline(char *buf, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	/* arguments end with a NUL: drop it, and a trailing space it became */
	while (n > 0 && (buf[n - 1] == '\0' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

void proc_children_cmdline(struct proc_children *pc, pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	(void)pc;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small(path, buf, len);
	if (n <= 0) {
		/* A process on its way out has no command line: its name then. */
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		n = read_small(path, buf, len);
		if (n > 0 && buf[n - 1] == '\n')
			buf[--n] = '\0';
		return;
	}
	proc_children_join_cmdline(buf, (size_t)n);
}
