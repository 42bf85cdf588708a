/* fake_reader.c - see fake_reader.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fake_reader.h"

#include "sample_errors.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fake_reader_start(struct fake_reader *f, const struct py_offsets *o)
{
	memset(f, 0, sizeof(*f));
	f->o = o;
	fake_image_init(&f->im, o);
	fake_child_start(&f->child);
}

void fake_reader_publish(struct fake_reader *f)
{
	fake_child_sync(&f->child, (uintptr_t)f->im.base, f->im.used);
	if (f->r != NULL)
		return;
	fake_runtime(&f->im, &f->rt);
	f->r = py_reader_new(f->child.pid, &f->rt);
	f->pt = proc_threads_new(f->child.pid);
	if (f->r == NULL || f->pt == NULL) {
		fprintf(stderr, "fake_reader: cannot attach to the fake child %d (3.%u)\n",
		        (int)f->child.pid, f->o->minor);
		abort();
	}
}

void fake_reader_end(struct fake_reader *f)
{
	py_reader_free(f->r);
	proc_threads_free(f->pt);
	fake_child_stop(&f->child);
	fake_image_free(&f->im);
	f->r = NULL;
	f->pt = NULL;
}

struct criterion_test_params fake_reader_versions(void)
{
	/* Criterion keeps a pointer to the parameters: they must outlive us. */
	static size_t idx[FAKE_READER_MAX_VERSIONS];
	size_t n = 0;

	while (n < FAKE_READER_MAX_VERSIONS && py_offsets_at(n) != NULL) {
		idx[n] = n;
		n++;
	}
	return cr_make_param_array(size_t, idx, n);
}

const struct py_thread_sample *fake_reader_sample_one(struct fake_reader *f)
{
	cr_assert_eq(py_reader_sample(f->r, f->pt, true), 1, "3.%u", f->o->minor);
	return py_reader_thread(f->r, 0);
}

void fake_reader_expect_frame(struct fake_reader *f, const struct py_thread_sample *s,
                              uint32_t i, const char *name, int off, const char *when)
{
	const struct py_code *pc;

	cr_assert_eq(s->status, PY_THREAD_OK, "3.%u, %s: status %d (%s)", f->o->minor, when,
	             s->status, sample_error_name(s->error_kind));
	cr_assert_gt(s->nframes, i, "3.%u, %s", f->o->minor, when);
	pc = py_reader_code(f->r, s->frames[i].code_id);
	cr_assert(pc != NULL && pc->valid, "3.%u, %s: frame %u's code", f->o->minor, when, i);
	cr_assert_str_eq(pc->qualname, name, "3.%u, %s", f->o->minor, when);
	cr_assert_eq(s->frames[i].instr_offset, off, "3.%u, %s", f->o->minor, when);
}
