/* proc_table.c - (-s) the aggregator's process rows, from REC_PROCESS
 * records: state, command, CPU per window, samples (proc_table.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/proc_table.h"

#include <stdlib.h>
#include <string.h>

struct proc_row {
	pid_t pid, ppid;
	const char *command, *python; /* interned */
	uint8_t state;                /* enum rec_process_state */
	char os_state;
	uint64_t rss_bytes;
	uint64_t samples, samples_win, py_samples, py_samples_win;
	uint64_t exit_serial;         /* order of exit, 0 = alive */
	/* CPU over the window: from the first report in it to the latest */
	bool has_base;
	uint64_t base_ns, base_utime, base_stime;
	uint64_t last_ns, utime, stime;
	double user_pct, sys_pct;
};

struct proc_table {
	struct strtab *strings;
	struct proc_row *rows;
	size_t n, cap;
	uint64_t exits;  /* exits seen so far */
};

struct proc_table *proc_table_new(struct strtab *strings)
{
	struct proc_table *pt = calloc(1, sizeof(*pt));

	if (pt != NULL)
		pt->strings = strings;
	return pt;
}

void proc_table_free(struct proc_table *pt)
{
	if (pt == NULL)
		return;
	free(pt->rows);
	free(pt);
}

static struct proc_row *find(const struct proc_table *pt, pid_t pid)
{
	/* Newest first: a reused PID names its latest process. */
	for (size_t i = pt->n; i-- > 0;)
		if (pt->rows[i].pid == pid)
			return &pt->rows[i];
	return NULL;
}

bool proc_table_describe(const struct proc_table *pt, pid_t pid, pid_t *ppid,
                         const char **command, const char **python)
{
	const struct proc_row *p = find(pt, pid);

	if (p == NULL)
		return false;
	*ppid = p->ppid;
	*command = p->command != NULL ? p->command : "";
	*python = p->python != NULL ? p->python : "";
	return true;
}

static struct proc_row *add(struct proc_table *pt, pid_t pid)
{
	if (pt->n == pt->cap) {
		size_t ncap = pt->cap ? pt->cap * 2 : 16;
		struct proc_row *n = realloc(pt->rows, ncap * sizeof(*n));

		if (n == NULL)
			return NULL;
		pt->rows = n;
		pt->cap = ncap;
	}
	pt->rows[pt->n] = (struct proc_row){ .pid = pid };
	return &pt->rows[pt->n++];
}

/* Keep the PROC_TABLE_KEEP_EXITED latest exits; drop older ones. */
static void age_out(struct proc_table *pt)
{
	size_t kept = 0;
	uint64_t oldest_kept = pt->exits > PROC_TABLE_KEEP_EXITED
		? pt->exits - PROC_TABLE_KEEP_EXITED : 0;

	for (size_t i = 0; i < pt->n; i++)
		if (pt->rows[i].exit_serial == 0 || pt->rows[i].exit_serial > oldest_kept)
			pt->rows[kept++] = pt->rows[i];
	pt->n = kept;
}

static void update_cpu(struct proc_row *p, const struct rec_process *r)
{
	if (!p->has_base || r->utime_ns < p->utime) {
		p->has_base = true;
		p->base_ns = r->time_ns;
		p->base_utime = r->utime_ns;
		p->base_stime = r->stime_ns;
	}
	p->last_ns = r->time_ns;
	p->utime = r->utime_ns;
	p->stime = r->stime_ns;
}

bool proc_table_report(struct proc_table *pt, const void *rec, size_t size,
                       pid_t *exited)
{
	struct rec_process r;
	struct proc_row *p;
	const char *cmd, *py;

	*exited = 0;
	if (size < sizeof(r))
		return false;
	memcpy(&r, rec, sizeof(r));
	if (r.cmd_len > size - sizeof(r) || r.pid <= 0)
		return false;
	if (r.state == PROC_EXITED)
		*exited = r.pid;
	p = find(pt, r.pid);
	if (p != NULL && p->exit_serial != 0 && r.state != PROC_EXITED)
		p = NULL; /* the PID was reused */
	if (p == NULL && r.state == PROC_EXITED)
		return true; /* an exit of a process never listed */
	if (p == NULL && (p = add(pt, r.pid)) == NULL)
		return false;
	cmd = strtab_intern(pt->strings, (const char *)rec + sizeof(r), r.cmd_len, NULL);
	py = strtab_intern(pt->strings, r.version, strnlen(r.version, sizeof(r.version)), NULL);
	if (cmd == NULL || py == NULL)
		return false;
	p->ppid = r.ppid;
	if (r.cmd_len > 0 || p->command == NULL)
		p->command = cmd;
	if (r.version[0] != '\0' || p->python == NULL)
		p->python = py;
	p->state = r.state;
	p->os_state = r.os_state;
	if (r.state == PROC_EXITED) {
		if (p->exit_serial == 0)
			p->exit_serial = ++pt->exits;
		age_out(pt);
		return true;
	}
	p->rss_bytes = r.rss_bytes;
	update_cpu(p, &r);
	return true;
}

void proc_table_sample(struct proc_table *pt, pid_t pid, bool python_stack)
{
	struct proc_row *p = find(pt, pid);

	if (p == NULL)
		return;
	p->samples++;
	p->samples_win++;
	p->py_samples += python_stack;
	p->py_samples_win += python_stack;
}

void proc_table_py_samples(const struct proc_table *pt, pid_t pid,
                           uint64_t *total, uint64_t *win)
{
	const struct proc_row *p = find(pt, pid);

	*total = p != NULL ? p->py_samples : 0;
	*win = p != NULL ? p->py_samples_win : 0;
}

static double pct(uint64_t now, uint64_t base, uint64_t span)
{
	return now > base && span > 0 ? 100.0 * (double)(now - base) / (double)span : 0;
}

/* A window without a new report keeps the previous figures. */
static void close_cpu_window(struct proc_row *p)
{
	if (!p->has_base || p->last_ns <= p->base_ns)
		return;
	p->user_pct = pct(p->utime, p->base_utime, p->last_ns - p->base_ns);
	p->sys_pct = pct(p->stime, p->base_stime, p->last_ns - p->base_ns);
	p->base_ns = p->last_ns;
	p->base_utime = p->utime;
	p->base_stime = p->stime;
}

static bool listed(const struct proc_table *pt, pid_t pid)
{
	for (size_t i = 0; i < pt->n; i++)
		if (pt->rows[i].pid == pid)
			return true;
	return false;
}

static int by_pid(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Depth-first from the rows whose parent is not listed: rows are sorted by
 * PID, so a parent's children come out by PID.  The depth bound keeps a
 * cycle (a reused PID) finite. */
static void emit(const struct proc_table *pt, size_t i, int depth, bool *done,
                 const char *empty, struct snapshot *out)
{
	const struct proc_row *p = &pt->rows[i];

	done[i] = true;
	out->processes[out->nprocesses++] = (struct snap_process){
		.pid = p->pid, .ppid = p->ppid, .depth = depth,
		.command = p->command, .python = p->python,
		.state = (enum snap_process_state)p->state, .os_state = p->os_state,
		.cpu_user_pct = p->user_pct, .cpu_sys_pct = p->sys_pct,
		.rss_bytes = p->rss_bytes, .samples = p->samples, .samples_win = p->samples_win,
		.top_func = empty,
	};
	for (size_t c = 0; c < pt->n && depth < 64; c++)
		if (!done[c] && pt->rows[c].ppid == p->pid)
			emit(pt, c, depth + 1, done, empty, out);
}

void proc_table_snapshot(struct proc_table *pt, const char *empty, struct snapshot *out)
{
	bool *done = pt->n ? calloc(pt->n, sizeof(*done)) : NULL;

	out->processes = pt->n ? malloc(pt->n * sizeof(*out->processes)) : NULL;
	out->nprocesses = 0;
	if (pt->n > 1)
		qsort(pt->rows, pt->n, sizeof(*pt->rows), by_pid);
	for (size_t i = 0; i < pt->n; i++)
		close_cpu_window(&pt->rows[i]);
	if (out->processes != NULL && done != NULL)
		for (size_t i = 0; i < pt->n; i++)
			if (!done[i] && !listed(pt, pt->rows[i].ppid))
				emit(pt, i, 0, done, empty, out);
	/* rows in a parent cycle that no root reaches */
	if (out->processes != NULL && done != NULL)
		for (size_t i = 0; i < pt->n; i++)
			if (!done[i])
				emit(pt, i, 0, done, empty, out);
	if (out->processes == NULL)
		out->nprocesses = 0;
	free(done);
}

void proc_table_close_window(struct proc_table *pt)
{
	for (size_t i = 0; i < pt->n; i++)
		pt->rows[i].samples_win = pt->rows[i].py_samples_win = 0;
}

void proc_table_reset(struct proc_table *pt)
{
	size_t kept = 0;

	for (size_t i = 0; i < pt->n; i++) {
		struct proc_row *p = &pt->rows[i];

		if (p->exit_serial != 0)
			continue;
		p->samples = p->samples_win = p->py_samples = p->py_samples_win = 0;
		pt->rows[kept++] = *p;
	}
	pt->n = kept;
}
