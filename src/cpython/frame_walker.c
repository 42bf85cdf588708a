/* frame_walker.c - which frame walker reads which CPython version. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walker.h"

/* One line per family. */
static const struct py_frame_walker *const walkers[] = {
	&chunk_frame_walker,
};

const struct py_frame_walker *py_frame_walker_for(const struct py_offsets *o)
{
	for (size_t i = 0; i < sizeof(walkers) / sizeof(walkers[0]); i++) {
		const struct py_frame_walker *w = walkers[i];

		if (o->minor >= w->first_minor &&
		    (w->last_minor == 0 || o->minor <= w->last_minor))
			return w;
	}
	return NULL;
}
