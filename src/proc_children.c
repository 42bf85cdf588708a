#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "proc_children.h"

#include <libproc2/pids.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { I_PID, I_PPID, I_STATE, I_BEGAN, I_UTIME, I_STIME, I_RSS, I_STACK, I_COUNT };

/* A process of the last /proc pass, before the family is picked out. */
struct proc_entry {
	pid_t pid, ppid;
	size_t stack_idx;
};

struct proc_children {
	struct pids_info *all;     /* the stat fields of every process */
	struct pids_info *cmdline; /* one process's command line */
	uint64_t ns_per_tick;
	uint64_t page_size;
	struct proc_entry *entries; /* by ppid, then pid */
	size_t nentries, entries_cap;
	struct proc_child *family;
	size_t nfamily, family_cap;
};

struct proc_children *proc_children_new(void)
{
	enum pids_item items[I_COUNT] = {
		[I_PID] = PIDS_ID_PID, [I_PPID] = PIDS_ID_PPID, [I_STATE] = PIDS_STATE,
		[I_BEGAN] = PIDS_TICS_BEGAN, [I_UTIME] = PIDS_TICS_USER,
		[I_STIME] = PIDS_TICS_SYSTEM, [I_RSS] = PIDS_RSS,
		[I_STACK] = PIDS_ADDR_STACK_START,
	};
	/* PIDS_CMD too: an empty command line (a process on its way out)
	 * reads as "[comm]", which needs it. */
	enum pids_item cmd[2] = { PIDS_CMDLINE, PIDS_CMD };
	struct proc_children *pc = calloc(1, sizeof(*pc));
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);

	if (pc == NULL)
		return NULL;
	pc->ns_per_tick = 1000000000ull / (uint64_t)(hz > 0 ? hz : 100);
	pc->page_size = (uint64_t)(page > 0 ? page : 4096);
	if (procps_pids_new(&pc->all, items, I_COUNT) < 0 ||
	    procps_pids_new(&pc->cmdline, cmd, 2) < 0) {
		proc_children_free(pc);
		return NULL;
	}
	return pc;
}

void proc_children_free(struct proc_children *pc)
{
	if (pc == NULL)
		return;
	if (pc->all != NULL)
		procps_pids_unref(&pc->all);
	if (pc->cmdline != NULL)
		procps_pids_unref(&pc->cmdline);
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

static bool add_member(struct proc_children *pc, struct pids_stack *s, int depth)
{
	if (!grow((void **)&pc->family, &pc->family_cap, pc->nfamily + 1, sizeof(*pc->family)))
		return false;
	pc->family[pc->nfamily++] = (struct proc_child){
		.pid = PIDS_VAL(I_PID, s_int, s, pc->all),
		.ppid = PIDS_VAL(I_PPID, s_int, s, pc->all),
		.depth = depth,
		.state = (char)PIDS_VAL(I_STATE, s_ch, s, pc->all),
		.began = PIDS_VAL(I_BEGAN, ull_int, s, pc->all),
		.exec_id = PIDS_VAL(I_STACK, ul_int, s, pc->all),
		.utime_ns = PIDS_VAL(I_UTIME, ull_int, s, pc->all) * pc->ns_per_tick,
		.stime_ns = PIDS_VAL(I_STIME, ull_int, s, pc->all) * pc->ns_per_tick,
		.rss_bytes = (uint64_t)PIDS_VAL(I_RSS, ul_int, s, pc->all) * pc->page_size,
	};
	return true;
}

/* Depth-first from the root: a process's children follow it directly, so
 * the list reads as a tree.  The depth bound stops a cycle that a PID
 * reused mid-scan could fake. */
static bool walk(struct proc_children *pc, struct pids_fetch *f, size_t e, int depth)
{
	pid_t pid = pc->entries[e].pid;

	if (!add_member(pc, f->stacks[pc->entries[e].stack_idx], depth))
		return false;
	if (depth >= 64)
		return true;
	for (size_t c = first_child(pc, pid); c < pc->nentries && pc->entries[c].ppid == pid; c++)
		if (!walk(pc, f, c, depth + 1))
			return false;
	return true;
}

int proc_children_scan(struct proc_children *pc, pid_t root, const struct proc_child **out)
{
	struct pids_fetch *f = procps_pids_reap(pc->all, PIDS_FETCH_TASKS_ONLY);
	size_t root_idx = SIZE_MAX;
	int total;

	pc->nfamily = pc->nentries = 0;
	*out = pc->family;
	if (f == NULL)
		return -1;
	total = f->counts->total;
	if (!grow((void **)&pc->entries, &pc->entries_cap, (size_t)total + 1, sizeof(*pc->entries)))
		return -1;
	for (int k = 0; k < total; k++) {
		struct pids_stack *s = f->stacks[k];
		char st = (char)PIDS_VAL(I_STATE, s_ch, s, pc->all);

		if (st == 'Z' || st == 'X')
			continue;
		pc->entries[pc->nentries++] = (struct proc_entry){
			.pid = PIDS_VAL(I_PID, s_int, s, pc->all),
			.ppid = PIDS_VAL(I_PPID, s_int, s, pc->all),
			.stack_idx = (size_t)k,
		};
	}
	qsort(pc->entries, pc->nentries, sizeof(*pc->entries), by_parent);
	for (size_t e = 0; e < pc->nentries && root_idx == SIZE_MAX; e++)
		if (pc->entries[e].pid == root)
			root_idx = e;
	if (root_idx == SIZE_MAX)
		return 0;
	if (!walk(pc, f, root_idx, 0))
		return -1;
	*out = pc->family;
	return (int)pc->nfamily;
}

void proc_children_cmdline(struct proc_children *pc, pid_t pid, char *buf, size_t len)
{
	unsigned who = (unsigned)pid;
	struct pids_fetch *f = procps_pids_select(pc->cmdline, &who, 1, PIDS_SELECT_PID);
	const char *s = f != NULL && f->counts->total > 0
		? PIDS_VAL(0, str, f->stacks[0], pc->cmdline) : "";

	snprintf(buf, len, "%s", s != NULL ? s : "");
}
