/* test_more_frames.c - the consumer's side of a deep stack's marker frame
 * (REC_MORE_FRAMES, record.h): the aggregator counts it as a function row
 * named "[N more frames]" (N exact below 100, else rounded down to two
 * significant digits with a '+', so that stacks of nearby depths share a
 * row), with a Total like any frame, no line row, and the functions
 * outside it (module, main) keep theirs. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "profile/aggregator.h"
#include "transport/record.h"

static uint64_t buf[512];

static void define(struct aggregator *a, uint32_t id, const char *qual, int first)
{
	struct rec_code_def *c = (struct rec_code_def *)buf;
	size_t ql = strlen(qual), fl = strlen("/m.py");

	memset(buf, 0, sizeof buf);
	memcpy(c->data, qual, ql);
	memcpy(c->data + ql, "/m.py", fl);
	c->h = (struct rec_header){ REC_CODE_DEF, REC_ALIGN((uint32_t)(sizeof *c + ql + fl)) };
	c->code_id = id;
	c->firstlineno = first;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = (uint16_t)fl;
	aggregator_ingest(a, buf, c->h.size);
}

/* leaf, marker counting n, main, <module>: the shape of a cut stack. */
static void deep_sample(struct aggregator *a, int32_t n)
{
	struct rec_sample *s = (struct rec_sample *)buf;
	const struct rec_frame f[] = { { 3, 0 }, { REC_MORE_FRAMES, n }, { 2, 0 }, { 1, 0 } };

	memset(buf, 0, sizeof buf);
	s->h = (struct rec_header){ REC_SAMPLE, (uint32_t)(sizeof *s + sizeof f) };
	s->interval_ns = 1000000;
	s->tid = 7;
	s->pid = 7;
	s->nframes = 4;
	s->flags = SAMPLE_RUNNING | SAMPLE_TRUNCATED;
	memcpy(s->frames, f, sizeof f);
	aggregator_ingest(a, buf, s->h.size);
}

static const struct snap_func *func(const struct snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (strcmp(s->funcs[i].name, name) == 0)
			return &s->funcs[i];
	return NULL;
}

Test(more_frames, marker_rows_by_rounded_count)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s;

	cr_assert_not_null(a);
	define(a, 1, "<module>", 1);
	define(a, 2, "main", 5);
	define(a, 3, "recurse", 9);
	deep_sample(a, 57);
	deep_sample(a, 2954);
	deep_sample(a, 2960);
	deep_sample(a, 2999);
	deep_sample(a, 3000);
	cr_assert_eq(aggregator_bad(a), 0, "%lu records refused",
	             (unsigned long)aggregator_bad(a));
	memset(&s, 0, sizeof s);
	aggregator_snapshot(a, &s);
	const struct snap_func *m57 = func(&s, "[57 more frames]");
	const struct snap_func *m29 = func(&s, "[2900+ more frames]");
	const struct snap_func *m30 = func(&s, "[3000+ more frames]");
	cr_assert(m57 && m29 && m30, "marker rows missing (%zu rows)", s.nfuncs);
	cr_expect_eq(m57->c.total, 1);
	cr_expect_eq(m29->c.total, 3, "2954, 2960 and 2999 share a row");
	cr_expect_eq(m30->c.total, 1);
	cr_expect_eq(m29->c.own, 0, "a marker is never the leaf");
	cr_expect_str_eq(m29->file, "");
	cr_expect_eq(m29->line, 0);
	cr_expect_eq(func(&s, "<module>")->c.total, 5, "the outermost keep their Total");
	cr_expect_eq(func(&s, "main")->c.total, 5);
	cr_expect_eq(func(&s, "recurse")->c.own, 5);
	for (size_t i = 0; i < s.nlines; i++)
		cr_expect_str_neq(s.lines[i].file, "", "a line row for a marker: line %d",
		                  s.lines[i].line);
	snapshot_free(&s);
	aggregator_free(a);
}

Test(more_frames, a_marker_without_a_count_is_refused)
{
	struct aggregator *a = aggregator_new(true);

	cr_assert_not_null(a);
	define(a, 1, "<module>", 1);
	define(a, 2, "main", 5);
	define(a, 3, "recurse", 9);
	deep_sample(a, 0);
	deep_sample(a, -5);
	cr_expect_eq(aggregator_bad(a), 2, "%lu refused", (unsigned long)aggregator_bad(a));
	aggregator_free(a);
}
