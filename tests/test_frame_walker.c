/* The frame walker is chosen per version family (src/cpython/
 * frame_walker.h): every built-in layout has one, and a layout whose frame
 * model no walker knows (3.10's heap PyFrameObjects, say) is refused when
 * the reader is made, rather than walked as if it were 3.11's data-stack
 * chunks. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cpython/frame_walker.h"
#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "cpython/py_runtime.h"

Test(frame_walker, every_built_in_layout_has_a_walker_whose_range_holds_it)
{
	size_t n = 0;

	for (const struct py_offsets *o; (o = py_offsets_at(n)) != NULL; n++) {
		const struct py_frame_walker *w = py_frame_walker_for(o);

		cr_assert_not_null(w, "no walker for 3.%u", o->minor);
		cr_expect(o->minor >= w->first_minor &&
		          (w->last_minor == 0 || o->minor <= w->last_minor),
		          "3.%u given to the walker for %s", o->minor, w->family);
		cr_expect_not_null(w->queue_guess);
		cr_expect_not_null(w->read_stacks);
		cr_expect_not_null(w->walk);
	}
	cr_assert_geq(n, 1);
}

/* A runtime whose layout is 3.11's table relabelled 3.<minor>. */
static void runtime_of_minor(struct py_runtime *rt, unsigned minor)
{
	memset(rt, 0, sizeof(*rt));
	rt->offsets = *py_offsets_for(3, 11);
	rt->offsets.minor = minor;
	rt->off = &rt->offsets;
	rt->runtime = 0x10000;
}

Test(frame_walker, reader_refuses_a_frame_model_no_walker_knows)
{
	struct py_runtime rt;
	struct py_reader *r;

	runtime_of_minor(&rt, 10);
	cr_assert_null(py_frame_walker_for(rt.off));
	errno = 0;
	r = py_reader_new(getpid(), &rt);
	cr_expect_null(r, "a 3.10 layout was given the 3.11+ chunk walker");
	cr_expect_eq(errno, EPROTONOSUPPORT);
	py_reader_free(r);

	runtime_of_minor(&rt, 11); /* the same bytes, a known family */
	r = py_reader_new(getpid(), &rt);
	cr_expect_not_null(r);
	py_reader_free(r);
}
