/* proc_gauges.c - see proc_gauges.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proc_gauges.h"

#include <inttypes.h>
#include <libproc2/pids.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	g->ns_per_tick = 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
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

uint64_t proc_gauges_parse_max(FILE *memory_max)
{
	char buf[64];
	unsigned long long v;

	if (fgets(buf, sizeof(buf), memory_max) == NULL || sscanf(buf, "%llu", &v) != 1)
		v = UINT64_MAX;
	return (uint64_t)v;
}

/* memory.max of one cgroup directory; UINT64_MAX when "max" or absent. */
static uint64_t cgroup_max(const char *dir)
{
	char path[PATH_MAX + 32];
	uint64_t v;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", dir);
	f = fopen(path, "re");
	if (f == NULL)
		return UINT64_MAX;
	v = proc_gauges_parse_max(f);
	fclose(f);
	return v;
}

uint64_t proc_gauges_mem_limit(pid_t pid)
{
	char path[64], line[PATH_MAX];
	uint64_t limit = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return limit;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *dir;

		if (strncmp(line, "0::", 3) != 0) /* the cgroup v2 line */
			continue;
		dir = line + 3;
		dir[strcspn(dir, "\n")] = '\0';
		/* The tightest limit on the way up to the root applies. */
		while (dir[0] != '\0') {
			uint64_t m = cgroup_max(dir);
			char *slash = strrchr(dir, '/');

			if (m < limit)
				limit = m;
			if (slash == NULL)
				break;
			*slash = '\0';
		}
	}
	fclose(f);
	return limit;
}
