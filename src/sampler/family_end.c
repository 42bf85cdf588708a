/* family_end.c - see family_end.h: the exits of the followed family that
 * no scan of the follower will report, because the run ends with them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/family_end.h"

#include <stdlib.h>
#include <string.h>

#include "target/proc_threads.h"
#include "transport/record.h"

void family_end_init(struct family_end *f)
{
	memset(f, 0, sizeof(*f));
}

void family_end_free(struct family_end *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

static size_t find(const struct family_end *f, int32_t pid)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].pid == pid)
			return i;
	return f->n;
}

void family_end_note(struct family_end *f, const void *rec, size_t len)
{
	struct rec_process r;
	size_t at;

	if (len < sizeof(r))
		return;
	memcpy(&r, rec, sizeof(r));
	at = find(f, r.pid);
	if (r.state == PROC_EXITED) {
		if (at < f->n)
			f->v[at] = f->v[--f->n];
		return;
	}
	if (at == f->n) {
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 64;
			struct family_member *v = realloc(f->v, cap * sizeof(*v));

			if (v == NULL)
				return; /* its exit stays unreported, as before -s knew it */
			f->v = v;
			f->cap = cap;
		}
		f->n++;
	}
	f->v[at] = (struct family_member){ r.pid, r.ppid };
}

size_t family_end_report(struct family_end *f, struct ring *ring, uint64_t now_ns)
{
	size_t pushed = 0;

	for (size_t i = 0; i < f->n; i++) {
		struct rec_process r = {
			.h = { REC_PROCESS, (uint32_t)REC_ALIGN(sizeof(r)) },
			.time_ns = now_ns, .pid = f->v[i].pid, .ppid = f->v[i].ppid,
			.state = PROC_EXITED,
		};

		if (proc_threads_ended(f->v[i].pid) && ring_push(ring, &r, sizeof(r)))
			pushed++;
	}
	return pushed;
}
