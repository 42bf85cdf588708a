/* thread_py_names.c - the program's thread names, read and made into
 * records (thread_py_names.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/thread_py_names.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/py_thread_names.h"
#include "transport/record.h"

_Static_assert(6 * PY_THREAD_NAME_MAX + 40 <= REC_MAX_THREAD_PY_NAME,
               "an escaped thread name fits a record");

void thread_py_names_init(struct thread_py_names *n, pid_t pid, const struct py_runtime *rt)
{
	*n = (struct thread_py_names){ .pid = pid };
	n->mem = (struct py_mem){ py_mem_remote, &n->pid };
	n->have_layout = rt != NULL && py_objects_layout(pid, rt, &n->layout) == 0;
}

/* FNV-1a, never 0 (0 = nothing sent yet) */
static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h != 0 ? h : 1;
}

static char *read_name(struct thread_py_names *n, pid_t tid, uintptr_t tstate)
{
	/* The main thread runs no Thread._bootstrap, so its stack (the
	 * deepest, often) is not walked: threading's globals, once another
	 * thread showed them, name it. */
	if (tid == n->pid)
		return n->threading_globals != 0
			? py_thread_name_main(&n->mem, &n->layout, n->threading_globals)
			: NULL;
	return py_thread_name_within(&n->mem, &n->layout, tstate, THREAD_PY_NAMES_MAX_WALK,
	                             &n->threading_globals);
}

size_t thread_py_names_record(struct thread_py_names *n, pid_t tid, uintptr_t tstate,
                              uint64_t *hash, void *buf, size_t cap)
{
	struct rec_thread_py_name *r = buf;
	char *name;
	size_t len, size = 0;
	uint64_t h;

	if (!n->have_layout || tstate == 0 || (name = read_name(n, tid, tstate)) == NULL)
		return 0;
	len = strlen(name);
	h = name_hash(name, len);
	if (h != *hash && len <= REC_MAX_THREAD_PY_NAME &&
	    (size = REC_ALIGN(sizeof(*r) + len)) <= cap) {
		memset(r, 0, size);
		r->h = (struct rec_header){ REC_THREAD_PY_NAME, (uint32_t)size };
		r->tid = tid;
		r->pid = n->pid;
		r->name_len = (uint16_t)len;
		memcpy(r->name, name, len);
		*hash = h;
	} else {
		size = 0;
	}
	free(name);
	return size;
}
