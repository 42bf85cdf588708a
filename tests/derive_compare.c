/* derive_compare.c - see derive_compare.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "derive_compare.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "profile/aggregator_priv.h"

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

void derive_expect_split(const struct derive_cmp *c, const char *what, const char *name,
                         const struct snap_split *x, const struct snap_split *y)
{
	DERIVE_CHECK(c, derive_near(x->python, y->python) && derive_near(x->native, y->native) &&
	             derive_near(x->system, y->system) && derive_near(x->waiting, y->waiting) &&
	             derive_near(x->cpu_wait, y->cpu_wait) && derive_near(x->gil_wait, y->gil_wait),
	             "%s: %s %s: kinds %.6f %.6f %.6f %.6f %.6f %.6f, %s %.6f %.6f %.6f %.6f "
	             "%.6f %.6f", c->label, what, name, x->python, x->native, x->system,
	             x->waiting, x->cpu_wait, x->gil_wait, c->theirs, y->python, y->native,
	             y->system, y->waiting, y->cpu_wait, y->gil_wait);
	DERIVE_CHECK(c, x->mem_growth == y->mem_growth && x->mem_shrink == y->mem_shrink &&
	             x->minflt == y->minflt && x->majflt == y->majflt,
	             "%s: %s %s: memory %llu/%llu faults %llu/%llu, %s %llu/%llu %llu/%llu",
	             c->label, what, name, (unsigned long long)x->mem_growth,
	             (unsigned long long)x->mem_shrink, (unsigned long long)x->minflt,
	             (unsigned long long)x->majflt, c->theirs, (unsigned long long)y->mem_growth,
	             (unsigned long long)y->mem_shrink, (unsigned long long)y->minflt,
	             (unsigned long long)y->majflt);
}

void derive_expect_counts(const struct derive_cmp *c, const char *what, const char *name,
                          bool total, const struct snap_counts *x,
                          const struct snap_counts *y)
{
	DERIVE_CHECK(c, x->mem_kept == y->mem_kept, "%s: %s %s: kept %lld, %s %lld", c->label,
	             what, name, (long long)x->mem_kept, c->theirs, (long long)y->mem_kept);
	DERIVE_CHECK(c, x->own == y->own && x->own_win == y->own_win &&
	             derive_near(x->own_s, y->own_s),
	             "%s: %s %s: own %llu (window %llu, %.9f s), %s %llu (%llu, %.9f s)",
	             c->label, what, name, (unsigned long long)x->own,
	             (unsigned long long)x->own_win, x->own_s, c->theirs,
	             (unsigned long long)y->own, (unsigned long long)y->own_win, y->own_s);
	if (total)
		DERIVE_CHECK(c, x->total == y->total && x->total_win == y->total_win &&
		             derive_near(x->total_s, y->total_s),
		             "%s: %s %s: total %llu (window %llu, %.9f s), %s %llu (%llu, %.9f s)",
		             c->label, what, name, (unsigned long long)x->total,
		             (unsigned long long)x->total_win, x->total_s, c->theirs,
		             (unsigned long long)y->total, (unsigned long long)y->total_win,
		             y->total_s);
	derive_expect_split(c, what, name, &x->split, &y->split);
	derive_expect_split(c, what, name, &x->split_win, &y->split_win);
}

size_t derive_live_funcs(const struct stack_derived *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nfuncs; i++)
		n += d->funcs[i].c.total > 0;
	return n;
}

size_t derive_live_lines(const struct stack_derived *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nlines; i++)
		n += d->lines[i].c.total > 0;
	return n;
}

const struct snap_func *derive_find_func(const struct stack_derived *d,
                                         const struct snap_func *f)
{
	for (size_t k = 0; k < d->nfuncs; k++)
		if (d->funcs[k].other == f->other && strcmp(d->funcs[k].name, f->name) == 0 &&
		    strcmp(d->funcs[k].file, f->file) == 0)
			return &d->funcs[k];
	return NULL;
}

const struct snap_line *derive_find_line(const struct stack_derived *d,
                                         const struct snap_line *l)
{
	for (size_t k = 0; k < d->nlines; k++)
		if (d->lines[k].other == l->other && strcmp(d->lines[k].file, l->file) == 0 &&
		    d->lines[k].line == l->line &&
		    /* "[other]" and "[other stacks]" are both ":0" */
		    (!l->other || strcmp(d->lines[k].name, l->name) == 0))
			return &d->lines[k];
	return NULL;
}

static const struct snap_callee *find_callee(const struct stack_derived *d,
                                             const struct snap_callee *c)
{
	for (size_t k = 0; k < d->ncallees; k++)
		if (strcmp(d->callees[k].caller_file, c->caller_file) == 0 &&
		    d->callees[k].caller_line == c->caller_line &&
		    strcmp(d->callees[k].name, c->name) == 0 &&
		    strcmp(d->callees[k].file, c->file) == 0)
			return &d->callees[k];
	return NULL;
}

/* --native's callees: each (Python line, native leaf) the rows show. */
static void check_callees(const struct derive_cmp *c, const struct snapshot *s,
                          const struct stack_derived *d)
{
	size_t live = 0;
	for (size_t k = 0; k < d->ncallees; k++)
		live += d->callees[k].c.own > 0;
	DERIVE_CHECK(c, live == s->ncallees, "%s: %zu callees, %s %zu", c->label, s->ncallees,
	             c->theirs, live);
	for (size_t i = 0; i < s->ncallees; i++) {
		const struct snap_callee *x = &s->callees[i], *g = find_callee(d, x);
		cr_assert_not_null(g, "%s: no %s callee %s under %s:%d", c->label, c->theirs,
		                   x->name, x->caller_file, x->caller_line);
		DERIVE_CHECK(c, g->line == x->line && strcmp(g->module, x->module) == 0,
		             "%s: callee %s: line %d module %s, %s %d %s", c->label, x->name,
		             x->line, x->module, c->theirs, g->line, g->module);
		derive_expect_counts(c, "callee", x->name, true, &x->c, &g->c);
	}
}

static void check_funcs(const struct derive_cmp *c, const struct snapshot *s,
                        const struct stack_derived *d)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct snap_func *f = &s->funcs[i], *g = derive_find_func(d, f);
		cr_assert_not_null(g, "%s: no %s %s %s", c->label, c->theirs, f->name, f->file);
		if (c->first_line)
			DERIVE_CHECK(c, g->line == f->line, "%s: %s: first line %d, %s %d",
			             c->label, f->name, f->line, c->theirs, g->line);
		DERIVE_CHECK(c, g->native == f->native, "%s: %s: native %d, %s %d", c->label,
		             f->name, f->native, c->theirs, g->native);
		derive_expect_counts(c, "function", f->name, c->exact_other || !f->other, &f->c,
		                     &g->c);
	}
}

static void check_lines(const struct derive_cmp *c, const struct snapshot *s,
                        const struct stack_derived *d)
{
	for (size_t i = 0; i < s->nlines; i++) {
		const struct snap_line *l = &s->lines[i], *g = derive_find_line(d, l);
		cr_assert_not_null(g, "%s: no %s %s:%d", c->label, c->theirs, l->file, l->line);
		DERIVE_CHECK(c, strcmp(g->name, l->name) == 0, "%s: %s:%d named %s, %s %s",
		             c->label, l->file, l->line, l->name, c->theirs, g->name);
		derive_expect_counts(c, "line", l->file, c->exact_other || !l->other, &l->c,
		                     &g->c);
	}
}

void derive_check_rows(const struct derive_cmp *c, const struct snapshot *s,
                       const struct stack_derived *d)
{
	DERIVE_CHECK(c, d->samples == s->samples, "%s: samples %llu, %s %llu", c->label,
	             (unsigned long long)s->samples, c->theirs, (unsigned long long)d->samples);
	DERIVE_CHECK(c, derive_live_funcs(d) == s->nfuncs, "%s: %zu functions, %s %zu",
	             c->label, s->nfuncs, c->theirs, derive_live_funcs(d));
	DERIVE_CHECK(c, derive_live_lines(d) == s->nlines, "%s: %zu lines, %s %zu", c->label,
	             s->nlines, c->theirs, derive_live_lines(d));
	check_funcs(c, s, d);
	check_lines(c, s, d);
	check_callees(c, s, d);
}

void derive_check_aggregator(struct aggregator *a, pid_t tid, pid_t pid, bool exact_other)
{
	struct snapshot s = { 0 };
	struct stack_derived d;
	char label[64];
	snprintf(label, sizeof label, "tid %d pid %d", tid, pid);
	const struct derive_cmp c = { .label = label, .theirs = "derived",
	                              .exact_other = exact_other, .first_line = true };
	aggregator_filter_thread(a, tid);
	aggregator_filter_process(a, pid);
	agg_snapshot_counted(a, &s); /* the row counters against the stacks */
	cr_assert(stack_derive(&s, tid, tid ? 0 : pid, &d));
	derive_check_rows(&c, &s, &d);
	stack_derived_free(&d);
	snapshot_free(&s);
}
