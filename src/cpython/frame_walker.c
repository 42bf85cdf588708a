/* frame_walker.c - which frame walker reads which CPython version, and
 * what every walker does with a frame once it has found its code. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walker.h"

#include "cpython/code_check.h"

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

bool walk_frame_record(const struct walk_ctx *cx, struct thread_slot *t,
                       uintptr_t code_addr, int64_t off, struct rec_frame *out)
{
	struct py_code *c = code_cache_resolve(cx->codes, code_addr, off, cx->tick);

	if (c == NULL)
		return false;
	code_checks_list(t, c, cx->tick);
	out->code_id = c->id;
	out->instr_offset = (int32_t)off;
	return true;
}
