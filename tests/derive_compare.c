/* derive_compare.c - see derive_compare.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "derive_compare.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* One check, ending the test or not as the comparison says. */
#define DERIVE_CHECK(c, cond, ...)                    \
	do {                                          \
		if ((c)->fatal)                       \
			cr_assert(cond, __VA_ARGS__); \
		else                                  \
			cr_expect(cond, __VA_ARGS__); \
	} while (0)

bool derive_near(double x, double y)
{
	return fabs(x - y) <= 1e-9 * (fabs(x) + fabs(y)) + 1e-9;
}

/* ---- which rows the aggregator folded -------------------------------- */

/* A frame that names a function (line) of its own: not "[other stacks]"
 * nor the "[other]" frame of forgotten codes. */
static bool names_a_row(const struct snap_frame *f)
{
	return !f->other && !f->folded_other;
}

/* What the stacks folded into "[other stacks]" were samples of names
 * the row too, "[other]" (other) once it folded: 1 folded, -1 a row of
 * its own, 0 not named. */
static int folded_rows_mark(const struct snapshot *s, enum snap_folded_kind kind,
                            const char *name, const char *file, int line)
{
	int mark = 0;
	for (size_t i = 0; i < s->nstack_folded_rows; i++) {
		const struct snap_folded_row *r = &s->stack_folded_rows[i];
		if (r->kind != kind || strcmp(r->file, file) != 0 ||
		    (name != NULL ? strcmp(r->name, name) != 0 : r->line != line))
			continue;
		if (!r->other)
			return -1;
		mark = 1;
	}
	return mark;
}

static bool func_marked(void *ctx, const char *name, const char *file)
{
	const struct snapshot *s = ctx;
	int rows = folded_rows_mark(s, SNAP_FOLDED_FUNC, name, file, 0);
	bool folded = rows > 0;
	if (rows < 0)
		return false;
	for (size_t i = 0; i < s->nstack_frames; i++) {
		const struct snap_frame *f = &s->stack_frames[i];
		if (!names_a_row(f) || strcmp(f->name, name) != 0 || strcmp(f->file, file) != 0)
			continue;
		if (!f->folded_func)
			return false; /* sampled again since: a row of its own */
		folded = true;
	}
	return folded;
}

static bool line_marked(void *ctx, const char *file, int line)
{
	const struct snapshot *s = ctx;
	int rows = folded_rows_mark(s, SNAP_FOLDED_LINE, NULL, file, line);
	bool folded = rows > 0;
	if (rows < 0)
		return false;
	for (size_t i = 0; i < s->nstack_frames; i++) {
		const struct snap_frame *f = &s->stack_frames[i];
		if (!names_a_row(f) || ((f->native || f->marker) && f->line <= 0) ||
		    f->line != line || strcmp(f->file, file) != 0)
			continue;
		if (!f->folded_line)
			return false;
		folded = true;
	}
	return folded;
}

size_t derive_sync_folds(struct sample_oracle *o, const struct snapshot *s)
{
	const struct oracle_folds f = { func_marked, line_marked, (void *)s };
	return oracle_fold(o, &f);
}

/* ---- rows ------------------------------------------------------------- */

static double kinds(const struct snap_split *x)
{
	return x->python + x->native + x->system + x->waiting + x->cpu_wait + x->gil_wait;
}

/* The memory charged with the samples: in a window, what was given back
 * in it too, charged to the thread's previous sample whichever window
 * that sample counted in. */
static void expect_memory(const struct derive_cmp *c, const char *what, const char *name,
                          const char *win, const struct snap_split *x,
                          const struct snap_split *y)
{
	DERIVE_CHECK(c, x->mem_growth == y->mem_growth && x->mem_shrink == y->mem_shrink &&
	             x->minflt == y->minflt && x->majflt == y->majflt,
	             "%s: %s %s%s: memory +%llu -%llu faults %llu/%llu, oracle +%llu -%llu "
	             "%llu/%llu", c->label, what, name, win, (unsigned long long)x->mem_growth,
	             (unsigned long long)x->mem_shrink, (unsigned long long)x->minflt,
	             (unsigned long long)x->majflt, (unsigned long long)y->mem_growth,
	             (unsigned long long)y->mem_shrink, (unsigned long long)y->minflt,
	             (unsigned long long)y->majflt);
}

/* x the snapshot's, y the oracle's. */
static void expect_counts(const struct derive_cmp *c, const char *what, const char *name,
                          bool split, const struct snap_counts *x,
                          const struct snap_counts *y)
{
	DERIVE_CHECK(c, x->own == y->own && x->own_win == y->own_win &&
	             derive_near(x->own_s, y->own_s),
	             "%s: %s %s: own %llu (window %llu, %.9f s), oracle %llu (%llu, %.9f s)",
	             c->label, what, name, (unsigned long long)x->own,
	             (unsigned long long)x->own_win, x->own_s, (unsigned long long)y->own,
	             (unsigned long long)y->own_win, y->own_s);
	DERIVE_CHECK(c, x->total == y->total && x->total_win == y->total_win &&
	             derive_near(x->total_s, y->total_s),
	             "%s: %s %s: total %llu (window %llu, %.9f s), oracle %llu (%llu, %.9f s)",
	             c->label, what, name, (unsigned long long)x->total,
	             (unsigned long long)x->total_win, x->total_s, (unsigned long long)y->total,
	             (unsigned long long)y->total_win, y->total_s);
	expect_memory(c, what, name, "", &x->split, &y->split);
	expect_memory(c, what, name, " (window)", &x->split_win, &y->split_win);
	/* The kinds share the own samples out (aggregator.h). */
	DERIVE_CHECK(c, derive_near(kinds(&x->split), split ? (double)x->own : 0) &&
	             derive_near(kinds(&x->split_win), split ? (double)x->own_win : 0),
	             "%s: %s %s: kinds add up to %.9f (window %.9f), own %llu (%llu)", c->label,
	             what, name, kinds(&x->split), kinds(&x->split_win),
	             (unsigned long long)x->own, (unsigned long long)x->own_win);
}

static void check_funcs(const struct derive_cmp *c, const struct snapshot *s,
                        const struct oracle_rows *r, bool split)
{
	DERIVE_CHECK(c, s->nfuncs == r->nfuncs, "%s: %zu functions, oracle %zu", c->label,
	             s->nfuncs, r->nfuncs);
	for (size_t i = 0; i < s->nfuncs && i < r->nfuncs; i++) {
		const struct snap_func *x = &s->funcs[i], *y = &r->funcs[i];
		if (strcmp(x->name, y->name) != 0 || strcmp(x->file, y->file) != 0 ||
		    x->other != y->other) {
			DERIVE_CHECK(c, false, "%s: function %zu: %s (%s), oracle %s (%s) (own %llu, "
			             "oracle %llu)", c->label, i, x->name, x->file, y->name, y->file,
			             (unsigned long long)x->c.own, (unsigned long long)y->c.own);
			break; /* the rest would only repeat it */
		}
		if (c->first_line)
			DERIVE_CHECK(c, x->line == y->line, "%s: %s: first line %d, oracle %d",
			             c->label, x->name, x->line, y->line);
		DERIVE_CHECK(c, x->native == y->native && strcmp(x->module, y->module) == 0,
		             "%s: %s: native %d %s, oracle %d %s", c->label, x->name, x->native,
		             x->module, y->native, y->module);
		expect_counts(c, "function", x->name, split, &x->c, &y->c);
	}
}

static void check_lines(const struct derive_cmp *c, const struct snapshot *s,
                        const struct oracle_rows *r, bool split)
{
	DERIVE_CHECK(c, s->nlines == r->nlines, "%s: %zu lines, oracle %zu", c->label, s->nlines,
	             r->nlines);
	for (size_t i = 0; i < s->nlines && i < r->nlines; i++) {
		const struct snap_line *x = &s->lines[i], *y = &r->lines[i];
		char name[256];
		snprintf(name, sizeof name, "%s:%d", x->file, x->line);
		if (strcmp(x->file, y->file) != 0 || x->line != y->line || x->other != y->other) {
			DERIVE_CHECK(c, false, "%s: line %zu: %s, oracle %s:%d (own %llu, oracle %llu)",
			             c->label, i, name, y->file, y->line,
			             (unsigned long long)x->c.own, (unsigned long long)y->c.own);
			break;
		}
		DERIVE_CHECK(c, strcmp(x->name, y->name) == 0 && x->native == y->native,
		             "%s: %s named %s (native %d), oracle %s (%d)", c->label, name,
		             x->name, x->native, y->name, y->native);
		expect_counts(c, "line", name, split, &x->c, &y->c);
	}
}

/* --native's callees: each (Python line, native leaf). */
static void check_callees(const struct derive_cmp *c, const struct snapshot *s,
                          const struct oracle_rows *r, bool split)
{
	DERIVE_CHECK(c, s->ncallees == r->ncallees, "%s: %zu callees, oracle %zu", c->label,
	             s->ncallees, r->ncallees);
	for (size_t i = 0; i < s->ncallees && i < r->ncallees; i++) {
		const struct snap_callee *x = &s->callees[i], *y = &r->callees[i];
		char name[256];
		snprintf(name, sizeof name, "%s under %s:%d", x->name, x->caller_file,
		         x->caller_line);
		if (strcmp(x->caller_file, y->caller_file) != 0 ||
		    x->caller_line != y->caller_line || strcmp(x->name, y->name) != 0 ||
		    strcmp(x->file, y->file) != 0) {
			DERIVE_CHECK(c, false, "%s: callee %zu: %s, oracle %s under %s:%d", c->label,
			             i, name, y->name, y->caller_file, y->caller_line);
			break;
		}
		DERIVE_CHECK(c, x->line == y->line && strcmp(x->module, y->module) == 0,
		             "%s: callee %s: line %d module %s, oracle %d %s", c->label, name,
		             x->line, x->module, y->line, y->module);
		expect_counts(c, "callee", name, split, &x->c, &y->c);
	}
}

/* Every own sample is a function's: their splits are the snapshot's. */
static void check_split_sum(const struct derive_cmp *c, const struct snapshot *s)
{
	struct snap_split sum = { 0 }, win = { 0 };
	for (size_t i = 0; i < s->nfuncs; i++) {
		snap_split_add(&sum, &s->funcs[i].c.split);
		snap_split_add(&win, &s->funcs[i].c.split_win);
	}
	const struct snap_split *t = &s->split, *w = &s->split_win;
	DERIVE_CHECK(c, derive_near(sum.python, t->python) && derive_near(sum.native, t->native) &&
	             derive_near(sum.system, t->system) && derive_near(sum.waiting, t->waiting) &&
	             derive_near(sum.cpu_wait, t->cpu_wait) &&
	             derive_near(sum.gil_wait, t->gil_wait),
	             "%s: the functions' kinds add up to %.6f %.6f %.6f %.6f %.6f %.6f, the "
	             "snapshot's split %.6f %.6f %.6f %.6f %.6f %.6f", c->label, sum.python,
	             sum.native, sum.system, sum.waiting, sum.cpu_wait, sum.gil_wait, t->python,
	             t->native, t->system, t->waiting, t->cpu_wait, t->gil_wait);
	DERIVE_CHECK(c, derive_near(kinds(&win), kinds(w)),
	             "%s: the functions' window kinds add up to %.6f, the snapshot's %.6f",
	             c->label, kinds(&win), kinds(w));
	expect_memory(c, "functions", "summed", "", &sum, t);
	expect_memory(c, "functions", "summed", " (window)", &win, w);
}

void derive_check_rows(const struct derive_cmp *c, const struct snapshot *s,
                       const struct sample_oracle *o, pid_t tid, pid_t pid, bool split)
{
	struct oracle_rows r;
	cr_assert(oracle_rows(o, tid, tid ? 0 : pid, &r), "%s: the oracle ran out of memory",
	          c->label);
	DERIVE_CHECK(c, s->samples == r.samples && s->samples_win == r.samples_win,
	             "%s: samples %llu (window %llu), oracle %llu (%llu)", c->label,
	             (unsigned long long)s->samples, (unsigned long long)s->samples_win,
	             (unsigned long long)r.samples, (unsigned long long)r.samples_win);
	check_funcs(c, s, &r, split);
	check_lines(c, s, &r, split);
	check_callees(c, s, &r, split);
	if (tid != 0 || pid == 0)
		check_split_sum(c, s);
	oracle_rows_free(&r);
}

void derive_check_oracle(const struct derive_cmp *c, struct aggregator *a,
                         struct sample_oracle *o, pid_t tid, pid_t pid, bool split)
{
	struct snapshot s = { 0 };
	aggregator_filter_thread(a, tid);
	aggregator_filter_process(a, pid);
	aggregator_snapshot(a, &s);
	derive_sync_folds(o, &s);
	derive_check_rows(c, &s, o, tid, pid, split);
	oracle_close_window(o);
	snapshot_free(&s);
}
