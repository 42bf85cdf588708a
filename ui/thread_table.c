/* thread_table.c - rows and columns of the threads table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "thread_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static const struct snap_thread *thread_of(const void *row)
{
	return row;
}

/* The name the program gave the thread (threading) when it is known, else
 * the OS's: on CPython before 3.14 the OS name is the process's. */
static const char *shown_name(const struct snap_thread *t)
{
	return t->py_name != NULL && t->py_name[0] != '\0' ? t->py_name : or_empty(t->name);
}

/* ---- formatting -------------------------------------------------------- */

const char *thread_state_label(enum snap_thread_state st)
{
	switch (st) {
	case THREAD_RUNNING_GIL:
		return "run+GIL";
	case THREAD_RUNNING:
		return "run";
	case THREAD_GIL_WAIT:
		return "GIL wait";
	case THREAD_IDLE:
		return "idle";
	case THREAD_GONE:
		return "gone";
	case THREAD_UNKNOWN:
		break;
	}
	return "?";
}

static double cpu_pct(const struct snap_thread *t)
{
	return t->cpu_user_pct + t->cpu_sys_pct;
}

static void fmt_tid(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%d", (int)thread_of(row)->tid);
}

static void fmt_name(const void *row, const void *ctx, int width, bool utf8,
                     char *buf, size_t size)
{
	(void)ctx;
	text_fit_name(buf, size, shown_name(thread_of(row)), width, utf8);
}

static void fmt_state(const void *row, const void *ctx, int width,
                      bool utf8, char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	snprintf(buf, size, "%s", thread_state_label(thread_of(row)->state));
}

static void fmt_cpu(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	/* NaN: not known (a replay: the recording has no thread CPU). */
	if (isnan(cpu_pct(thread_of(row))))
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%.1f", cpu_pct(thread_of(row)));
}

static void fmt_usr_sys(const void *row, const void *ctx, int width,
                        bool utf8, char *buf, size_t size)
{
	const struct snap_thread *t = thread_of(row);

	(void)ctx, (void)width, (void)utf8;
	if (isnan(t->cpu_user_pct) || isnan(t->cpu_sys_pct))
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%.0f/%.0f", t->cpu_user_pct, t->cpu_sys_pct);
}

static void fmt_gil(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	if (isnan(thread_of(row)->gil_pct))
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%.1f", thread_of(row)->gil_pct);
}

static void fmt_samples(const void *row, const void *ctx, int width,
                        bool utf8, char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	text_thousands(buf, size, thread_of(row)->samples);
}

static void fmt_top(const void *row, const void *ctx, int width, bool utf8,
                    char *buf, size_t size)
{
	const char *top = or_empty(thread_of(row)->top_func);

	(void)ctx;
	/* A thread with no Python frame of its own at its last sample. */
	if (top[0] == '\0')
		snprintf(buf, size, "%s", utf8 ? "\u2014" : "-");
	else
		text_fit_name(buf, size, top, width, utf8);
}

/* ---- ordering ---------------------------------------------------------- */

static const struct snap_thread *deref(const void *p)
{
	return *(const struct snap_thread *const *)p;
}

static int asc_tid(const struct snap_thread *a, const struct snap_thread *b)
{
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* Largest first. */
static int desc_double(double a, double b)
{
	return (a < b) - (a > b);
}

static int desc_u64(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int cmp_tid(const void *pa, const void *pb)
{
	return asc_tid(deref(pa), deref(pb));
}

static int cmp_name(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = strcmp(shown_name(a), shown_name(b));

	return c != 0 ? c : asc_tid(a, b);
}

/* Busiest first: the enum's order, unknown last. */
static int state_rank(enum snap_thread_state st)
{
	return st == THREAD_UNKNOWN ? THREAD_GONE + 1 : (int)st;
}

static int cmp_state(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = state_rank(a->state) - state_rank(b->state);

	if (c == 0)
		c = desc_double(cpu_pct(a), cpu_pct(b));
	return c != 0 ? c : asc_tid(a, b);
}

static int cmp_cpu(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = desc_double(cpu_pct(a), cpu_pct(b));

	if (c == 0)
		c = desc_u64(a->samples, b->samples);
	return c != 0 ? c : asc_tid(a, b);
}

static int cmp_gil(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = desc_double(a->gil_pct, b->gil_pct);

	return c != 0 ? c : cmp_cpu(pa, pb);
}

static int cmp_samples(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = desc_u64(a->samples, b->samples);

	return c != 0 ? c : asc_tid(a, b);
}

static int cmp_top(const void *pa, const void *pb)
{
	const struct snap_thread *a = deref(pa), *b = deref(pb);
	int c = strcmp(or_empty(a->top_func), or_empty(b->top_func));

	return c != 0 ? c : asc_tid(a, b);
}

/* Widths leave room for the sort mark after each title.  TIDs go up to
 * pid_max (4194304, 7 digits); OS names have at most 15 bytes (a
 * program's longer names widen the column: fit_name_width). */
static const struct table_column thread_columns[THREAD_NCOLS] = {
	[THREAD_COL_TID] = {
		.title = "TID", .width = 7, .gap = 0, .right_align = true,
		.format = fmt_tid, .compare = cmp_tid, .ascending = true,
	},
	[THREAD_COL_NAME] = {
		.title = "Name", .width = 15, .gap = 1,
		.format = fmt_name, .compare = cmp_name, .ascending = true,
	},
	[THREAD_COL_STATE] = {
		.title = "State", .width = 8, .gap = 1,
		.format = fmt_state, .compare = cmp_state, .ascending = true,
	},
	[THREAD_COL_CPU] = {
		.title = "CPU%", .width = 5, .gap = 1, .right_align = true,
		.format = fmt_cpu, .compare = cmp_cpu,
	},
	[THREAD_COL_USR_SYS] = {
		.title = "usr/sys", .width = 7, .gap = 1, .right_align = true,
		.format = fmt_usr_sys,
	},
	[THREAD_COL_GIL] = {
		.title = "GIL%", .width = 5, .gap = 1, .right_align = true,
		.format = fmt_gil, .compare = cmp_gil,
	},
	[THREAD_COL_SAMPLES] = {
		.title = "Samples", .width = 9, .gap = 1, .right_align = true,
		.format = fmt_samples, .compare = cmp_samples,
	},
	[THREAD_COL_TOP] = {
		.title = "Top function", .width = 0, .gap = 1,
		.format = fmt_top, .compare = cmp_top, .ascending = true,
	},
};

static const char *const col_names[THREAD_NCOLS] = {
	"TID", "Name", "State", "CPU%", "usr/sys", "GIL%", "Samples",
	"Top function",
};

const char *thread_col_name(enum thread_col col)
{
	return col < THREAD_NCOLS ? col_names[col] : "?";
}

enum thread_col thread_col_step(enum thread_col col, int dir)
{
	int n = THREAD_NCOLS, c = (int)col;

	for (int i = 0; i < n; i++) {
		c = ((c + (dir < 0 ? -1 : 1)) % n + n) % n;
		if (thread_columns[c].compare != NULL)
			return (enum thread_col)c;
	}
	return col;
}

/* ---- building ---------------------------------------------------------- */

static bool matches(const struct snap_thread *t, const char *filter)
{
	char tid[16];

	if (filter == NULL || filter[0] == '\0')
		return true;
	snprintf(tid, sizeof tid, "%d", (int)t->tid);
	return strncmp(tid, filter, strlen(filter)) == 0 ||
	       strcasestr(or_empty(t->name), filter) != NULL ||
	       strcasestr(or_empty(t->py_name), filter) != NULL ||
	       strcasestr(or_empty(t->top_func), filter) != NULL;
}

/* The Name column as wide as the longest name shown, from the OS names'
 * 15 up to THREAD_NAME_MAX_COLS. */
static void fit_name_width(struct thread_table *tt, bool utf8)
{
	int w = tt->cols[THREAD_COL_NAME].width;

	for (size_t i = 0; i < tt->n; i++) {
		int tw = text_width(shown_name(tt->order[i]), utf8);

		if (tw > w)
			w = tw < THREAD_NAME_MAX_COLS ? tw : THREAD_NAME_MAX_COLS;
	}
	tt->cols[THREAD_COL_NAME].width = w;
}

int thread_table_build(struct thread_table *tt, const struct snapshot *s,
                       const char *filter, enum thread_col sort, bool utf8)
{
	if (sort >= THREAD_NCOLS || thread_columns[sort].compare == NULL)
		sort = THREAD_COL_CPU;
	*tt = (struct thread_table){ .sort = sort };
	memcpy(tt->cols, thread_columns, sizeof tt->cols);
	tt->table = (struct table){ .cols = tt->cols,
	                            .ncols = THREAD_NCOLS, .ctx = tt,
	                            .utf8 = utf8, .sort_col = (int)sort };
	if (s->nthreads == 0)
		return 0;
	tt->order = calloc(s->nthreads, sizeof tt->order[0]);
	if (tt->order == NULL)
		return -1;
	for (size_t i = 0; i < s->nthreads; i++)
		if (matches(&s->threads[i], filter))
			tt->order[tt->n++] = &s->threads[i];
	fit_name_width(tt, utf8);
	table_sort(&tt->table, sort, tt->order, tt->n);
	return 0;
}

void thread_table_free(struct thread_table *tt)
{
	free(tt->order);
	tt->order = NULL;
	tt->n = 0;
}

void thread_table_describe(const struct thread_table *tt,
                           const struct snapshot *s, char *buf, size_t size)
{
	if (s->replay.on)
		snprintf(buf, size, "Threads: %zu, samples in %.1f-%.1f s of the recording "
		         "(CPU and GIL %% not recorded), by %s", s->nthreads, s->replay.from_s,
		         s->replay.to_s, thread_col_name(tt->sort));
	else
		snprintf(buf, size, "Threads: %zu, CPU and GIL %% over the last "
		         "%.1f s, by %s", s->nthreads, s->window_s,
		         thread_col_name(tt->sort));
}
