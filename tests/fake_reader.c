/* fake_reader.c - see fake_reader.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fake_reader.h"

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
