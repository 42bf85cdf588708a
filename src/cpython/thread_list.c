/* thread_list.c - see thread_list.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/thread_list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

int thread_list_init(struct thread_list *tl, pid_t pid, const struct py_offsets *o,
                     uintptr_t runtime, struct mem_region *mem)
{
	*tl = (struct thread_list){ .pid = pid, .o = o, .runtime = runtime };
	tl->slots = mem_region_alloc(mem, MAX_THREADS * sizeof(*tl->slots));
	return tl->slots != NULL ? 0 : -1;
}

static int gone(void)
{
	return errno == ESRCH || errno == EPERM ? -1 : 0;
}

uintptr_t thread_list_gil_address(const struct thread_list *tl)
{
	uintptr_t base = tl->o->gil_in_runtime ? tl->runtime : tl->interps[0];

	return tl->ninterps > 0 ? base + tl->o->gil_holder : 0;
}

bool thread_list_has_gil(const struct thread_list *tl, const struct thread_slot *t)
{
	return (uint32_t)tl->gil[1] != 0 && tl->gil[0] == t->tstate;
}

int thread_list_walk(struct thread_list *tl)
{
	const struct py_offsets *o = tl->o;
	uint64_t interp = 0;

	tl->ninterps = 0;
	tl->n = 0;
	if (remote_read(tl->pid, tl->runtime + o->rt_interp_head, &interp, 8) != 0)
		return gone() ? -1 : 0;
	while (plausible_ptr(interp) && tl->ninterps < MAX_INTERPS) {
		uint64_t ts = 0, next = 0;

		tl->interps[tl->ninterps++] = interp;
		if (remote_read(tl->pid, interp + o->is_threads_head, &ts, 8) != 0 ||
		    remote_read(tl->pid, interp + o->is_next, &next, 8) != 0)
			return gone() ? -1 : 0;
		size_t first = tl->n;

		while (plausible_ptr(ts) && tl->n < MAX_THREADS) {
			struct thread_slot *t = &tl->slots[tl->n];
			size_t seen = first;

			/* a list that loops back ends where it does */
			while (seen < tl->n && tl->slots[seen].tstate != ts)
				seen++;
			if (seen < tl->n)
				break;

			if (remote_read(tl->pid, ts, t->buf, o->ts_read_size) != 0)
				return gone() ? -1 : 0;
			t->tstate = ts;
			tl->n++;
			ts = rd64(t->buf, o->ts_next);
		}
		interp = next;
	}
	if (remote_read(tl->pid, thread_list_gil_address(tl), tl->gil, sizeof(tl->gil)) != 0)
		memset(tl->gil, 0, sizeof(tl->gil));
	return 0;
}

size_t thread_list_reads(const struct thread_list *tl)
{
	return tl->ninterps == 0 ? 0 : 2 + 2 * tl->ninterps + tl->n;
}

void thread_list_queue(struct thread_list *tl, struct scatter *s)
{
	const struct py_offsets *o = tl->o;

	scatter_add(s, &tl->head, tl->runtime + o->rt_interp_head, 8, NULL);
	scatter_add(s, tl->gil, thread_list_gil_address(tl), sizeof(tl->gil), NULL);
	for (size_t i = 0; i < tl->ninterps; i++) {
		scatter_add(s, &tl->links[i][0], tl->interps[i] + o->is_threads_head, 8, NULL);
		scatter_add(s, &tl->links[i][1], tl->interps[i] + o->is_next, 8, NULL);
	}
	for (size_t i = 0; i < tl->n; i++)
		scatter_add(s, tl->slots[i].buf, tl->slots[i].tstate, o->ts_read_size, NULL);
}

bool thread_list_holds(const struct thread_list *tl)
{
	const struct py_offsets *o = tl->o;
	size_t t = 0;

	if (tl->head != tl->interps[0])
		return false;
	for (size_t i = 0; i < tl->ninterps; i++) {
		uint64_t want_next = i + 1 < tl->ninterps ? tl->interps[i + 1] : 0;
		uint64_t ts = tl->links[i][0];

		if (tl->links[i][1] != want_next)
			return false;
		/* The threads of interpreter i are the next run of slots. */
		for (; plausible_ptr(ts); t++) {
			if (t >= tl->n || tl->slots[t].tstate != ts)
				return false;
			ts = rd64(tl->slots[t].buf, o->ts_next);
			if (rd64(tl->slots[t].buf, o->ts_interp) != tl->interps[i])
				return false;
		}
		if (ts != 0)
			return false;
	}
	return t == tl->n;
}
