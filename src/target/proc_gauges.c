/* proc_gauges.c - whole-process memory, fault and CPU gauges (libproc2)
 * and the target's cgroup limits (proc_gauges.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/proc_gauges.h"

#include <inttypes.h>
#include <libproc2/pids.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

enum { G_RSS, G_FLT_MIN, G_FLT_MAJ, G_UTIME, G_STIME, G_NLWP };

static enum pids_item items[] = {
	PIDS_VM_RSS, PIDS_FLT_MIN, PIDS_FLT_MAJ, PIDS_TICS_USER, PIDS_TICS_SYSTEM, PIDS_NLWP,
};

struct proc_gauges {
	pid_t pid;
	struct pids_info *info; /* owned (libproc2 reference) */
	uint64_t ns_per_tick;
};

struct proc_gauges *proc_gauges_new(pid_t pid)
{
	struct proc_gauges *g = calloc(1, sizeof(*g));
	long hz = sysconf(_SC_CLK_TCK);

	if (g == NULL)
		return NULL;
	g->pid = pid;
	g->ns_per_tick = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
	if (procps_pids_new(&g->info, items, (int)(sizeof(items) / sizeof(items[0]))) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

void proc_gauges_free(struct proc_gauges *g)
{
	if (g == NULL)
		return;
	procps_pids_unref(&g->info);
	free(g);
}

uint64_t proc_gauges_parse_hwm(FILE *status)
{
	char line[256];
	unsigned long long kib = 0;

	while (fgets(line, sizeof(line), status) != NULL)
		if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
			break;
	return (uint64_t)kib * 1024;
}

/* VmHWM from /proc/PID/status, in bytes; 0 when unreadable. */
static uint64_t read_hwm(pid_t pid)
{
	char path[64];
	uint64_t hwm;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	hwm = proc_gauges_parse_hwm(f);
	fclose(f);
	return hwm;
}

bool proc_gauges_read(struct proc_gauges *g, struct proc_gauge_read *out)
{
	unsigned pid = (unsigned)g->pid;
	struct pids_fetch *f = procps_pids_select(g->info, &pid, 1, PIDS_SELECT_PID);
	struct pids_stack *st;

	if (f == NULL || f->counts->total < 1)
		return false;
	st = f->stacks[0];
	*out = (struct proc_gauge_read){
		.rss = (uint64_t)PIDS_VAL(G_RSS, ul_int, st, g->info) * 1024,
		.minflt = PIDS_VAL(G_FLT_MIN, ul_int, st, g->info),
		.majflt = PIDS_VAL(G_FLT_MAJ, ul_int, st, g->info),
		.utime_ns = PIDS_VAL(G_UTIME, ull_int, st, g->info) * g->ns_per_tick,
		.stime_ns = PIDS_VAL(G_STIME, ull_int, st, g->info) * g->ns_per_tick,
		.threads = PIDS_VAL(G_NLWP, s_int, st, g->info),
	};
	out->rss_peak = read_hwm(g->pid);
	if (out->rss_peak < out->rss)
		out->rss_peak = out->rss;
	return true;
}

static uint64_t timeval_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

void proc_gauges_final(const struct rusage *ru, const struct proc_gauge_read *last,
                       struct proc_gauge_read *out)
{
	uint64_t peak = (uint64_t)(ru->ru_maxrss > 0 ? ru->ru_maxrss : 0) * 1024; /* KiB */

	*out = (struct proc_gauge_read){
		.rss = last->rss,
		.rss_peak = peak > last->rss_peak ? peak : last->rss_peak,
		.minflt = (uint64_t)ru->ru_minflt,
		.majflt = (uint64_t)ru->ru_majflt,
		.utime_ns = timeval_ns(ru->ru_utime),
		.stime_ns = timeval_ns(ru->ru_stime),
		.threads = 0,
	};
}

/* ---- the target's cgroup limits ---------------------------------------
 * Read through the target's own /proc/PID/cgroup, whose paths are relative
 * to pytop's cgroup namespace, as the hierarchies mounted under
 * /sys/fs/cgroup are: the limits of a container seen from the host.  Both
 * cgroup v2 (at /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid
 * system) and the v1 memory and cpu controllers are looked at; the
 * tightest limit of the cgroup and its ancestors applies. */

#define NO_LIMIT HUGE_VAL

/* The first line of dir/file, "" when unreadable. */
static void read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	fclose(f);
}

/* Bytes: v2 memory.max ("max" = none) or v1 memory.limit_in_bytes (a huge
 * number when none: larger than RAM, so the RAM bound applies). */
uint64_t proc_gauges_parse_max(const char *text)
{
	unsigned long long v;

	return sscanf(text, "%llu", &v) == 1 ? (uint64_t)v : UINT64_MAX;
}

static double mem_limit_file(const char *dir, const char *file)
{
	char buf[64];
	uint64_t v;

	read_line(dir, file, buf, sizeof(buf));
	v = proc_gauges_parse_max(buf);
	return v == UINT64_MAX ? NO_LIMIT : (double)v;
}

static double mem_v2(const char *dir)
{
	return mem_limit_file(dir, "memory.max");
}

static double mem_v1(const char *dir)
{
	return mem_limit_file(dir, "memory.limit_in_bytes");
}

/* CPUs: quota / period, from v2 cpu.max ("max 100000" = none) or v1's CFS
 * quota (-1 = none). */
static double cpu_share(long long quota, long long period)
{
	return quota > 0 && period > 0 ? (double)quota / (double)period : NO_LIMIT;
}

static double cpu_v2(const char *dir)
{
	char buf[64];
	long long quota, period;

	read_line(dir, "cpu.max", buf, sizeof(buf));
	return sscanf(buf, "%lld %lld", &quota, &period) == 2 ? cpu_share(quota, period)
	                                                      : NO_LIMIT;
}

static double cpu_v1(const char *dir)
{
	char buf[64];
	long long quota = -1, period = 0;

	read_line(dir, "cpu.cfs_quota_us", buf, sizeof(buf));
	sscanf(buf, "%lld", &quota);
	read_line(dir, "cpu.cfs_period_us", buf, sizeof(buf));
	sscanf(buf, "%lld", &period);
	return cpu_share(quota, period);
}

typedef double (*limit_fn)(const char *dir);

/* The tightest limit of cgroup `path` and its ancestors under `root`. */
static double tightest(const char *root, const char *path, limit_fn read)
{
	char dir[PATH_MAX];
	double best = NO_LIMIT;
	size_t len = (size_t)snprintf(dir, sizeof(dir), "%s%s", root, path);
	size_t root_len = strlen(root);

	if (len >= sizeof(dir) || strstr(path, "/..") != NULL)
		return NO_LIMIT; /* a path from /proc that leaves its root */
	for (;;) {
		double v = read(dir);
		char *slash = strrchr(dir, '/');

		if (v < best)
			best = v;
		if (slash == NULL || (size_t)(slash - dir) < root_len)
			break;
		*slash = '\0';
	}
	return best;
}

/* Whether the comma-separated controller list names `want`. */
static bool has_controller(const char *list, size_t len, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = list; p < list + len;) {
		const char *comma = memchr(p, ',', (size_t)(list + len - p));
		size_t l = comma != NULL ? (size_t)(comma - p) : (size_t)(list + len - p);

		if (l == n && memcmp(p, want, n) == 0)
			return true;
		p += l + 1;
	}
	return false;
}

/* The tightest of the v2 and v1 limits over the target's cgroups. */
static double cgroup_limit(pid_t pid, const char *v1_controller, limit_fn v1, limit_fn v2)
{
	char path[64], line[PATH_MAX], v1_root[64];
	double best = NO_LIMIT, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	snprintf(v1_root, sizeof(v1_root), "/sys/fs/cgroup/%s", v1_controller);
	f = fopen(path, "re");
	if (f == NULL)
		return NO_LIMIT;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* "hierarchy-ID:controller-list:cgroup-path" */
		char *c1 = strchr(line, ':'), *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;

		if (c2 == NULL || c2[1] != '/')
			continue;
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0) {
			v = fmin(tightest("/sys/fs/cgroup", c2 + 1, v2),
			         tightest("/sys/fs/cgroup/unified", c2 + 1, v2));
		} else if (has_controller(c1 + 1, (size_t)(c2 - c1 - 1), v1_controller)) {
			v = tightest(v1_root, c2 + 1, v1);
		} else {
			continue;
		}
		if (v < best)
			best = v;
	}
	fclose(f);
	return best;
}

uint64_t proc_gauges_mem_limit(pid_t pid)
{
	double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);

	return (uint64_t)fmin(ram, cgroup_limit(pid, "memory", mem_v1, mem_v2));
}

double proc_gauges_cpu_limit(pid_t pid)
{
	double cpus = cgroup_limit(pid, "cpu", cpu_v1, cpu_v2);

	return isinf(cpus) ? 0 : cpus;
}

uint64_t proc_gauges_parse_throttled(const char *text)
{
	static const struct { const char *key; uint64_t ns; } keys[] = {
		{ "throttled_usec ", 1000 }, /* v2 */
		{ "throttled_time ", 1 },    /* v1, in ns */
	};

	for (const char *line = text; line != NULL && *line != '\0';) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t n = strlen(keys[i].key);
			unsigned long long v;

			if (strncmp(line, keys[i].key, n) == 0 &&
			    sscanf(line + n, "%llu", &v) == 1 && v <= UINT64_MAX / keys[i].ns)
				return (uint64_t)v * keys[i].ns;
		}
		line = strchr(line, '\n');
		line = line != NULL ? line + 1 : NULL;
	}
	return 0;
}

/* The throttled time of one cgroup, negated: the walker keeps the
 * smallest value of the cgroup and its ancestors (a limit), and here the
 * most throttled is wanted.  A cgroup without cpu.stat counts for none. */
static double throttled_negated(const char *dir)
{
	char path[PATH_MAX + 64], buf[1024];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	f = fopen(path, "re");
	if (f == NULL)
		return NO_LIMIT;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return -(double)proc_gauges_parse_throttled(buf);
}

uint64_t proc_gauges_cpu_throttled(pid_t pid)
{
	double v = cgroup_limit(pid, "cpu", throttled_negated, throttled_negated);

	return isinf(v) || v >= 0 ? 0 : (uint64_t)-v;
}

uint64_t proc_gauges_parse_start(const char *stat)
{
	/* comm may hold spaces and parentheses: count from the last ')',
	 * after which field 3 (the state) comes. */
	const char *p = strrchr(stat, ')');
	int field = 2;

	if (p == NULL)
		return 0;
	for (p++; *p != '\0' && field < 22; p++)
		if (*p == ' ' && p[1] != ' ' && p[1] != '\0')
			field++;
	if (field != 22)
		return 0;
	return strtoull(p, NULL, 10);
}

double proc_gauges_started(pid_t pid)
{
	char path[64], line[1024];
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t ticks;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	ticks = proc_gauges_parse_start(line);
	if (ticks == 0 || hz <= 0 || clock_gettime(CLOCK_REALTIME, &real) != 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
		return 0;
	return (double)(real.tv_sec - boot.tv_sec) + (double)(real.tv_nsec - boot.tv_nsec) / 1e9 +
	       (double)ticks / (double)hz;
}
