/* sampler_proc.c - what the sampler keeps per sampled process: reader,
 * kept /proc descriptors, names sent, code id mapping (sampler_proc.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/sampler_proc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_KNOWN_TIDS 4096

struct sampler_proc *sampler_proc_new(pid_t pid, const struct py_runtime *rt, bool want_calls)
{
	struct sampler_proc *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->pid = pid;
	if (rt != NULL) {
		p->rt = *rt;
		p->rt.off = &p->rt.offsets;
		p->reader = py_reader_new(pid, &p->rt);
		if (p->reader != NULL)
			py_reader_want_calls(p->reader, want_calls);
		thread_py_names_init(&p->py_names, pid, &p->rt);
	} else {
		p->tasks = native_threads_new(pid);
	}
	p->threads = proc_threads_new(pid);
	mem_region_init(&p->mem);
	p->known = mem_region_alloc(&p->mem, MAX_KNOWN_TIDS * sizeof(*p->known));
	if ((p->reader == NULL && p->tasks == NULL) || p->threads == NULL || p->known == NULL) {
		sampler_proc_free(p);
		return NULL;
	}
	return p;
}

void sampler_proc_free(struct sampler_proc *p)
{
	if (p == NULL)
		return;
	py_reader_free(p->reader);
	native_threads_free(p->tasks);
	proc_threads_free(p->threads);
	/* The stacks last sent are the only part of the known threads on
	 * malloc (they grow with the stack); the table is in the region. */
	for (size_t i = 0; p->known != NULL && i < MAX_KNOWN_TIDS; i++)
		free(p->known[i].sent);
	mem_region_release(&p->mem);
	free(p->ids);
	free(p);
}

int sampler_proc_sample(struct sampler_proc *p, bool idle)
{
	/* --idle samples sleeping threads: their figures must be this tick's. */
	proc_threads_light_sleepers(p->threads, !idle);
	if (p->reader != NULL)
		return py_reader_sample(p->reader, p->threads, idle);
	return native_threads_sample(p->tasks, p->threads, idle);
}

const struct py_thread_sample *sampler_proc_thread_at(const struct sampler_proc *p, size_t i)
{
	return p->reader != NULL ? py_reader_thread(p->reader, i) : native_threads_get(p->tasks, i);
}

uint32_t sampler_proc_code_id(struct sampler_proc *p, uint32_t local, uint32_t *next_id)
{
	if (local >= p->ids_cap) {
		size_t ncap = p->ids_cap ? p->ids_cap : 256;
		uint32_t *n;

		while (ncap <= local)
			ncap *= 2;
		n = realloc(p->ids, ncap * sizeof(*n));
		if (n == NULL)
			return SAMPLER_PROC_NO_ID;
		memset(n + p->ids_cap, 0, (ncap - p->ids_cap) * sizeof(*n));
		p->ids = n;
		p->ids_cap = ncap;
	}
	/* A code not sent yet is new to this slot: the reader reuses the
	 * slots of codes it forgot, and the aggregator may have dropped the
	 * old code's id by now, so it gets an id of its own (an id never
	 * names two codes). */
	const struct py_code *c = p->reader != NULL ? py_reader_code(p->reader, local) : NULL;

	if (p->ids[local] == 0 || (c != NULL && !c->sent))
		p->ids[local] = ++*next_id;
	return p->ids[local] - 1;
}

static struct known_thread *find(const struct sampler_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nknown; i++)
		if (p->known[i].tid == tid)
			return &p->known[i];
	return NULL;
}

struct known_thread *sampler_proc_thread(struct sampler_proc *p, pid_t tid)
{
	struct known_thread *k = find(p, tid);

	if (k != NULL)
		return k;
	if (p->nknown == MAX_KNOWN_TIDS)
		p->nknown = 0;
	k = &p->known[p->nknown++];
	free(k->sent);
	*k = (struct known_thread){ .tid = tid };
	return k;
}

void sampler_proc_forget_stacks(struct sampler_proc *p, uint64_t now)
{
	for (size_t i = 0; i < MAX_KNOWN_TIDS; i++) {
		struct known_thread *k = &p->known[i];

		if (k->sent != NULL && now - k->sent_ns >= REC_DELTA_MAX_AGE_NS) {
			free(k->sent);
			k->sent = NULL;
			k->nsent = k->sent_cap = 0;
		}
	}
}

bool sampler_proc_gil_wait(struct sampler_proc *p, pid_t tid)
{
	uint64_t lo, hi, uaddr;

	return p->reader != NULL && tid > 0 &&
	       py_reader_gil_span(p->reader, &lo, &hi) &&
	       proc_threads_futex(p->threads, tid, &uaddr) &&
	       uaddr >= lo && uaddr < hi;
}
