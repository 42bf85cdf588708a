/* scatter.c - see scatter.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/scatter.h"

#include <stdint.h>

#include "target/remote_mem.h"

int scatter_init(struct scatter *s, struct mem_region *mem, size_t cap)
{
	*s = (struct scatter){ 0 };
	if (cap > SIZE_MAX / sizeof(struct iovec))
		return -1;
	s->local = mem_region_alloc(mem, cap * sizeof(*s->local));
	s->remote = mem_region_alloc(mem, cap * sizeof(*s->remote));
	s->arrived = mem_region_alloc(mem, cap * sizeof(*s->arrived));
	if (s->local == NULL || s->remote == NULL || s->arrived == NULL)
		return -1;
	s->cap = cap;
	return 0;
}

void scatter_reset(struct scatter *s)
{
	s->n = 0;
}

bool scatter_room(const struct scatter *s, size_t more)
{
	return more <= s->cap - s->n;
}

void scatter_add(struct scatter *s, void *buf, uintptr_t addr, size_t len,
                 bool *arrived)
{
	s->local[s->n] = (struct iovec){ buf, len };
	s->remote[s->n] = (struct iovec){ (void *)addr, len };
	s->arrived[s->n++] = arrived;
	if (arrived != NULL)
		*arrived = true;
}

size_t scatter_read(struct scatter *s, pid_t pid)
{
	int got = s->n > 0 ? remote_readv(pid, s->local, s->remote, (int)s->n) : 0;

	if (got < 0)
		got = 0;
	for (size_t k = (size_t)got; k < s->n; k++)
		if (s->arrived[k] != NULL)
			*s->arrived[k] = false;
	return (size_t)got;
}
