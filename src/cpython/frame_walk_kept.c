/* frame_walk_kept.c - the last frame walk of a thread, kept for the next
 * (frame_walk_kept.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walk_kept.h"

struct kept_walk *kept_walk_new(struct mem_region *mem)
{
	struct kept_walk *w = mem_region_alloc(mem, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->steps = mem_region_alloc(mem, KEPT_STEPS * sizeof(struct kept_step));
	return w->steps != NULL ? w : NULL;
}

void kept_fresh_bound(struct kept_fresh *f, uint64_t chunk, uint64_t caller)
{
	if (f->nbound < KEPT_BOUNDS) {
		f->bound[f->nbound].chunk = chunk;
		f->bound[f->nbound].caller = caller;
		f->bound[f->nbound++].at = (uint32_t)f->n;
	}
}

bool kept_find(const struct kept_walk *w, uintptr_t tstate, uint64_t chunk,
               uint64_t caller, uint32_t *len)
{
	if (!w->ok || w->tstate != tstate)
		return false;
	for (size_t i = 0; i < w->nbound; i++) {
		const struct kept_bound *b = &w->bound[i];

		if (b->chunk == chunk && b->caller == caller && b->len <= w->n) {
			*len = b->len;
			return true;
		}
	}
	return false;
}

void kept_commit(struct kept_walk *w, const struct kept_fresh *f, uint32_t keep,
                 uintptr_t tstate, uint64_t read_after)
{
	size_t nb = 0, total = keep + f->n;

	if (!f->ok || total > KEPT_STEPS) {
		w->ok = false;
		return;
	}
	/* The bounds within the kept steps stay; the fresh ones count from
	 * the outermost frame now. */
	for (size_t i = 0; i < w->nbound && keep > 0; i++)
		if (w->bound[i].len <= keep)
			w->bound[nb++] = w->bound[i];
	for (size_t i = 0; i < f->nbound && nb < KEPT_BOUNDS; i++)
		w->bound[nb++] = (struct kept_bound){ f->bound[i].chunk, f->bound[i].caller,
		                                      (uint32_t)(total - f->bound[i].at) };
	w->nbound = nb;
	for (size_t i = 0; i < f->n; i++)
		w->steps[total - 1 - i] = f->steps[i];
	w->n = total;
	if (keep == 0 || read_after < w->read_after)
		w->read_after = read_after;
	w->tstate = tstate;
	w->ok = true;
}
