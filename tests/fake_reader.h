/* fake_reader.h - the stack reader under test attached to a synthetic
 * CPython (fake_python.h): an image, the forked child holding it, and a
 * py_reader and proc_threads sampling that child.  The reader tests
 * (test_reader_synthetic, test_reader_reuse, test_sample_errors,
 * test_code_changed_retry, test_newest_frame) build their stacks in `im`,
 * publish them to the child, and sample through `r`. */
#ifndef PYTOP_TESTS_FAKE_READER_H
#define PYTOP_TESTS_FAKE_READER_H

#include <criterion/parameterized.h>
#include <stddef.h>

#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "cpython/py_runtime.h"
#include "fake_python.h"
#include "target/proc_threads.h"

struct fake_reader {
	const struct py_offsets *o; /* borrowed, static */
	struct fake_image im;
	struct fake_child child;
	struct py_runtime rt;
	struct py_reader *r;        /* owns; NULL until published */
	struct proc_threads *pt;    /* owns; NULL until published */
};

/* An empty image for o's layout and the child holding it: the child
 * exists first, so that thread states can carry its pid. */
void fake_reader_start(struct fake_reader *f, const struct py_offsets *o);
/* Copy the whole image into the child; the first call also attaches the
 * reader (aborts when it cannot). */
void fake_reader_publish(struct fake_reader *f);
/* Detach, stop the child, free the image. */
void fake_reader_end(struct fake_reader *f);

/* One tick of the reader on a one-thread image (asserts it saw one
 * thread); its sample, borrowed from the reader. */
const struct py_thread_sample *fake_reader_sample_one(struct fake_reader *f);
/* Assert that s is a good sample whose frame i runs a code named `name`
 * at byte offset `off`; `when` names the case in the message. */
void fake_reader_expect_frame(struct fake_reader *f, const struct py_thread_sample *s,
                              uint32_t i, const char *name, int off, const char *when);

#define FAKE_READER_MAX_VERSIONS 16 /* built-in tables at most */

/* The index (py_offsets_at) of every built-in offsets table, as the
 * parameters of a Criterion parameterized test. */
struct criterion_test_params fake_reader_versions(void);

/* A test of `suite` run once per built-in table, *vi its index. */
#define FAKE_READER_VERSION_TEST(suite, name) \
	ParameterizedTestParameters(suite, name) { return fake_reader_versions(); } \
	ParameterizedTest(size_t *vi, suite, name, .timeout = 30)

#endif
