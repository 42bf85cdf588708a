/* process_table.c - rows and columns of the processes table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "process_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static const struct snap_process *proc_of(const void *row)
{
	return ((const struct process_row *)row)->p;
}

const char *process_state_label(const struct snap_process *p)
{
	switch (p->state) {
	case PROCESS_EXITED:
		return "exited";
	case PROCESS_LOOKING:
		return "looking";
	case PROCESS_NOT_PYTHON:
		return p->python != NULL && p->python[0] != '\0'
		       ? p->python : "not Python";
	case PROCESS_PYTHON:
	case PROCESS_UNREADABLE:
		break;
	}
	return p->python != NULL && p->python[0] != '\0' ? p->python : "?";
}

static void fmt_pid(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%d", (int)proc_of(row)->pid);
}

static void fmt_python(const void *row, const void *ctx, int width,
                       bool utf8, char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%s", process_state_label(proc_of(row)));
}

static void fmt_cpu(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	const struct snap_process *p = proc_of(row);

	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%.1f", p->cpu_user_pct + p->cpu_sys_pct);
}

static void fmt_usr_sys(const void *row, const void *ctx, int width,
                        bool utf8, char *buf, size_t size)
{
	const struct snap_process *p = proc_of(row);

	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%.0f/%.0f", p->cpu_user_pct, p->cpu_sys_pct);
}

static void fmt_rss(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	double mib = (double)proc_of(row)->rss_bytes / (1024.0 * 1024.0);

	(void)ctx, (void)width, (void)utf8;
	if (proc_of(row)->state == PROCESS_EXITED)
		snprintf(buf, size, "-");
	else if (mib >= 10240)
		snprintf(buf, size, "%.0fG", mib / 1024);
	else
		snprintf(buf, size, "%.0fM", mib);
}

static void fmt_samples(const void *row, const void *ctx, int width,
                        bool utf8, char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	text_thousands(buf, size, proc_of(row)->samples);
}

static void fmt_top(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	const char *top = or_empty(proc_of(row)->top_func);

	(void)ctx;
	if (top[0] == '\0')
		snprintf(buf, size, "%s", utf8 ? "\u2014" : "-");
	else
		text_fit_name(buf, size, top, width, utf8);
}

void process_tree_prefix(const struct process_row *r, bool utf8, char *buf,
                         size_t size)
{
	size_t used = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	/* Levels above the row's own: a line where that level's branch goes
	 * on below this row, blank where it ended. */
	for (int d = 1; d < r->depth; d++) {
		const char *s = (r->more >> d & 1UL) == 0 ? "   "
		                : utf8 ? "\u2502  " : "|  ";
		used += (size_t)snprintf(buf + used, size - used, "%s", s);
		if (used >= size)
			return;
	}
	if (r->depth > 0)
		snprintf(buf + used, size - used, "%s", (r->more >> r->depth & 1UL)
		         ? (utf8 ? "\u251c\u2500 " : "|- ")
		         : (utf8 ? "\u2514\u2500 " : "`- "));
}

static void fmt_command(const void *row, const void *ctx, int width,
                        bool utf8, char *buf, size_t size)
{
	char prefix[PROCESS_TREE_MAX_DEPTH * 8];

	(void)ctx, (void)width;
	process_tree_prefix(row, utf8, prefix, sizeof prefix);
	snprintf(buf, size, "%s%s", prefix, or_empty(proc_of(row)->command));
}

/* The command keeps this many columns at 80 before the figures give way
 * (what the branches of a grandchild and a program name need). */
#define PROCESS_COMMAND_MIN_COLS 20

static const struct table_column process_columns[PROCESS_NCOLS] = {
	[PROCESS_COL_PID] = {
		.title = "PID", .width = 7, .right_align = true, .format = fmt_pid,
	},
	[PROCESS_COL_PYTHON] = {
		.title = "Python", .width = 11, .gap = 1, .format = fmt_python,
	},
	[PROCESS_COL_CPU] = {
		.title = "CPU%", .width = 5, .gap = 1, .right_align = true,
		.format = fmt_cpu,
	},
	[PROCESS_COL_USR_SYS] = {
		.title = "usr/sys", .width = 7, .gap = 1, .right_align = true,
		.format = fmt_usr_sys, .drop = 3,
	},
	[PROCESS_COL_RSS] = {
		.title = "RSS", .width = 6, .gap = 1, .right_align = true,
		.format = fmt_rss, .drop = 2,
	},
	[PROCESS_COL_SAMPLES] = {
		.title = "Samples", .width = 9, .gap = 1, .right_align = true,
		.format = fmt_samples, .drop = 1,
	},
	[PROCESS_COL_TOP] = {
		.title = "Top function", .width = 22, .gap = 1, .format = fmt_top,
	},
	[PROCESS_COL_COMMAND] = {
		.title = "Command", .width = 0, .gap = 1, .format = fmt_command,
	},
};

static bool matches(const struct snap_process *p, const char *filter)
{
	char pid[16];

	if (filter == NULL || filter[0] == '\0')
		return true;
	snprintf(pid, sizeof pid, "%d", (int)p->pid);
	return strncmp(pid, filter, strlen(filter)) == 0 ||
	       strcasestr(or_empty(p->command), filter) != NULL ||
	       strcasestr(process_state_label(p), filter) != NULL ||
	       strcasestr(or_empty(p->top_func), filter) != NULL;
}

/* The branches of every row, from the bottom up: more[d] says whether a
 * row at depth d came below with none shallower in between. */
static void link_tree(struct process_row *rows, size_t n)
{
	unsigned long more = 0;

	for (size_t i = n; i-- > 0;) {
		int d = rows[i].depth;

		rows[i].more = more;
		/* A row ends the branches deeper than itself above it. */
		more &= (2UL << d) - 1;
		more |= 1UL << d;
	}
}

int process_table_build(struct process_table *pt, const struct snapshot *s,
                        const char *filter, bool utf8)
{
	*pt = (struct process_table){ 0 };
	pt->table = (struct table){ .cols = process_columns, .ncols = PROCESS_NCOLS,
	                            .ctx = pt, .utf8 = utf8, .sort_col = -1,
	                            .stretch_min = PROCESS_COMMAND_MIN_COLS };
	if (s->nprocesses == 0)
		return 0;
	pt->rows = calloc(s->nprocesses, sizeof pt->rows[0]);
	pt->order = calloc(s->nprocesses, sizeof pt->order[0]);
	if (pt->rows == NULL || pt->order == NULL) {
		process_table_free(pt);
		return -1;
	}
	for (size_t i = 0; i < s->nprocesses; i++) {
		int d = s->processes[i].depth;

		pt->rows[i] = (struct process_row){
			.p = &s->processes[i],
			.depth = d < 0 ? 0 : d > PROCESS_TREE_MAX_DEPTH
			         ? PROCESS_TREE_MAX_DEPTH : d,
		};
	}
	link_tree(pt->rows, s->nprocesses);
	for (size_t i = 0; i < s->nprocesses; i++)
		if (matches(&s->processes[i], filter))
			pt->order[pt->n++] = &pt->rows[i];
	return 0;
}

void process_table_free(struct process_table *pt)
{
	free(pt->rows);
	free(pt->order);
	pt->rows = NULL;
	pt->order = NULL;
	pt->n = 0;
}

void process_table_describe(const struct snapshot *s, char *buf, size_t size)
{
	size_t exited = 0;

	for (size_t i = 0; i < s->nprocesses; i++)
		exited += s->processes[i].state == PROCESS_EXITED;
	if (!s->following) {
		snprintf(buf, size, "Processes: not following children (start pytop with -s)");
		return;
	}
	snprintf(buf, size, "Processes: %zu (%zu exited), %llu seen, %llu skipped, "
	         "CPU %% over the last %.1f s", s->nprocesses - exited, exited,
	         (unsigned long long)s->processes_seen,
	         (unsigned long long)(s->processes_skipped + s->processes_unsampled),
	         s->window_s);
}
