/* test_sample_errors.c - a sample that fails is counted by why: the stack
 * reader names the kind of each failure (sample_errors.h) over synthetic
 * CPython memory (tests/fake_python.h, every built-in offsets table), and
 * the views show the counts: JSON errors_by_kind (every kind, summing to
 * errors) and the header's err detail. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "fake_reader.h"
#include "headless.h"
#include "snapshot_builder.h"
#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "target/proc_threads.h"
#include "../ui/header.h"

/* ---- the reader: one thread running inner <- middle <- outer ----------- */

struct ctx {
	struct fake_reader fr;
	struct fake_thread t;
	uintptr_t outer, middle, inner;          /* code objects */
	uintptr_t f_outer, f_middle, f_inner;    /* their frames */
};

static void ctx_init(struct ctx *c, size_t version_index)
{
	memset(c, 0, sizeof(*c));
	cr_assert_not_null(py_offsets_at(version_index));
	fake_reader_start(&c->fr, py_offsets_at(version_index));
	fake_thread_new(&c->fr.im, &c->t, c->fr.child.pid);
	c->outer = fake_code(&c->fr.im, "outer", "/h.py", 1, 0);
	c->middle = fake_code(&c->fr.im, "middle", "/h.py", 10, 0);
	c->inner = fake_code(&c->fr.im, "inner", "/h.py", 20, 0);
	c->f_outer = fake_push(&c->fr.im, &c->t, c->outer, 0);
	c->f_middle = fake_push(&c->fr.im, &c->t, c->middle, 2);
	c->f_inner = fake_push(&c->fr.im, &c->t, c->inner, 4);
}

static void ctx_publish(struct ctx *c)
{
	fake_reader_publish(&c->fr);
}

/* Sample three times (the cold path, then the cached and speculative
 * ones): the thread's sample must fail with `want` every time. */
static void expect_kind(struct ctx *c, enum sample_error want, const char *what)
{
	for (int tick = 0; tick < 3; tick++) {
		const struct py_thread_sample *th;

		cr_assert_eq(py_reader_sample(c->fr.r, c->fr.pt, true), 1, "3.%u %s", c->fr.o->minor, what);
		th = py_reader_thread(c->fr.r, 0);
		cr_assert_eq(th->status, PY_THREAD_ERROR, "3.%u %s: tick %d: status %d, want an error",
		             c->fr.o->minor, what, tick, th->status);
		cr_assert_eq(th->error_kind, want, "3.%u %s: tick %d: kind %s, want %s", c->fr.o->minor,
		             what, tick, sample_error_name(th->error_kind), sample_error_name(want));
	}
}

static void ctx_end(struct ctx *c)
{
	fake_reader_end(&c->fr);
}

#define VERSION_TEST(name) FAKE_READER_VERSION_TEST(reader_kinds, name)

#define KIND_ASCII (FAKE_STR_KIND(1) | FAKE_STR_COMPACT | FAKE_STR_ASCII)

VERSION_TEST(name_that_is_no_str_is_a_string_error)
{
	struct ctx c;

	ctx_init(&c, *vi);
	/* Not compact: no str CPython makes for a name. */
	fake_w64(c.middle + c.fr.o->co_qualname,
	         fake_str_raw(&c.fr.im, FAKE_STR_KIND(1) | FAKE_STR_ASCII, 4, "abcd", 4));
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_STRING, "qualname not compact");
	ctx_end(&c);
}

VERSION_TEST(file_name_of_absurd_length_is_a_string_error)
{
	struct ctx c;

	ctx_init(&c, *vi);
	fake_w64(c.middle + c.fr.o->co_filename,
	         fake_str_raw(&c.fr.im, KIND_ASCII, 1ull << 40, "huge", 4));
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_STRING, "file name of 2^40 characters");
	ctx_end(&c);
}

VERSION_TEST(code_pointer_to_another_object_is_a_code_error)
{
	struct ctx c;
	uintptr_t impostor;

	ctx_init(&c, *vi);
	impostor = fake_code(&c.fr.im, "impostor", "/x.py", 1, 0);
	fake_w64(impostor + 8, c.fr.im.other_type);
	fake_w64(c.f_middle + c.fr.o->if_code, impostor);
	fake_w64(c.f_middle + c.fr.o->if_instr, impostor + c.fr.o->co_code_adaptive + 2);
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_CODE, "code of another type");
	ctx_end(&c);
}

VERSION_TEST(cycle_is_a_torn_frame)
{
	struct ctx c;

	ctx_init(&c, *vi);
	fake_w64(c.f_outer + c.fr.o->if_previous, c.f_middle);
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_FRAME, "cycle of two frames");
	ctx_end(&c);
}

VERSION_TEST(previous_into_unmapped_memory_is_a_torn_frame)
{
	struct ctx c;

	ctx_init(&c, *vi);
	fake_w64(c.f_middle + c.fr.o->if_previous, c.fr.im.guard);
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_FRAME, "previous frame unmapped");
	ctx_end(&c);
}

VERSION_TEST(unreadable_stack_chunk_is_stack_memory)
{
	struct ctx c;

	ctx_init(&c, *vi);
	ctx_publish(&c);
	fake_child_protect(&c.fr.child, c.t.chunk, FAKE_CHUNK_SIZE);
	expect_kind(&c, SAMPLE_ERR_STACK, "data stack chunk unreadable");
	ctx_end(&c);
}

/* 3.11 and 3.12 reach the frames through the thread state's cframe. */
VERSION_TEST(cframe_pointing_nowhere_is_a_thread_state_error)
{
	struct ctx c;

	ctx_init(&c, *vi);
	if (c.fr.o->ts_cframe == 0) {
		ctx_end(&c);
		cr_skip_test("3.%u keeps no cframe", c.fr.o->minor);
	}
	fake_w64(c.t.tstate + c.fr.o->ts_cframe, 0x10);
	ctx_publish(&c);
	expect_kind(&c, SAMPLE_ERR_THREAD, "cframe at 0x10");
	ctx_end(&c);
}

/* ---- the views ----------------------------------------------------------- */

static struct snapshot with_errors(void)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.11.7", 9700);

	s.errors = 300;
	s.errors_by_kind[SAMPLE_ERR_FRAME] = 200;
	s.errors_by_kind[SAMPLE_ERR_CODE] = 90;
	s.errors_by_kind[SAMPLE_ERR_STRING] = 10;
	s.requested_hz = 1000;
	s.rate_hz = 1000;
	return s;
}

TestSuite(error_views, .init = headless_utf8_locale);

Test(error_views, json_lists_every_kind)
{
	struct snapshot s = with_errors();
	json_t *o = headless_json(&s), *kinds = json_object_get(o, "errors_by_kind");
	static const char *const names[] = { "thread_state", "stack_memory", "torn_frame",
	                                     "too_deep", "code_object", "string",
	                                     "code_changed" };
	static const long long want[] = { 0, 0, 200, 0, 90, 10, 0 };

	cr_assert(json_is_object(kinds), "no errors_by_kind object");
	cr_assert_eq(json_object_size(kinds), 7);
	for (size_t i = 0; i < 7; i++)
		cr_assert_eq(json_integer_value(json_object_get(kinds, names[i])), want[i],
		             "errors_by_kind.%s", names[i]);
	cr_assert_eq(json_integer_value(json_object_get(o, "errors")), 300);
	json_decref(o);
	snapshot_free(&s);
}

Test(error_views, header_names_the_two_main_kinds)
{
	struct snapshot s = with_errors();
	char l[3][HEADER_LINE_MAX];

	cr_assert_eq(header_health(&s, 200, true, l, 3), 1);
	cr_assert_not_null(strstr(l[0], "err 3.0% torn 2.0 code 0.9"), "wide: %s", l[0]);
	/* At 80 columns the short form keeps the main kind. */
	header_health(&s, 80, true, l, 3);
	cr_assert_not_null(strstr(l[0], "err 3.0% torn "), "80 columns: %s", l[0]);
	cr_assert_null(strstr(l[0], "code"), "80 columns: %s", l[0]);
	cr_assert_leq(strlen(l[0]), 80 * 3);
	snapshot_free(&s);
}

Test(error_views, header_without_errors_has_no_detail)
{
	struct snapshot s = with_errors();
	char l[3][HEADER_LINE_MAX];

	s.errors = 0;
	memset(s.errors_by_kind, 0, sizeof s.errors_by_kind);
	header_health(&s, 200, true, l, 3);
	cr_assert_not_null(strstr(l[0], "err 0.0%  "), "%s", l[0]);
	snapshot_free(&s);
}
