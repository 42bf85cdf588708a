/* scatter.c - see scatter.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/scatter.h"

#include <stdlib.h>

#include "target/remote_mem.h"

int scatter_init(struct scatter *s, size_t cap)
{
	s->local = calloc(cap, sizeof(*s->local));
	s->remote = calloc(cap, sizeof(*s->remote));
	s->arrived = calloc(cap, sizeof(*s->arrived));
	s->n = 0;
	s->cap = cap;
	if (s->local == NULL || s->remote == NULL || s->arrived == NULL) {
		scatter_destroy(s);
		return -1;
	}
	return 0;
}

void scatter_destroy(struct scatter *s)
{
	free(s->local);
	free(s->remote);
	free(s->arrived);
	*s = (struct scatter){ 0 };
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
