/* frame_walk_kept.c - the last frame walk of a thread, kept for the next
 * (frame_walk_kept.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/frame_walk_kept.h"

struct kept_pair *kept_pair_new(struct mem_region *mem)
{
	struct kept_pair *p = mem_region_alloc(mem, sizeof(*p));

	if (p == NULL)
		return NULL;
	for (int i = 0; i < 2; i++) {
		p->w[i].steps = mem_region_alloc(mem, KEPT_STEPS * sizeof(struct kept_step));
		if (p->w[i].steps == NULL)
			return NULL;
	}
	return p;
}

void kept_begin(struct kept_pair *p, uintptr_t tstate, uint64_t read_after)
{
	struct kept_walk *w = kept_cur(p);

	w->n = 0;
	w->nbound = 0;
	w->tstate = tstate;
	w->read_after = read_after;
	w->ok = true;
}

void kept_step(struct kept_walk *w, const struct kept_step *s)
{
	if (w->n == KEPT_STEPS)
		w->ok = false;
	else
		w->steps[w->n++] = *s;
}

void kept_bound(struct kept_walk *w, uint64_t chunk)
{
	if (w->nbound < KEPT_BOUNDS)
		w->bound[w->nbound++] = (struct kept_bound){ chunk, (uint32_t)w->n };
}

bool kept_find(const struct kept_walk *w, uintptr_t tstate, uint64_t chunk,
               uint64_t caller, uint32_t *at)
{
	if (!w->ok || w->tstate != tstate)
		return false;
	for (size_t i = 0; i < w->nbound; i++) {
		const struct kept_bound *b = &w->bound[i];

		if (b->chunk == chunk && b->at < w->n && w->steps[b->at].addr == caller) {
			*at = b->at;
			return true;
		}
	}
	return false;
}

void kept_append(struct kept_walk *cur, const struct kept_walk *w, uint32_t at)
{
	size_t shift = cur->n;

	if (cur->n + (w->n - at) > KEPT_STEPS) {
		cur->ok = false;
		return;
	}
	for (size_t i = 0; i < w->nbound; i++)
		if (w->bound[i].at >= at && cur->nbound < KEPT_BOUNDS)
			cur->bound[cur->nbound++] = (struct kept_bound){
				w->bound[i].chunk, (uint32_t)(w->bound[i].at - at + shift) };
	for (size_t i = at; i < w->n; i++)
		cur->steps[cur->n++] = w->steps[i];
	if (w->read_after < cur->read_after)
		cur->read_after = w->read_after;
}

void kept_end(struct kept_pair *p, bool ok)
{
	if (ok && kept_cur(p)->ok)
		p->last = !p->last;
	else
		kept_last(p)->ok = false;
}
