/* profile_table.c - rows and columns of the profile table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Below this much room the Function cell is simply cut on the right. */
#define NAME_MIN_COLS 6
/* The file part keeps at least this many columns (ellipsis included)
 * before the name is cut. */
#define FILE_MIN_COLS 8

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

/* ---- the Function cell ------------------------------------------------ */

static const char *base_name(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash != NULL ? slash + 1 : file;
}

/* The path in at most room columns, giving up whole directories from the
 * left first ("…/pkg/mod.py", then "mod.py"), then the base name's start
 * ("…_loop.py").  The name and base name say more than the directories. */
static void fit_path(char *buf, size_t size, const char *file, int room,
                     bool utf8)
{
	const char *base = base_name(file), *p = file;

	if (text_width(file, utf8) <= room) {
		text_fit(buf, size, file, -1, TEXT_CUT_RIGHT, utf8);
		return;
	}
	while ((p = strchr(p, '/')) != NULL && p < base) {
		char tail[1024];

		p++;
		snprintf(tail, sizeof tail, "%s/%s", text_ellipsis(utf8), p);
		if (text_width(tail, utf8) <= room) {
			text_fit(buf, size, tail, -1, TEXT_CUT_RIGHT, utf8);
			return;
		}
	}
	text_fit(buf, size, base, room, TEXT_CUT_LEFT, utf8);
}

/* "name (file:line)".  When it does not fit, the directories go first,
 * then the base name shrinks to FILE_MIN_COLS, and only then the name is
 * cut: the function is what the row is about.  full: the whole path, the
 * name never cut (the table cuts the cell on the right). */
static void fmt_function(const void *row, const void *ctx, int width,
                         bool utf8, char *buf, size_t size)
{
	const struct profile_row *r = row;
	const struct profile_table *pt = ctx;
	const char *name = or_empty(r->name), *file = or_empty(r->file);
	char tail[24], name_fit[1024], file_fit[1024], marked[1024];
	int name_w, fixed, file_room;

	if (r->other) {
		/* No file or line: it sums the rows folded away. */
		snprintf(buf, size, "%s (rarest rows, folded)", name);
		return;
	}
	if (r->members > 0) {
		snprintf(buf, size, "[lib] %s (%d native row%s)", name,
		         r->members, r->members == 1 ? "" : "s");
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
	if (file[0] == '\0' && r->line <= 0) {
		/* "[N more frames]": no code, no file to name. */
		snprintf(buf, size, "%s", name);
		return;
	}
	snprintf(tail, sizeof tail, ":%d)", r->line);
	name_w = text_width(name, utf8);
	fixed = 2 + (int)strlen(tail); /* " (" and ":line)" */
	if (width < 0 || (pt != NULL && pt->full_names) ||
	    name_w + fixed + text_width(file, utf8) <= width ||
	    width - fixed < NAME_MIN_COLS + FILE_MIN_COLS) {
		/* Fits, asked in full, or too narrow to be clever: the
		 * table cuts it. */
		snprintf(buf, size, "%s (%s%s", name, file, tail);
		return;
	}
	file_room = width - fixed - name_w;
	if (file_room < FILE_MIN_COLS)
		file_room = FILE_MIN_COLS;
	fit_path(file_fit, sizeof file_fit, file, file_room, utf8);
	text_fit_name(name_fit, sizeof name_fit, name,
	              width - fixed - text_width(file_fit, utf8), utf8);
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

static int cmp_name(const void *pa, const void *pb)
{
	return cmp_identity(deref(pa), deref(pb));
}

static const struct table_column name_column = {
	.title = "Function (file:line)", .width = 0, .gap = 1,
	.format = fmt_function, .compare = cmp_name, .ascending = true,
};

static void init_columns(struct profile_table *pt)
{
	for (int i = 0; i < COUNT_NCOLS; i++)
		pt->cols[i] = count_column((enum count_col)i);
	pt->cols[PROFILE_COL_NAME] = name_column;
}

const char *profile_col_name(profile_col col)
{
	if (col == PROFILE_COL_NAME)
		return "Function";
	return col < PROFILE_NCOLS ? count_col_name((enum count_col)col)
	                           : "?";
}

profile_col profile_col_step(profile_col col, int dir,
                                  unsigned long hidden)
{
	int n = PROFILE_NCOLS, c = (int)col;

	do
		c = ((c + dir) % n + n) % n;
	while ((hidden >> c) & 1 && c != (int)col);
	return c;
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
			        s->lines[i].module, s->lines[i].other, 0 };
		else
			r = (struct profile_row){ s->funcs[i].name,
			        s->funcs[i].file, s->funcs[i].line,
			        &s->funcs[i].c, s->funcs[i].native,
			        s->funcs[i].module, s->funcs[i].other, 0 };
		/* Over the last N seconds, rows not sampled in them are
		 * history: left out. */
		if (pt->recent_s > 0 && r.c->own == 0 && r.c->total == 0)
			continue;
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

static const char *base_or_all(const char *module)
{
	return module != NULL && module[0] != '\0' ? base_name(module) : "?";
}

/* The library row of module among rows [0, n), or n. */
static size_t find_library(const struct profile_table *pt, size_t n,
                           const char *module)
{
	for (size_t i = 0; i < n; i++)
		if (pt->rows[i].members > 0 &&
		    strcmp(or_empty(pt->rows[i].module), or_empty(module)) == 0)
			return i;
	return n;
}

/* Fold every native row into its library's row, in place. */
static int group_libraries(struct profile_table *pt)
{
	size_t n = 0, nlib = 0;

	pt->lib_counts = calloc(pt->n + 1, sizeof pt->lib_counts[0]);
	if (pt->lib_counts == NULL)
		return -1;
	for (size_t i = 0; i < pt->n; i++) {
		struct profile_row r = pt->rows[i];
		struct snap_counts *c;
		uint64_t total;
		size_t g;

		if (!r.native || r.other) {
			pt->rows[n++] = r;
			continue;
		}
		g = find_library(pt, n, r.module);
		if (g == n) {
			pt->rows[n++] = (struct profile_row){
				.name = base_or_all(r.module), .file = r.module,
				.c = &pt->lib_counts[nlib++], .native = true,
				.module = r.module, .members = 0 };
		}
		c = &pt->lib_counts[pt->rows[g].c - pt->lib_counts];
		total = c->total;

		snap_counts_add(c, r.c);
		c->total = total > r.c->total ? total : r.c->total;
		if (c->total < c->own)
			c->total = c->own;
		pt->rows[g].members++;
	}
	pt->n = n;
	for (size_t i = 0; i < n; i++)
		pt->order[i] = &pt->rows[i];
	return 0;
}

int profile_table_build(struct profile_table *pt, const struct snapshot *s,
                        enum profile_mode mode, const char *filter,
                        profile_col sort, bool utf8)
{
	return profile_table_build_grouped(pt, s, mode, filter, sort, utf8,
	                                   false);
}

int profile_table_build_grouped(struct profile_table *pt,
                                const struct snapshot *s,
                                enum profile_mode mode, const char *filter,
                                profile_col sort, bool utf8, bool by_library)
{
	size_t count = mode == PROFILE_LINES ? s->nlines : s->nfuncs;

	if (sort >= PROFILE_NCOLS || (count_hidden(s) >> sort) & 1)
		sort = COUNT_OWN;
	*pt = (struct profile_table){
		.cc = { s->recent_s > 0 ? s->recent_samples : s->samples,
		        row_counts },
		.idle_mode = s->idle_mode,
		.thread = s->thread_filter,
		.thread_name = profile_thread_name(s, s->thread_filter),
		.process = s->process_filter,
		.recent_s = s->recent_s,
		.recent_asked = s->recent_asked,
		.replay = s->replay.on,
		.replay_from = s->replay.from_s,
		.replay_to = s->replay.to_s,
		.mode = mode,
		.sort = sort,
	};
	init_columns(pt);
	pt->table = (struct table){
		.cols = pt->cols, .ncols = PROFILE_NCOLS, .ctx = pt,
		.utf8 = utf8, .sort_col = (int)pt->sort,
		.hidden = count_hidden(s),
		.stretch_min = PROFILE_NAME_MIN_COLS,
		.tie_break = cmp_name,
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
	if (by_library && group_libraries(pt) != 0) {
		profile_table_free(pt);
		return -1;
	}
	table_sort(&pt->table, pt->sort, pt->order, pt->n);
	return 0;
}

void profile_table_full_names(struct profile_table *pt, bool on)
{
	unsigned long keep = 1UL << COUNT_OWN | 1UL << pt->sort |
	                     1UL << PROFILE_COL_NAME;

	pt->full_names = on;
	if (on)
		pt->table.hidden |= ~keep & ((1UL << PROFILE_NCOLS) - 1);
}

void profile_table_free(struct profile_table *pt)
{
	free(pt->rows);
	free(pt->order);
	free(pt->lib_counts);
	pt->rows = NULL;
	pt->order = NULL;
	pt->lib_counts = NULL;
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

const char *profile_span(const struct snapshot *s, bool since_reset, char *buf,
                         size_t size)
{
	if (s != NULL && s->replay.on)
		snprintf(buf, size, "in %.1f-%.1f s of the recording", s->replay.from_s,
		         s->replay.to_s);
	else
		snprintf(buf, size, "since %s", since_reset ? "reset" : "start");
	return buf;
}

void profile_table_describe(const struct profile_table *pt, bool since_reset,
                            char *buf, size_t size)
{
	char of[256], when[64];

	profile_percent_of(pt->cc.samples, pt->idle_mode, pt->thread,
	                   pt->thread_name, pt->process, of, sizeof of);

	/* Early in a run the window is shorter than asked: say both. */
	if (pt->replay)
		snprintf(when, sizeof when, "in %.1f-%.1f s of the recording", pt->replay_from,
		         pt->replay_to);
	else if (pt->recent_s > 0 && pt->recent_s + 0.5 < pt->recent_asked)
		snprintf(when, sizeof when, "over the last %.0f s (of %.0f)",
		         pt->recent_s, pt->recent_asked);
	else if (pt->recent_s > 0)
		snprintf(when, sizeof when, "over the last %.0f s",
		         pt->recent_s);
	else
		snprintf(when, sizeof when, "since %s",
		         since_reset ? "reset" : "start");
	snprintf(buf, size, "%s %s, %s, by %s",
	         pt->mode == PROFILE_LINES ? "Lines" : "Functions", when, of,
	         profile_col_name(pt->sort));
}
