/* profile_table.c - rows and columns of the profile table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Before the function name is cut, the file keeps its base name (with
 * the ellipsis), but at least FILE_MIN_COLS and at most FILE_MAX_COLS. */
#define FILE_MIN_COLS 8
#define FILE_MAX_COLS 24
/* Below this much room the Function cell is simply cut on the right. */
#define NAME_MIN_COLS 6

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

/* ---- the Function cell ------------------------------------------------ */

/* Columns the file keeps before the name gets cut. */
static int file_keep_cols(const char *file, int file_w, bool utf8)
{
	const char *base = strrchr(file, '/');
	int keep = text_width(base != NULL ? base + 1 : file, utf8) + 1;

	if (keep < FILE_MIN_COLS)
		keep = FILE_MIN_COLS;
	if (keep > FILE_MAX_COLS)
		keep = FILE_MAX_COLS;
	return keep < file_w ? keep : file_w;
}

/* "name (file:line)".  When it does not fit, the file is shortened from
 * the left first (the end of a path says the most), then the name from
 * the right. */
static void fmt_function(const void *row, const void *ctx, int width,
                         bool utf8, char *buf, size_t size)
{
	const struct profile_row *r = row;
	const char *name = or_empty(r->name), *file = or_empty(r->file);
	char tail[24], name_fit[1024], file_fit[1024], marked[1024];
	int name_w, file_w, fixed, file_room;

	(void)ctx;
	if (r->other) {
		/* No file or line: it sums the rows folded away. */
		snprintf(buf, size, "%s (rarest rows, folded)", name);
		return;
	}
	if (r->native) {
		/* Native rows say so, and name their module; without a
		 * source line there is no "(file:line)" to show. */
		snprintf(marked, sizeof marked, "[native] %s", name);
		name = marked;
		if (r->line <= 0) {
			snprintf(buf, size, "%s (%s)", name, or_empty(r->module));
			return;
		}
	}
	snprintf(tail, sizeof tail, ":%d)", r->line);
	name_w = text_width(name, utf8);
	file_w = text_width(file, utf8);
	fixed = 2 + (int)strlen(tail); /* " (" and ":line)" */
	if (width < 0 || name_w + fixed + file_w <= width ||
	    width - fixed < NAME_MIN_COLS + 1) {
		/* Fits, or too narrow to be clever: the table cuts it. */
		snprintf(buf, size, "%s (%s%s", name, file, tail);
		return;
	}
	file_room = width - fixed - name_w;
	if (file_room < file_keep_cols(file, file_w, utf8)) {
		file_room = file_keep_cols(file, file_w, utf8);
		if (width - fixed - file_room < NAME_MIN_COLS)
			file_room = width - fixed - NAME_MIN_COLS;
	}
	text_fit(name_fit, sizeof name_fit, name, width - fixed - file_room,
	         TEXT_CUT_RIGHT, utf8);
	text_fit(file_fit, sizeof file_fit, file, file_room, TEXT_CUT_LEFT,
	         utf8);
	snprintf(buf, size, "%s (%s%s", name_fit, file_fit, tail);
}

/* ---- ordering ---------------------------------------------------------- */

static const struct profile_row *deref(const void *p)
{
	return *(const struct profile_row *const *)p;
}

static int cmp_identity(const struct profile_row *a,
                        const struct profile_row *b)
{
	int c = strcmp(or_empty(a->name), or_empty(b->name));

	if (c == 0)
		c = strcmp(or_empty(a->file), or_empty(b->file));
	if (c == 0)
		c = (a->line > b->line) - (a->line < b->line);
	return c;
}

/* Largest first. */
static int desc_u64(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int desc_double(double a, double b)
{
	return (a < b) - (a > b);
}

static int cmp_own(const void *pa, const void *pb)
{
	const struct profile_row *a = deref(pa), *b = deref(pb);
	int c = desc_u64(a->c->own, b->c->own);

	if (c == 0)
		c = desc_u64(a->c->total, b->c->total);
	return c != 0 ? c : cmp_identity(a, b);
}

static int cmp_total(const void *pa, const void *pb)
{
	const struct profile_row *a = deref(pa), *b = deref(pb);
	int c = desc_u64(a->c->total, b->c->total);

	if (c == 0)
		c = desc_u64(a->c->own, b->c->own);
	return c != 0 ? c : cmp_identity(a, b);
}

static int cmp_own_time(const void *pa, const void *pb)
{
	const struct profile_row *a = deref(pa), *b = deref(pb);
	int c = desc_double(a->c->own_s, b->c->own_s);

	return c != 0 ? c : cmp_own(pa, pb);
}

static int cmp_total_time(const void *pa, const void *pb)
{
	const struct profile_row *a = deref(pa), *b = deref(pb);
	int c = desc_double(a->c->total_s, b->c->total_s);

	return c != 0 ? c : cmp_total(pa, pb);
}

/* The split columns: by the figure, then like %Own. */
#define CMP_BY(fn, type, expr)                                             \
	static int fn(const void *pa, const void *pb)                     \
	{                                                                  \
		const struct snap_split *a = &deref(pa)->c->split;         \
		const struct snap_split *b = &deref(pb)->c->split;         \
		int c = desc_##type(a->expr, b->expr);                     \
		return c != 0 ? c : cmp_own(pa, pb);                       \
	}

CMP_BY(cmp_py, double, python)
CMP_BY(cmp_nat, double, native)
CMP_BY(cmp_sys, double, system)
CMP_BY(cmp_wait, double, waiting)
CMP_BY(cmp_cpuw, double, cpu_wait)
CMP_BY(cmp_gilw, double, gil_wait)
CMP_BY(cmp_mem, u64, mem_growth)
CMP_BY(cmp_majflt, u64, majflt)

static int cmp_faults(const void *pa, const void *pb)
{
	int c = desc_u64(count_faults(&deref(pa)->c->split),
	                 count_faults(&deref(pb)->c->split));

	return c != 0 ? c : cmp_majflt(pa, pb);
}

static int cmp_name(const void *pa, const void *pb)
{
	return cmp_identity(deref(pa), deref(pb));
}

static int (*const comparators[PROFILE_NCOLS])(const void *, const void *) = {
	[PROFILE_COL_OWN] = cmp_own,
	[PROFILE_COL_TOTAL] = cmp_total,
	[PROFILE_COL_PY] = cmp_py,
	[PROFILE_COL_NAT] = cmp_nat,
	[PROFILE_COL_SYS] = cmp_sys,
	[PROFILE_COL_WAIT] = cmp_wait,
	[PROFILE_COL_CPUW] = cmp_cpuw,
	[PROFILE_COL_GILW] = cmp_gilw,
	[PROFILE_COL_MEM] = cmp_mem,
	[PROFILE_COL_FAULTS] = cmp_faults,
	[PROFILE_COL_MAJFLT] = cmp_majflt,
	[PROFILE_COL_OWN_TIME] = cmp_own_time,
	[PROFILE_COL_TOTAL_TIME] = cmp_total_time,
	[PROFILE_COL_NAME] = cmp_name,
};

static const struct table_column name_column = {
	.title = "Function (file:line)", .width = 0, .gap = 1,
	.format = fmt_function, .ascending = true,
};

static void init_columns(struct profile_table *pt)
{
	for (int i = 0; i < PROFILE_NCOLS; i++) {
		pt->cols[i] = i == PROFILE_COL_NAME
		              ? name_column : count_column((enum count_col)i);
		pt->cols[i].compare = comparators[i];
	}
}

const char *profile_col_name(enum profile_col col)
{
	if (col == PROFILE_COL_NAME)
		return "Function";
	return col < PROFILE_NCOLS ? count_col_name((enum count_col)col)
	                           : "?";
}

enum profile_col profile_col_step(enum profile_col col, int dir,
                                  unsigned long hidden)
{
	int n = PROFILE_NCOLS, c = (int)col;

	do
		c = ((c + dir) % n + n) % n;
	while ((hidden >> c) & 1 && c != (int)col);
	return (enum profile_col)c;
}

static const struct snap_counts *row_counts(const void *row)
{
	return ((const struct profile_row *)row)->c;
}

/* ---- building ---------------------------------------------------------- */

static bool matches(const char *name, const char *file, const char *filter)
{
	return filter == NULL || filter[0] == '\0' ||
	       strcasestr(or_empty(name), filter) != NULL ||
	       strcasestr(or_empty(file), filter) != NULL;
}

/* Copy the snapshot entries that pass the filter into pt->rows. */
static void collect(struct profile_table *pt, const struct snapshot *s,
                    const char *filter)
{
	size_t count = pt->mode == PROFILE_LINES ? s->nlines : s->nfuncs;

	for (size_t i = 0; i < count; i++) {
		struct profile_row r;

		if (pt->mode == PROFILE_LINES)
			r = (struct profile_row){ s->lines[i].name,
			        s->lines[i].file, s->lines[i].line,
			        &s->lines[i].c, s->lines[i].native,
			        s->lines[i].module, s->lines[i].other };
		else
			r = (struct profile_row){ s->funcs[i].name,
			        s->funcs[i].file, s->funcs[i].line,
			        &s->funcs[i].c, s->funcs[i].native,
			        s->funcs[i].module, s->funcs[i].other };
		if (matches(r.name, r.file, filter)) {
			pt->rows[pt->n] = r;
			pt->order[pt->n] = &pt->rows[pt->n];
			pt->n++;
		}
	}
}

const char *profile_thread_name(const struct snapshot *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return or_empty(s->threads[i].name);
	return "";
}

int profile_table_build(struct profile_table *pt, const struct snapshot *s,
                        enum profile_mode mode, const char *filter,
                        enum profile_col sort, bool utf8)
{
	size_t count = mode == PROFILE_LINES ? s->nlines : s->nfuncs;

	if (sort >= PROFILE_NCOLS || (count_hidden(s) >> sort) & 1)
		sort = PROFILE_COL_OWN;
	*pt = (struct profile_table){
		.cc = { s->samples, row_counts },
		.idle_mode = s->idle_mode,
		.thread = s->thread_filter,
		.thread_name = profile_thread_name(s, s->thread_filter),
		.process = s->process_filter,
		.mode = mode,
		.sort = sort,
	};
	init_columns(pt);
	pt->table = (struct table){
		.cols = pt->cols, .ncols = PROFILE_NCOLS, .ctx = pt,
		.utf8 = utf8, .sort_col = (int)pt->sort,
		.hidden = count_hidden(s),
		.stretch_min = PROFILE_NAME_MIN_COLS,
	};
	if (count == 0)
		return 0;
	pt->rows = calloc(count, sizeof pt->rows[0]);
	pt->order = calloc(count, sizeof pt->order[0]);
	if (pt->rows == NULL || pt->order == NULL) {
		profile_table_free(pt);
		return -1;
	}
	collect(pt, s, filter);
	table_sort(&pt->table, pt->sort, pt->order, pt->n);
	return 0;
}

void profile_table_free(struct profile_table *pt)
{
	free(pt->rows);
	free(pt->order);
	pt->rows = NULL;
	pt->order = NULL;
	pt->n = 0;
}

void profile_percent_of(uint64_t samples, bool idle, pid_t thread,
                        const char *thread_name, pid_t process, char *buf,
                        size_t size)
{
	char n[32];

	text_thousands(n, sizeof n, samples);
	/* The engine's thread filter wins over its process filter. */
	if (thread == 0 && process != 0)
		snprintf(buf, size, "%% of %s %ssamples of process %d", n,
		         idle ? "" : "running ", (int)process);
	else if (thread != 0)
		snprintf(buf, size, "%% of %s %ssamples of thread %d%s%s", n,
		         idle ? "" : "running ", (int)thread,
		         thread_name[0] != '\0' ? " " : "", thread_name);
	else
		snprintf(buf, size, "%% of %s samples of %s", n,
		         idle ? "all threads" : "running threads");
}

void profile_table_describe(const struct profile_table *pt, bool since_reset,
                            char *buf, size_t size)
{
	char of[256];

	profile_percent_of(pt->cc.samples, pt->idle_mode, pt->thread,
	                   pt->thread_name, pt->process, of, sizeof of);
	snprintf(buf, size, "%s since %s, %s, by %s",
	         pt->mode == PROFILE_LINES ? "Lines" : "Functions",
	         since_reset ? "reset" : "start", of,
	         profile_col_name(pt->sort));
}
