/* test_aggregator.c - hand-built records in, exact counters out. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "profile/aggregator.h"
#include "profile/aggregator_priv.h"
#include "tap_note.h"
#include "transport/record.h"

/* ---- record builders ----------------------------------------------------- */

/* Big enough for any record the tests build; uint64_t keeps it aligned. */
static uint64_t recbuf[(sizeof(struct rec_sample) +
                        65535 * sizeof(struct rec_frame)) / 8 + 64];

/* A line table where code unit i is on lines[i] (-1: no location): one
 * entry per unit, code 13 (line delta, no columns) or 15 (none). */
static size_t mk_table(uint8_t *out, int first, const int *lines, int n)
{
	size_t len = 0;
	int cur = first;
	for (int i = 0; i < n; i++) {
		if (lines[i] < 0) {
			out[len++] = 0x80 | 15 << 3;
			continue;
		}
		int d = lines[i] - cur;
		uint32_t u = d < 0 ? (uint32_t)-d << 1 | 1 : (uint32_t)d << 1;
		out[len++] = 0x80 | 13 << 3;
		do {
			out[len++] = (uint8_t)((u & 63) | (u > 63 ? 64 : 0));
			u >>= 6;
		} while (u);
		cur = lines[i];
	}
	return len;
}

static size_t mk_code(void *buf, uint32_t id, const char *qual,
                      const char *file, int first, const int *lines, int n)
{
	struct rec_code_def *c = buf;
	size_t ql = strlen(qual), fl = strlen(file);
	memcpy(c->data, qual, ql);
	memcpy(c->data + ql, file, fl);
	size_t tl = lines ? mk_table((uint8_t *)c->data + ql + fl, first,
	                             lines, n) : 0;
	c->h.type = REC_CODE_DEF;
	c->h.size = REC_ALIGN((uint32_t)(sizeof *c + ql + fl + tl));
	c->code_id = id;
	c->firstlineno = first;
	c->qualname_len = (uint16_t)ql;
	c->filename_len = (uint16_t)fl;
	c->linetable_len = (uint32_t)tl;
	return c->h.size;
}

static size_t mk_sample(void *buf, int tid, uint16_t flags,
                        uint32_t interval_ns, const struct rec_frame *f,
                        uint16_t n)
{
	struct rec_sample *s = buf;
	memset(s, 0, sizeof *s);
	s->h.type = REC_SAMPLE;
	s->h.size = (uint32_t)(sizeof *s + n * sizeof *f);
	s->interval_ns = interval_ns;
	s->tid = tid;
	s->nframes = n;
	s->flags = flags;
	if (n)
		memcpy(s->frames, f, n * sizeof *f);
	return s->h.size;
}

static size_t mk_thread(void *buf, int tid, const char *name)
{
	struct rec_thread *t = buf;
	memset(t, 0, sizeof *t);
	t->h.type = REC_THREAD;
	t->h.size = sizeof *t;
	t->tid = tid;
	strncpy(t->name, name, sizeof t->name);
	return t->h.size;
}

/* One thread's entry in a REC_THREADS record. */
struct ts {
	int tid;
	char state;
	uint8_t flags;
	uint64_t utime_ms, stime_ms;
};

static size_t mk_threads(void *buf, uint64_t time_ms, const struct ts *t,
                         uint32_t n)
{
	struct rec_threads *r = buf;
	memset(r, 0, sizeof *r);
	r->h.type = REC_THREADS;
	r->h.size = (uint32_t)(sizeof *r + n * sizeof r->threads[0]);
	r->time_ns = time_ms * 1000000u;
	r->nthreads = n;
	for (uint32_t i = 0; i < n; i++)
		r->threads[i] = (struct rec_thread_state){
			.tid = t[i].tid, .state = t[i].state,
			.flags = t[i].flags,
			.utime_ns = t[i].utime_ms * 1000000u,
			.stime_ns = t[i].stime_ms * 1000000u,
		};
	return r->h.size;
}

/* ---- fixture: four code objects with known lines ------------------------- */

static struct aggregator *agg;
static struct snapshot snap;

enum { CODE_A = 1, CODE_B = 2, CODE_C = 3, CODE_A2 = 4, CODE_X = 5,
       CODE_Y = 6, CODE_Z = 7, CODE_W = 8 };
#define MS 1000000u /* 1 ms in ns */

static void define(uint32_t id, const char *qual, const char *file,
                   int first, const int *lines, int n)
{
	size_t len = mk_code(recbuf, id, qual, file, first, lines, n);
	aggregator_ingest(agg, recbuf, len);
}

static void setup(void)
{
	agg = aggregator_new(true);
	cr_assert_not_null(agg);
	memset(&snap, 0, sizeof snap);
	static const int la[] = { 11, 12, 13, 14 };
	static const int lb[] = { 21, 22, 23 };
	static const int la2[] = { 41, -1 };
	define(CODE_A, "a", "m.py", 10, la, 4);
	define(CODE_B, "b", "m.py", 20, lb, 3);
	define(CODE_C, "C.c", "n.py", 30, NULL, 0); /* no table */
	define(CODE_A2, "a", "m.py", 40, la2, 2);   /* same function key */
	cr_assert_eq(aggregator_bad(agg), 0);
}

static void teardown(void)
{
	snapshot_free(&snap);
	aggregator_free(agg);
}

TestSuite(aggregator, .init = setup, .fini = teardown);

/* Stack given leaf first, as (code, byte offset) pairs. */
#define F(code, off) ((struct rec_frame){ (code), (off) })

static void sample(int tid, uint16_t flags, uint32_t ns,
                   const struct rec_frame *f, uint16_t n)
{
	size_t len = mk_sample(recbuf, tid, flags, ns, f, n);
	aggregator_ingest(agg, recbuf, len);
}

#define SAMPLE(tid, flags, ns, ...)                                         \
	do {                                                                \
		const struct rec_frame fr_[] = { __VA_ARGS__ };             \
		sample((tid), (flags), (ns), fr_,                           \
		       (uint16_t)(sizeof fr_ / sizeof fr_[0]));             \
	} while (0)

static void take(void)
{
	snapshot_free(&snap);
	aggregator_snapshot(agg, &snap);
}

static const struct snap_func *func(const char *name)
{
	for (size_t i = 0; i < snap.nfuncs; i++)
		if (strcmp(snap.funcs[i].name, name) == 0)
			return &snap.funcs[i];
	return NULL;
}

static const struct snap_line *line(const char *file, int ln)
{
	for (size_t i = 0; i < snap.nlines; i++)
		if (strcmp(snap.lines[i].file, file) == 0 &&
		    snap.lines[i].line == ln)
			return &snap.lines[i];
	return NULL;
}

static const struct snap_thread *thread(int tid)
{
	for (size_t i = 0; i < snap.nthreads; i++)
		if (snap.threads[i].tid == tid)
			return &snap.threads[i];
	return NULL;
}

static void expect_counts(const struct snap_counts *c, uint64_t own,
                          uint64_t total, uint64_t own_win,
                          uint64_t total_win, const char *what)
{
	cr_assert_not_null(c, "%s missing", what);
	cr_expect_eq(c->own, own, "%s own %lu want %lu", what,
	             (unsigned long)c->own, (unsigned long)own);
	cr_expect_eq(c->total, total, "%s total %lu want %lu", what,
	             (unsigned long)c->total, (unsigned long)total);
	cr_expect_eq(c->own_win, own_win, "%s own_win %lu want %lu", what,
	             (unsigned long)c->own_win, (unsigned long)own_win);
	cr_expect_eq(c->total_win, total_win, "%s total_win %lu want %lu",
	             what, (unsigned long)c->total_win,
	             (unsigned long)total_win);
}

/* A REC_THREADS at time_ms listing the given threads. */
#define REPORT(time_ms, ...)                                                \
	do {                                                                \
		const struct ts ts_[] = { __VA_ARGS__ };                    \
		aggregator_ingest(agg, recbuf,                              \
		                  mk_threads(recbuf, (time_ms), ts_,        \
		                             sizeof ts_ / sizeof ts_[0]));  \
	} while (0)

#define FUNC_C(name) (func(name) ? &func(name)->c : NULL)
#define LINE_C(file, ln) (line(file, ln) ? &line(file, ln)->c : NULL)

/* ---- counting ------------------------------------------------------------ */

Test(aggregator, leaf_is_own_every_frame_is_total)
{
	SAMPLE(1, SAMPLE_RUNNING, 2 * MS, F(CODE_B, 2), F(CODE_A, 0));
	take();
	cr_expect_eq(snap.samples, 1);
	cr_expect_eq(snap.samples_win, 1);
	cr_assert_eq(snap.nfuncs, 2);
	expect_counts(FUNC_C("b"), 1, 1, 1, 1, "b");
	expect_counts(FUNC_C("a"), 0, 1, 0, 1, "a");
	cr_expect_str_eq(snap.funcs[0].name, "b"); /* own first */
	cr_expect_str_eq(func("b")->file, "m.py");
	cr_expect_eq(func("b")->line, 20);
	cr_assert_eq(snap.nlines, 2);
	expect_counts(LINE_C("m.py", 22), 1, 1, 1, 1, "m.py:22");
	expect_counts(LINE_C("m.py", 11), 0, 1, 0, 1, "m.py:11");
	cr_expect_str_eq(line("m.py", 22)->name, "b");
	cr_expect_float_eq(func("b")->c.own_s, 0.002, 1e-12);
	cr_expect_float_eq(func("a")->c.own_s, 0.0, 1e-12);
	cr_expect_float_eq(func("a")->c.total_s, 0.002, 1e-12);
}

Test(aggregator, recursion_counts_once_per_sample)
{
	/* a -> b -> a -> b, same call sites: lines repeat too. */
	SAMPLE(1, 0, MS, F(CODE_B, 2), F(CODE_A, 4), F(CODE_B, 2),
	       F(CODE_A, 4));
	/* Same functions, each level on a different line. */
	SAMPLE(1, 0, MS, F(CODE_B, 0), F(CODE_A, 2), F(CODE_B, 4),
	       F(CODE_A, 6));
	take();
	cr_expect_eq(snap.samples, 2);
	expect_counts(FUNC_C("b"), 2, 2, 2, 2, "b");
	expect_counts(FUNC_C("a"), 0, 2, 0, 2, "a");
	cr_expect_float_eq(func("a")->c.total_s, 0.002, 1e-12);
	expect_counts(LINE_C("m.py", 22), 1, 1, 1, 1, "m.py:22");
	expect_counts(LINE_C("m.py", 13), 0, 1, 0, 1, "m.py:13");
	expect_counts(LINE_C("m.py", 21), 1, 1, 1, 1, "m.py:21");
	expect_counts(LINE_C("m.py", 12), 0, 1, 0, 1, "m.py:12");
	expect_counts(LINE_C("m.py", 23), 0, 1, 0, 1, "m.py:23");
	expect_counts(LINE_C("m.py", 14), 0, 1, 0, 1, "m.py:14");
	cr_expect_eq(snap.nlines, 6);
}

Test(aggregator, codes_with_same_name_and_file_share_a_row)
{
	SAMPLE(1, 0, MS, F(CODE_A2, 0), F(CODE_A, 0));
	take();
	cr_assert_eq(snap.nfuncs, 1);
	expect_counts(FUNC_C("a"), 1, 1, 1, 1, "a");
	cr_expect_eq(func("a")->line, 10); /* the smaller first line */
	expect_counts(LINE_C("m.py", 41), 1, 1, 1, 1, "m.py:41");
	expect_counts(LINE_C("m.py", 11), 0, 1, 0, 1, "m.py:11");
}

Test(aggregator, line_falls_back_to_first_line)
{
	SAMPLE(1, 0, MS, F(CODE_C, 6));   /* no table at all */
	SAMPLE(1, 0, MS, F(CODE_A, 100)); /* beyond the table */
	SAMPLE(1, 0, MS, F(CODE_A, -2));  /* frame not started */
	SAMPLE(1, 0, MS, F(CODE_A2, 2));  /* no-location entry */
	take();
	expect_counts(LINE_C("n.py", 30), 1, 1, 1, 1, "n.py:30");
	expect_counts(LINE_C("m.py", 10), 2, 2, 2, 2, "m.py:10");
	expect_counts(LINE_C("m.py", 40), 1, 1, 1, 1, "m.py:40");
	cr_expect_eq(snap.nlines, 3);
}

Test(aggregator, same_line_number_in_two_files_is_two_rows)
{
	static const int lx[] = { 21 };
	define(CODE_X, "x", "other.py", 21, lx, 1);
	SAMPLE(1, 0, MS, F(CODE_X, 0), F(CODE_B, 0));
	take();
	expect_counts(LINE_C("other.py", 21), 1, 1, 1, 1, "other.py:21");
	expect_counts(LINE_C("m.py", 21), 0, 1, 0, 1, "m.py:21");
}

Test(aggregator, windows_close_at_each_snapshot)
{
	SAMPLE(1, 0, MS, F(CODE_B, 0), F(CODE_A, 0));
	SAMPLE(1, 0, MS, F(CODE_A, 0));
	take();
	expect_counts(FUNC_C("a"), 1, 2, 1, 2, "a #1");
	cr_expect_eq(snap.samples_win, 2);
	SAMPLE(1, 0, MS, F(CODE_B, 0));
	take();
	expect_counts(FUNC_C("a"), 1, 2, 0, 0, "a #2");
	expect_counts(FUNC_C("b"), 2, 2, 1, 1, "b #2");
	expect_counts(LINE_C("m.py", 21), 2, 2, 1, 1, "m.py:21 #2");
	cr_expect_eq(snap.samples, 3);
	cr_expect_eq(snap.samples_win, 1);
	take();
	expect_counts(FUNC_C("b"), 2, 2, 0, 0, "b #3");
	cr_expect_eq(snap.samples, 3);
	cr_expect_eq(snap.samples_win, 0);
	cr_expect_eq(thread(1)->samples, 3);
	cr_expect_eq(thread(1)->samples_win, 0);
}

Test(aggregator, sorted_by_own_then_total_then_name)
{
	/* own/total: y 2/3, x 2/2, b 1/1, w 1/1, z 0/3 */
	static const int l1[] = { 1 };
	define(CODE_X, "x", "s.py", 1, l1, 1);
	define(CODE_Y, "y", "s.py", 1, l1, 1);
	define(CODE_Z, "z", "s.py", 1, l1, 1);
	define(CODE_W, "w", "t.py", 1, l1, 1);
	SAMPLE(1, 0, MS, F(CODE_Y, 0), F(CODE_Z, 0));
	SAMPLE(1, 0, MS, F(CODE_Y, 0), F(CODE_Z, 0));
	SAMPLE(1, 0, MS, F(CODE_X, 0), F(CODE_Y, 0), F(CODE_Z, 0));
	SAMPLE(1, 0, MS, F(CODE_X, 0));
	SAMPLE(1, 0, MS, F(CODE_W, 0));
	SAMPLE(1, 0, MS, F(CODE_B, 0)); /* ties w: 1/1, "b" < "w" */
	take();
	static const char *order[] = { "y", "x", "b", "w", "z" };
	cr_assert_eq(snap.nfuncs, 5);
	for (size_t i = 0; i < 5; i++)
		cr_expect_str_eq(snap.funcs[i].name, order[i], "rank %zu", i);
	/* Lines: s.py:1 own 4 total 4; m.py:21 and t.py:1 tie at 1/1. */
	cr_assert_eq(snap.nlines, 3);
	cr_expect_str_eq(snap.lines[0].file, "s.py");
	expect_counts(&snap.lines[0].c, 4, 4, 4, 4, "s.py:1");
	cr_expect_str_eq(snap.lines[1].file, "m.py");
	cr_expect_str_eq(snap.lines[2].file, "t.py");
}

Test(aggregator, reset_forgets_counts_but_keeps_codes)
{
	aggregator_ingest(agg, recbuf, mk_thread(recbuf, 7, "worker"));
	SAMPLE(7, 0, MS, F(CODE_B, 0), F(CODE_A, 0));
	aggregator_reset(agg);
	take();
	cr_expect_eq(snap.nfuncs, 0);
	cr_expect_eq(snap.nlines, 0);
	cr_expect_eq(snap.nthreads, 0);
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.samples_win, 0);
	/* No CODE_DEF again: the definitions survived. */
	SAMPLE(7, 0, MS, F(CODE_A, 2));
	take();
	cr_expect_eq(aggregator_bad(agg), 0);
	cr_expect_eq(snap.samples, 1);
	cr_assert_eq(snap.nfuncs, 1);
	expect_counts(FUNC_C("a"), 1, 1, 1, 1, "a");
	cr_assert_eq(snap.nlines, 1);
	expect_counts(LINE_C("m.py", 12), 1, 1, 1, 1, "m.py:12");
	cr_assert_eq(snap.nthreads, 1);
	cr_expect_str_eq(thread(7)->name, "worker");
	cr_expect_eq(thread(7)->samples, 1);
}

Test(aggregator, threads_names_running_and_top_func)
{
	aggregator_ingest(agg, recbuf, mk_thread(recbuf, 100, "worker"));
	SAMPLE(100, SAMPLE_RUNNING, MS, F(CODE_B, 0), F(CODE_A, 0));
	SAMPLE(42, 0, MS, F(CODE_A, 0));
	take();
	cr_assert_eq(snap.nthreads, 2);
	cr_expect_eq(snap.threads[0].tid, 42); /* by tid */
	cr_expect_str_eq(thread(42)->name, "");
	cr_expect_str_eq(thread(42)->top_func, "a");
	cr_expect_not(thread(42)->running);
	cr_expect_str_eq(thread(100)->name, "worker");
	cr_expect_str_eq(thread(100)->top_func, "b");
	cr_expect(thread(100)->running);
	cr_expect_eq(thread(100)->samples, 1);
	cr_expect_eq(thread(100)->samples_win, 1);

	/* No Python frame: counts for the thread, not in samples. */
	sample(100, SAMPLE_RUNNING, MS, NULL, 0);
	aggregator_ingest(agg, recbuf, mk_thread(recbuf, 100, "renamed"));
	/* A full 16-byte name without NUL must not be over-read. */
	struct rec_thread *t = (struct rec_thread *)recbuf;
	mk_thread(recbuf, 42, "");
	memset(t->name, 'n', sizeof t->name);
	aggregator_ingest(agg, recbuf, sizeof *t);
	take();
	cr_expect_eq(snap.samples, 2);
	cr_expect_eq(snap.samples_win, 0);
	cr_expect_eq(thread(100)->samples, 2);
	cr_expect_eq(thread(100)->samples_win, 1);
	cr_expect_str_eq(thread(100)->top_func, "");
	cr_expect(thread(100)->running);
	cr_expect_str_eq(thread(100)->name, "renamed");
	cr_expect_str_eq(thread(42)->name, "nnnnnnnnnnnnnnnn");
	expect_counts(FUNC_C("b"), 1, 1, 0, 0, "b");
	cr_expect_eq(aggregator_bad(agg), 0);
}

Test(aggregator, thread_record_alone_makes_a_row)
{
	aggregator_ingest(agg, recbuf, mk_thread(recbuf, 9, "idle"));
	take();
	cr_assert_eq(snap.nthreads, 1);
	cr_expect_str_eq(snap.threads[0].name, "idle");
	cr_expect_eq(snap.threads[0].samples, 0);
	cr_expect_str_eq(snap.threads[0].top_func, "");
	cr_expect_eq(snap.samples, 0);
}

Test(aggregator, unknown_code_drops_the_whole_sample)
{
	SAMPLE(1, 0, MS, F(CODE_A, 0), F(99, 0));
	SAMPLE(2, 0, MS, F(99, 0));
	cr_expect_eq(aggregator_bad(agg), 2);
	take();
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.nfuncs, 0);
	cr_expect_eq(snap.nlines, 0);
	cr_expect_eq(snap.nthreads, 0);
	/* Once its CODE_DEF arrives the same frame resolves. */
	static const int l[] = { 5 };
	define(99, "late", "l.py", 5, l, 1);
	SAMPLE(2, 0, MS, F(99, 0));
	take();
	cr_expect_eq(aggregator_bad(agg), 2);
	expect_counts(FUNC_C("late"), 1, 1, 1, 1, "late");
}

Test(aggregator, duplicate_code_def_keeps_the_first)
{
	static const int l[] = { 99 };
	define(CODE_A, "impostor", "m.py", 98, l, 1);
	cr_expect_eq(aggregator_bad(agg), 0);
	SAMPLE(1, 0, MS, F(CODE_A, 0));
	take();
	expect_counts(FUNC_C("a"), 1, 1, 1, 1, "a");
	cr_expect_null(func("impostor"));
	cr_expect_not_null(line("m.py", 11));
}

Test(aggregator, zero_ids_work)
{
	/* code 0 at offset 0 and tid 0 make all-zero hash keys. */
	static const int l[] = { 3, 4 };
	define(0, "zero", "z.py", 3, l, 2);
	SAMPLE(0, SAMPLE_RUNNING, MS, F(0, 0));
	SAMPLE(0, SAMPLE_RUNNING, MS, F(0, 0)); /* frame-cache hit */
	SAMPLE(0, SAMPLE_RUNNING, MS, F(0, 2), F(0, 0));
	take();
	cr_expect_eq(aggregator_bad(agg), 0);
	expect_counts(FUNC_C("zero"), 3, 3, 3, 3, "zero");
	expect_counts(LINE_C("z.py", 3), 2, 3, 2, 3, "z.py:3");
	expect_counts(LINE_C("z.py", 4), 1, 1, 1, 1, "z.py:4");
	cr_assert_eq(snap.nthreads, 1);
	cr_expect_eq(thread(0)->samples, 3);
}

/* ---- thread states, CPU and the GIL --------------------------------------- */

#define GIL SAMPLE_HAS_GIL
#define WAIT SAMPLE_GIL_WAIT

Test(aggregator, thread_state_from_the_latest_report)
{
	REPORT(0, { 11, 'R', GIL, 0, 0 }, { 12, 'R', 0, 0, 0 },
	       { 13, 'S', WAIT, 0, 0 }, { 14, 'S', 0, 0, 0 },
	       { 15, 'D', GIL, 0, 0 }, { 16, 0, 0, 0, 0 },
	       { 17, 'R', GIL | WAIT, 0, 0 });
	take();
	cr_assert_eq(snap.nthreads, 7);
	cr_expect_eq(thread(11)->state, THREAD_RUNNING_GIL);
	cr_expect_eq(thread(12)->state, THREAD_RUNNING);
	cr_expect_eq(thread(13)->state, THREAD_GIL_WAIT);
	cr_expect_eq(thread(14)->state, THREAD_IDLE);
	/* Off CPU holding the GIL (blocked without releasing it): idle. */
	cr_expect_eq(thread(15)->state, THREAD_IDLE);
	cr_expect_eq(thread(16)->state, THREAD_IDLE);
	cr_expect_eq(thread(17)->state, THREAD_RUNNING_GIL);
	cr_expect_eq(thread(11)->os_state, 'R');
	cr_expect_eq(thread(15)->os_state, 'D');
	cr_expect_eq(thread(16)->os_state, 0);
	/* The next report changes every state at once. */
	REPORT(100, { 11, 'S', 0, 0, 0 }, { 12, 'R', GIL, 0, 0 },
	       { 13, 'R', 0, 0, 0 }, { 14, 'S', WAIT, 0, 0 },
	       { 15, 'S', 0, 0, 0 }, { 16, 'R', 0, 0, 0 },
	       { 17, 'S', 0, 0, 0 });
	take();
	cr_expect_eq(thread(11)->state, THREAD_IDLE);
	cr_expect_eq(thread(12)->state, THREAD_RUNNING_GIL);
	cr_expect_eq(thread(13)->state, THREAD_RUNNING);
	cr_expect_eq(thread(14)->state, THREAD_GIL_WAIT);
	cr_expect_eq(thread(16)->state, THREAD_RUNNING);
	cr_expect_eq(aggregator_bad(agg), 0);
}

Test(aggregator, threads_only_reported_get_a_row)
{
	/* An idle thread without --idle is never sampled. */
	aggregator_ingest(agg, recbuf, mk_thread(recbuf, 21, "waiter"));
	REPORT(0, { 20, 'S', 0, 0, 0 }, { 21, 'S', 0, 0, 0 });
	take();
	cr_assert_eq(snap.nthreads, 2);
	cr_expect_eq(snap.threads[0].tid, 20);
	cr_expect_str_eq(thread(20)->name, "");
	cr_expect_str_eq(thread(21)->name, "waiter");
	cr_expect_eq(thread(20)->samples, 0);
	cr_expect_str_eq(thread(20)->top_func, "");
	cr_expect_eq(thread(20)->state, THREAD_IDLE);
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.nfuncs, 0);
}

Test(aggregator, unreported_gone_and_reset)
{
	/* 31 is sampled before any report: state unknown. */
	SAMPLE(31, SAMPLE_RUNNING, MS, F(CODE_A, 0));
	take();
	cr_expect_eq(thread(31)->state, THREAD_UNKNOWN);
	REPORT(0, { 30, 'R', GIL, 0, 0 }, { 31, 'S', 0, 0, 0 });
	SAMPLE(31, 0, MS, F(CODE_B, 0));
	/* 32 starts between two reports. */
	SAMPLE(32, SAMPLE_RUNNING, MS, F(CODE_B, 0));
	take();
	cr_expect_eq(thread(31)->state, THREAD_IDLE);
	cr_expect_eq(thread(32)->state, THREAD_UNKNOWN);
	/* 31 ends: the next report leaves it out.  Its row stays with its
	 * counts, and its functions stay too. */
	REPORT(100, { 30, 'R', GIL, 0, 0 }, { 32, 'R', 0, 0, 0 });
	take();
	cr_assert_eq(snap.nthreads, 3);
	cr_expect_eq(thread(31)->state, THREAD_GONE);
	cr_expect_eq(thread(31)->samples, 2);
	cr_expect_str_eq(thread(31)->top_func, "b");
	cr_expect_eq(thread(32)->state, THREAD_RUNNING);
	expect_counts(FUNC_C("b"), 2, 2, 0, 0, "b");
	/* Only a reset drops gone threads; listed ones stay, zeroed, with
	 * their state. */
	aggregator_reset(agg);
	take();
	cr_assert_eq(snap.nthreads, 2);
	cr_expect_null(thread(31));
	cr_expect_eq(thread(30)->state, THREAD_RUNNING_GIL);
	cr_expect_eq(thread(32)->state, THREAD_RUNNING);
	cr_expect_eq(thread(32)->samples, 0);
	cr_expect_eq(thread(32)->samples_win, 0);
	/* The kept rows are still found by tid. */
	SAMPLE(32, 0, MS, F(CODE_A, 0));
	take();
	cr_assert_eq(snap.nthreads, 2);
	cr_expect_eq(thread(32)->samples, 1);
	cr_expect_eq(aggregator_bad(agg), 0);
}

Test(aggregator, cpu_and_gil_per_window)
{
	/* Window 1: reports at 0, 100 and 200 ms.  40 runs 50 ms user and
	 * 10 ms sys per 100 ms; 41 first shows up at 100 ms (its first
	 * report is its start); 40 holds the GIL in two of three reports,
	 * 41 in one. */
	REPORT(0, { 40, 'R', GIL, 1000, 500 });
	REPORT(100, { 40, 'R', GIL, 1050, 510 }, { 41, 'R', 0, 7000, 0 });
	REPORT(200, { 40, 'R', 0, 1100, 520 }, { 41, 'R', GIL, 7040, 4 });
	take();
	cr_expect_float_eq(thread(40)->cpu_user_pct, 50.0, 1e-9);
	cr_expect_float_eq(thread(40)->cpu_sys_pct, 10.0, 1e-9);
	cr_expect_float_eq(thread(41)->cpu_user_pct, 20.0, 1e-9);
	cr_expect_float_eq(thread(41)->cpu_sys_pct, 2.0, 1e-9);
	cr_expect_float_eq(thread(40)->gil_pct, 200.0 / 3, 1e-9);
	cr_expect_float_eq(thread(41)->gil_pct, 100.0 / 3, 1e-9);
	/* Window 2 starts at the 200 ms report: one more report at 250 ms
	 * gives a 50 ms window; 41 is gone, so it ran nothing in it. */
	REPORT(250, { 40, 'R', GIL, 1130, 520 });
	take();
	cr_expect_float_eq(thread(40)->cpu_user_pct, 60.0, 1e-9);
	cr_expect_float_eq(thread(40)->cpu_sys_pct, 0.0, 1e-9);
	cr_expect_float_eq(thread(40)->gil_pct, 100.0, 1e-9);
	cr_expect_eq(thread(41)->state, THREAD_GONE);
	cr_expect_float_eq(thread(41)->cpu_user_pct, 0.0, 1e-9);
	cr_expect_float_eq(thread(41)->gil_pct, 0.0, 1e-9);
	/* No report in a window: the last figures stay. */
	take();
	cr_expect_float_eq(thread(40)->cpu_user_pct, 60.0, 1e-9);
	cr_expect_float_eq(thread(40)->gil_pct, 100.0, 1e-9);
	/* A TID whose CPU time went down names another thread now. */
	REPORT(350, { 40, 'S', 0, 5, 5 });
	take();
	cr_expect_float_eq(thread(40)->cpu_user_pct, 0.0, 1e-9);
	cr_expect_float_eq(thread(40)->cpu_sys_pct, 0.0, 1e-9);
	REPORT(450, { 40, 'S', 0, 25, 15 });
	take();
	cr_expect_float_eq(thread(40)->cpu_user_pct, 20.0, 1e-9);
	cr_expect_float_eq(thread(40)->cpu_sys_pct, 10.0, 1e-9);
	cr_expect_eq(thread(40)->state, THREAD_IDLE);
}

Test(aggregator, first_window_with_one_report_has_no_cpu_yet)
{
	REPORT(500, { 50, 'R', GIL, 900, 100 });
	take();
	cr_expect_float_eq(thread(50)->cpu_user_pct, 0.0, 1e-9);
	cr_expect_float_eq(thread(50)->gil_pct, 100.0, 1e-9);
	REPORT(600, { 50, 'R', GIL, 990, 100 });
	take();
	cr_expect_float_eq(thread(50)->cpu_user_pct, 90.0, 1e-9);
}

Test(aggregator, odd_thread_reports)
{
	/* A TID listed twice counts once; unbound threads (tid <= 0) are
	 * skipped. */
	REPORT(0, { 60, 'R', GIL, 0, 0 }, { 0, 'R', GIL, 0, 0 },
	       { -1, 'R', 0, 0, 0 });
	REPORT(100, { 60, 'R', GIL, 10, 0 }, { 60, 'S', GIL, 99, 0 });
	take();
	cr_assert_eq(snap.nthreads, 1);
	cr_expect_float_eq(thread(60)->gil_pct, 100.0, 1e-9);
	cr_expect_float_eq(thread(60)->cpu_user_pct, 10.0, 1e-9);
	cr_expect_eq(thread(60)->os_state, 'R');
	cr_expect_eq(aggregator_bad(agg), 0);
	/* An empty report: every thread is gone. */
	REPORT(200);
	take();
	cr_expect_eq(thread(60)->state, THREAD_GONE);
	cr_expect_eq(aggregator_bad(agg), 0);
}

/* ---- per-thread functions and lines --------------------------------------- */

Test(aggregator, filter_shows_one_threads_functions_and_lines)
{
	/* Thread 1: b <- a twice, a alone once; thread 2: C.c, and a frame-
	 * less sample; thread 3 recurses a -> b -> a. */
	SAMPLE(1, 0, 2 * MS, F(CODE_B, 2), F(CODE_A, 0));
	SAMPLE(1, 0, 2 * MS, F(CODE_B, 2), F(CODE_A, 0));
	SAMPLE(1, 0, 2 * MS, F(CODE_A, 2));
	SAMPLE(2, 0, MS, F(CODE_C, 0));
	sample(2, 0, MS, NULL, 0);
	SAMPLE(3, 0, MS, F(CODE_A, 0), F(CODE_B, 0), F(CODE_A, 0));
	aggregator_filter_thread(agg, 1);
	take();
	cr_expect_eq(snap.samples, 3);
	cr_expect_eq(snap.samples_win, 3);
	cr_assert_eq(snap.nfuncs, 2);
	cr_expect_str_eq(snap.funcs[0].name, "b");
	expect_counts(FUNC_C("b"), 2, 2, 2, 2, "b in 1");
	expect_counts(FUNC_C("a"), 1, 3, 1, 3, "a in 1");
	cr_expect_float_eq(func("a")->c.total_s, 0.006, 1e-12);
	cr_expect_float_eq(func("a")->c.own_s, 0.002, 1e-12);
	cr_assert_eq(snap.nlines, 3);
	expect_counts(LINE_C("m.py", 22), 2, 2, 2, 2, "m.py:22 in 1");
	expect_counts(LINE_C("m.py", 11), 0, 2, 0, 2, "m.py:11 in 1");
	expect_counts(LINE_C("m.py", 12), 1, 1, 1, 1, "m.py:12 in 1");
	/* Every thread is still listed. */
	cr_expect_eq(snap.nthreads, 3);

	aggregator_filter_thread(agg, 3);
	SAMPLE(3, 0, MS, F(CODE_A, 0));
	take();
	cr_expect_eq(snap.samples, 2);
	cr_expect_eq(snap.samples_win, 1); /* the window closed at the last take */
	expect_counts(FUNC_C("a"), 2, 2, 1, 1, "a in 3: once per sample");
	expect_counts(FUNC_C("b"), 0, 1, 0, 0, "b in 3");
	expect_counts(LINE_C("m.py", 11), 2, 2, 1, 1, "m.py:11 in 3");
	cr_expect_null(func("C.c"));

	aggregator_filter_thread(agg, 2);
	take();
	cr_expect_eq(snap.samples, 1); /* the frameless sample is not one */
	cr_assert_eq(snap.nfuncs, 1);
	expect_counts(FUNC_C("C.c"), 1, 1, 0, 0, "C.c in 2");

	aggregator_filter_thread(agg, 999); /* no such thread */
	take();
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.nfuncs, 0);
	cr_expect_eq(snap.nlines, 0);

	aggregator_filter_thread(agg, 0);
	take();
	cr_expect_eq(snap.samples, 6);
	expect_counts(FUNC_C("a"), 3, 5, 0, 0, "a, all threads");
	cr_expect_eq(aggregator_bad(agg), 0);
}

/* --native: a sample whose leaf is native counts under the innermost
 * Python frame's line and that leaf function. */
enum { NAT_DEFLATE = 0x80000001u, NAT_MEMCPY = 0x80000002u };

static void expect_callee(const struct snap_callee *c, const char *name,
                          uint64_t own, uint64_t own_win)
{
	cr_assert_not_null(c, "no callee %s", name);
	cr_expect_str_eq(c->name, name);
	cr_expect_eq(c->c.own, own, "%s: own %llu, want %llu", name,
	             (unsigned long long)c->c.own, (unsigned long long)own);
	cr_expect_eq(c->c.total, own, "%s: total is own", name);
	cr_expect_eq(c->c.own_win, own_win, "%s: own_win %llu, want %llu", name,
	             (unsigned long long)c->c.own_win,
	             (unsigned long long)own_win);
}

Test(aggregator, native_leaves_count_under_their_python_line)
{
	size_t n;
	const struct snap_callee *c;
	cr_assert(aggregator_define_native(agg, NAT_DEFLATE, "deflate",
	                                   "deflate.c", 100, "libz.so.1"));
	cr_assert(aggregator_define_native(agg, NAT_MEMCPY, "memcpy",
	                                   "libc.so.6", 0, "libc.so.6"));
	/* a:12 calls deflate (3 samples, one of them deeper, in memcpy);
	 * a:13 calls memcpy directly; a Python leaf and a native-only stack
	 * have no callee; b:21, an outer caller, gets none either. */
	for (int i = 0; i < 3; i++)
		SAMPLE(1, 0, MS, F(NAT_DEFLATE, 0), F(CODE_A, 2), F(CODE_B, 0));
	SAMPLE(1, 0, MS, F(NAT_MEMCPY, 0), F(NAT_DEFLATE, 0), F(CODE_A, 2),
	       F(CODE_B, 0));
	SAMPLE(2, 0, MS, F(NAT_MEMCPY, 0), F(CODE_A, 4));
	SAMPLE(2, 0, MS, F(NAT_MEMCPY, 0), F(CODE_A, 4));
	SAMPLE(1, 0, MS, F(CODE_A, 2));
	SAMPLE(3, 0, MS, F(NAT_DEFLATE, 0));
	take();
	cr_expect_eq(aggregator_bad(agg), 0);
	cr_expect_eq(snap.ncallees, 3);
	c = snapshot_callees_of(&snap, "m.py", 12, &n);
	cr_assert_eq(n, 2, "m.py:12 has %zu callees", n);
	expect_callee(&c[0], "deflate", 3, 3);
	cr_expect_str_eq(c[0].module, "libz.so.1");
	cr_expect_str_eq(c[0].file, "deflate.c");
	expect_callee(&c[1], "memcpy", 1, 1);
	c = snapshot_callees_of(&snap, "m.py", 13, &n);
	cr_assert_eq(n, 1);
	expect_callee(&c[0], "memcpy", 2, 2);
	cr_expect_null(snapshot_callees_of(&snap, "m.py", 21, &n));
	cr_expect_eq(n, 0);
	cr_expect_null(snapshot_callees_of(&snap, "m.py", 11, &n));

	/* Windows close; the thread filter applies. */
	SAMPLE(2, 0, MS, F(NAT_MEMCPY, 0), F(CODE_A, 4));
	aggregator_filter_thread(agg, 2);
	take();
	cr_expect_eq(snap.ncallees, 1, "thread 2 only called memcpy from a:13");
	c = snapshot_callees_of(&snap, "m.py", 13, &n);
	cr_assert_eq(n, 1);
	expect_callee(&c[0], "memcpy", 3, 1);
	aggregator_filter_thread(agg, 1);
	take();
	cr_expect_eq(snap.ncallees, 2);
	cr_expect_null(snapshot_callees_of(&snap, "m.py", 13, &n));

	aggregator_filter_thread(agg, 0);
	aggregator_reset(agg);
	take();
	cr_expect_eq(snap.ncallees, 0, "a reset forgets the callees' counts");
	SAMPLE(1, 0, MS, F(NAT_DEFLATE, 0), F(CODE_A, 2));
	take();
	c = snapshot_callees_of(&snap, "m.py", 12, &n);
	cr_assert_eq(n, 1);
	expect_callee(&c[0], "deflate", 1, 1);
}

Test(aggregator, threads_sharing_functions_keep_their_own_counts)
{
	/* Alternating threads on the same rows (the per-row cache of the
	 * last thread misses every time). */
	for (int i = 0; i < 10; i++) {
		SAMPLE(1, 0, MS, F(CODE_B, 0), F(CODE_A, 0));
		SAMPLE(2, 0, MS, F(CODE_A, 0));
		SAMPLE(2, 0, MS, F(CODE_A, 0));
	}
	aggregator_filter_thread(agg, 1);
	take();
	expect_counts(FUNC_C("a"), 0, 10, 0, 10, "a in 1");
	expect_counts(FUNC_C("b"), 10, 10, 10, 10, "b in 1");
	aggregator_filter_thread(agg, 2);
	take();
	expect_counts(FUNC_C("a"), 20, 20, 0, 0, "a in 2");
	cr_expect_null(func("b"));
	cr_expect_eq(snap.samples, 20);
}

Test(aggregator, filter_survives_reset_counts_do_not)
{
	REPORT(0, { 1, 'R', GIL, 0, 0 });
	SAMPLE(1, 0, MS, F(CODE_B, 0), F(CODE_A, 0));
	aggregator_filter_thread(agg, 1);
	aggregator_reset(agg);
	take();
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.nfuncs, 0);
	SAMPLE(1, 0, MS, F(CODE_A, 0));
	SAMPLE(2, 0, MS, F(CODE_B, 0));
	take();
	cr_expect_eq(snap.samples, 1);
	cr_assert_eq(snap.nfuncs, 1);
	expect_counts(FUNC_C("a"), 1, 1, 1, 1, "a in 1 after reset");
}

/* ---- malformed input ----------------------------------------------------- */

static uint64_t bad_after(const void *rec, size_t len)
{
	uint64_t before = aggregator_bad(agg);
	aggregator_ingest(agg, rec, len);
	return aggregator_bad(agg) - before;
}

Test(aggregator, truncated_and_garbage_records_are_bad)
{
	static uint64_t raw[64];
	struct rec_header *h = (struct rec_header *)raw;

	cr_expect_eq(bad_after(NULL, 0), 1);
	cr_expect_eq(bad_after(raw, 0), 1);
	cr_expect_eq(bad_after(raw, 4), 1);
	*h = (struct rec_header){ .type = REC_SAMPLE, .size = 64 };
	cr_expect_eq(bad_after(raw, 32), 1, "size beyond len");
	*h = (struct rec_header){ .type = REC_SAMPLE, .size = 4 };
	cr_expect_eq(bad_after(raw, 32), 1, "size below a header");
	*h = (struct rec_header){ .type = REC_SAMPLE, .size = 16 };
	cr_expect_eq(bad_after(raw, 16), 1, "sample shorter than its struct");
	*h = (struct rec_header){ .type = 77, .size = 16 };
	cr_expect_eq(bad_after(raw, 16), 1, "unknown type");
	*h = (struct rec_header){ .type = REC_THREAD, .size = 16 };
	cr_expect_eq(bad_after(raw, 16), 1, "short thread record");
	*h = (struct rec_header){ .type = REC_CODE_DEF, .size = 16 };
	cr_expect_eq(bad_after(raw, 16), 1, "short code def");
	*h = (struct rec_header){ .type = REC_THREADS, .size = 16 };
	cr_expect_eq(bad_after(raw, 16), 1, "short threads record");
	size_t tlen = mk_threads(raw, 0, (struct ts[]){ { 5, 'R', 0, 0, 0 } },
	                         1);
	((struct rec_threads *)raw)->nthreads = 2;
	cr_expect_eq(bad_after(raw, tlen), 1, "nthreads beyond size");
	((struct rec_threads *)raw)->nthreads = 0xffffffffu;
	cr_expect_eq(bad_after(raw, tlen), 1, "nthreads huge");

	/* nframes beyond the record's size (and beyond len). */
	size_t len = mk_sample(raw, 1, 0, MS, (struct rec_frame[]){ F(CODE_A, 0),
	                       F(CODE_A, 0) }, 2);
	((struct rec_sample *)raw)->nframes = 3;
	cr_expect_eq(bad_after(raw, len), 1, "nframes beyond size");
	((struct rec_sample *)raw)->nframes = 65535;
	cr_expect_eq(bad_after(raw, len), 1, "nframes huge");

	/* Code defs whose lengths overrun the record. */
	len = mk_code(recbuf, 50, "q", "f.py", 1, NULL, 0);
	struct rec_code_def *c = (struct rec_code_def *)recbuf;
	c->qualname_len = 60000;
	cr_expect_eq(bad_after(recbuf, len), 1, "qualname_len");
	c->qualname_len = 1;
	c->filename_len = 65535;
	cr_expect_eq(bad_after(recbuf, len), 1, "filename_len");
	c->filename_len = 4;
	c->linetable_len = 0xffffffffu;
	cr_expect_eq(bad_after(recbuf, len), 1, "linetable_len");
	c->linetable_len = 0;
	c->h.size = (uint32_t)len + 8;
	cr_expect_eq(bad_after(recbuf, len), 1, "size beyond len");

	/* None of it counted anything or defined code 50. */
	SAMPLE(1, 0, MS, F(50, 0));
	take();
	cr_expect_eq(snap.samples, 0);
	cr_expect_eq(snap.nfuncs, 0);
	cr_expect_eq(snap.nthreads, 0);
}

Test(aggregator, trailing_bytes_and_unaligned_buffers_are_fine)
{
	/* A record shorter than the buffer handed in: only size counts. */
	size_t len = mk_sample(recbuf, 1, 0, MS, &F(CODE_A, 0), 1);
	memset((char *)recbuf + len, 0xff, 64);
	cr_expect_eq(bad_after(recbuf, len + 64), 0);
	/* The same record at an odd address (UBSan checks alignment). */
	static uint64_t raw[32];
	char *odd = (char *)raw + 3;
	memcpy(odd, recbuf, len);
	cr_expect_eq(bad_after(odd, len), 0);
	len = mk_code(recbuf, 60, "odd", "o.py", 3, NULL, 0);
	memcpy(odd, recbuf, len);
	cr_expect_eq(bad_after(odd, len), 0);
	len = mk_thread(recbuf, 1, "t");
	memcpy(odd, recbuf, len);
	cr_expect_eq(bad_after(odd, len), 0);
	len = mk_sample(recbuf, 1, 0, MS, &F(60, 0), 1);
	memcpy(odd, recbuf, len);
	cr_expect_eq(bad_after(odd, len), 0);
	take();
	expect_counts(FUNC_C("a"), 2, 2, 2, 2, "a");
	expect_counts(FUNC_C("odd"), 1, 1, 1, 1, "odd");
	expect_counts(LINE_C("o.py", 3), 1, 1, 1, 1, "o.py:3");
	cr_expect_str_eq(thread(1)->name, "t");
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

Test(aggregator, random_records_never_crash)
{
	/* Random bytes behind plausible headers, each in an exact-size heap
	 * block so ASan sees any over-read. */
	uint64_t seed = 12345;
	for (int i = 0; i < 20000; i++) {
		size_t len = 8 + rng_next(&seed) % 120;
		uint8_t *r = malloc(len);
		cr_assert_not_null(r);
		for (size_t k = 0; k < len; k++)
			r[k] = (uint8_t)rng_next(&seed);
		struct rec_header h = {
			.type = 1 + (uint32_t)(rng_next(&seed) % 4),
			.size = (uint32_t)(rng_next(&seed) % (len + 8)),
		};
		memcpy(r, &h, sizeof h);
		aggregator_ingest(agg, r, len);
		free(r);
	}
	take();
	cr_expect_gt(aggregator_bad(agg), 0);
}

/* ---- scale and speed ----------------------------------------------------- */



Test(aggregator, hundred_thousand_lines, .timeout = 30)
{
	enum { NCODES = 1000, NLINES = 100 };
	static int lines[NLINES];
	char name[32];
	/* 100 001 rows are over the soft cap: a sweep falling due while
	 * they are ingested (2 s; the sanitizer build takes about 2.7) would
	 * fold the idle ones, which is the sweep's test, not this one. */
	agg->next_sweep_ns = UINT64_MAX;
	for (int c = 0; c < NCODES; c++) {
		for (int i = 0; i < NLINES; i++)
			lines[i] = 1 + c * NLINES + i;
		snprintf(name, sizeof name, "f%d", c);
		define(1000 + c, name, "big.py", lines[0], lines, NLINES);
	}
	for (int c = 0; c < NCODES; c++)
		for (int i = 0; i < NLINES; i++)
			SAMPLE(1, 0, MS, F(1000 + c, 2 * i), F(CODE_A, 0));
	take();
	cr_expect_eq(aggregator_bad(agg), 0);
	cr_expect_eq(snap.samples, NCODES * NLINES);
	cr_assert_eq(snap.nlines, NCODES * NLINES + 1);
	cr_expect_eq(snap.nfuncs, NCODES + 1);
	expect_counts(LINE_C("m.py", 11), 0, NCODES * NLINES, 0,
	              NCODES * NLINES, "m.py:11");
	/* Equal counts: ordered by file, then line; m.py:11 (own 0) last. */
	for (size_t i = 0; i + 1 < snap.nlines; i++) {
		cr_assert_eq(snap.lines[i].c.own, 1, "row %zu", i);
		cr_assert_eq(snap.lines[i].line, (int)i + 1, "row %zu", i);
	}
	cr_expect_str_eq(snap.lines[snap.nlines - 1].file, "m.py");
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Mean ns per ingested sample of `depth` frames, over `n` samples cycling
 * through 64 distinct stacks (50 functions, recursion included) spread
 * over `nthreads` threads, measured after one warm-up pass so that the
 * frame cache and the per-thread rows are full. */
static double ns_per_sample(int depth, int n, int nthreads)
{
	enum { NSTACKS = 64, NFUNCS = 50 };
	static const int l[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char name[32];
	for (int f = 0; f < NFUNCS; f++) {
		snprintf(name, sizeof name, "bench_%d", f);
		define(5000 + f, name, "bench.py", 1, l, 8);
	}
	size_t lens[NSTACKS];
	uint8_t *recs[NSTACKS];
	struct rec_frame *fr = malloc(depth * sizeof *fr);
	uint64_t seed = 7;
	for (int s = 0; s < NSTACKS; s++) {
		for (int d = 0; d < depth; d++)
			fr[d] = F(5000 + (uint32_t)(rng_next(&seed) % NFUNCS),
			          (int32_t)(2 * (rng_next(&seed) % 8)));
		lens[s] = mk_sample(recbuf, 1 + s % nthreads, SAMPLE_RUNNING,
		                    MS, fr, (uint16_t)depth);
		recs[s] = malloc(lens[s]);
		memcpy(recs[s], recbuf, lens[s]);
	}
	for (int s = 0; s < NSTACKS; s++)
		aggregator_ingest(agg, recs[s], lens[s]);
	double t0 = now_ns();
	for (int i = 0; i < n; i++)
		aggregator_ingest(agg, recs[i % NSTACKS], lens[i % NSTACKS]);
	double per = (now_ns() - t0) / n;
	for (int s = 0; s < NSTACKS; s++)
		free(recs[s]);
	free(fr);
	cr_expect_eq(aggregator_bad(agg), 0);
	return per;
}

Test(aggregator, ingest_speed, .timeout = 60)
{
	double shallow = ns_per_sample(10, 100000, 1);
	double deep = ns_per_sample(400, 5000, 1);
	double shared = ns_per_sample(10, 100000, 8);
	test_note("aggregator_ingest: %.0f ns/sample at 10 frames, %.0f ns/sample "
	     "at 400 frames, %.0f ns/sample at 10 frames over 8 threads "
	     "sharing functions", shallow, deep, shared);
	take();
	cr_expect_eq(snap.samples, 64 + 100000 + 64 + 5000 + 64 + 100000);
	/* Generous bounds (sanitizer builds are several times slower): this
	 * only catches accidental O(depth^2) or per-sample allocation storms. */
	cr_expect_lt(deep, 2e6, "%.0f ns per 400-frame sample", deep);
}
