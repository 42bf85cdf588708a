/* sample_delta.c - see sample_delta.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/sample_delta.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "transport/record.h"

#define SWEEP_EVERY 4096 /* records between sweeps of threads gone quiet */

struct last_sample {
	uint64_t key;             /* pid << 32 | tid */
	uint64_t time_ns;
	struct rec_frame *frames; /* owned, outermost first */
	uint32_t n, cap;
};

struct sample_delta {
	struct hashmap index;     /* key -> entry + 1 */
	struct last_sample *v;    /* owned */
	size_t n, cap;
	uint64_t newest_ns;       /* the latest time_ns seen */
	unsigned since_sweep;
	uint8_t *out;             /* owned: one rebuilt REC_SAMPLE */
};

struct sample_delta *sample_delta_new(void)
{
	struct sample_delta *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	hashmap_init(&d->index);
	d->out = malloc(sizeof(struct rec_sample) + REC_MAX_PY_FRAMES * sizeof(struct rec_frame));
	if (d->out == NULL) {
		sample_delta_free(d);
		return NULL;
	}
	return d;
}

void sample_delta_free(struct sample_delta *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].frames);
	free(d->v);
	free(d->out);
	hashmap_destroy(&d->index);
	free(d);
}

size_t sample_delta_threads(const struct sample_delta *d)
{
	return d->n;
}

static uint64_t key_of(const struct rec_sample *r)
{
	return (uint64_t)(uint32_t)r->pid << 32 | (uint32_t)r->tid;
}

/* Drop the threads the sampler can no longer refer back to. */
static void sweep(struct sample_delta *d)
{
	size_t kept = 0;

	hashmap_clear(&d->index);
	for (size_t i = 0; i < d->n; i++) {
		struct last_sample *e = &d->v[i];

		if (e->time_ns + 2 * REC_DELTA_MAX_AGE_NS < d->newest_ns) {
			free(e->frames);
			continue;
		}
		d->v[kept] = *e;
		(void)hashmap_put(&d->index, e->key, kept + 1);
		kept++;
	}
	d->n = kept;
}

static struct last_sample *find(struct sample_delta *d, uint64_t key)
{
	uint64_t i;

	return hashmap_get(&d->index, key, &i) ? &d->v[i - 1] : NULL;
}

static struct last_sample *find_or_add(struct sample_delta *d, uint64_t key)
{
	struct last_sample *e = find(d, key);

	if (e != NULL)
		return e;
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 16;
		struct last_sample *nv = realloc(d->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return NULL;
		d->v = nv;
		d->cap = ncap;
	}
	if (!hashmap_put(&d->index, key, d->n + 1))
		return NULL;
	e = &d->v[d->n++];
	*e = (struct last_sample){ .key = key };
	return e;
}

/* Keep frames (n, leaf first; the outer `keep` already in place) as the
 * thread's last.  Out of memory, the thread is forgotten: its next delta
 * counts as bad, nothing worse. */
static void remember(struct last_sample *e, const struct rec_frame *f, uint32_t n,
                     uint32_t keep, uint64_t time_ns)
{
	if (n > e->cap) {
		uint32_t cap = e->cap ? e->cap : 64;
		struct rec_frame *nv;

		while (cap < n)
			cap *= 2;
		nv = realloc(e->frames, cap * sizeof(*nv));
		if (nv == NULL) {
			free(e->frames);
			*e = (struct last_sample){ .key = e->key }; /* time_ns 0: unknown */
			return;
		}
		e->frames = nv;
		e->cap = cap;
	}
	for (uint32_t i = keep; i < n; i++)
		e->frames[i] = f[n - 1 - i];
	e->n = n;
	e->time_ns = time_ns;
}

static void note_time(struct sample_delta *d, uint64_t t)
{
	if (t > d->newest_ns)
		d->newest_ns = t;
	if (++d->since_sweep >= SWEEP_EVERY) {
		d->since_sweep = 0;
		sweep(d);
	}
}

static void take_whole(struct sample_delta *d, const struct rec_sample *r, size_t len)
{
	struct last_sample *e;

	if (len < sizeof(*r) || r->nframes > REC_MAX_PY_FRAMES ||
	    sizeof(*r) + (size_t)r->nframes * sizeof(struct rec_frame) > len)
		return; /* the aggregator refuses it */
	note_time(d, r->time_ns);
	e = find_or_add(d, key_of(r));
	if (e != NULL)
		remember(e, r->frames, r->nframes, 0, r->time_ns);
}

/* The delta r (len bytes) rebuilt into d->out; false when it cannot be. */
static bool rebuild(struct sample_delta *d, const struct rec_sample *r, size_t len,
                    size_t *out_len)
{
	struct rec_sample_keep k;
	struct rec_sample *w = (struct rec_sample *)d->out;
	struct last_sample *e;
	size_t nsend, whole;

	if (len < sizeof(*r) + sizeof(k) || r->h.size != len)
		return false;
	memcpy(&k, (const uint8_t *)r + len - sizeof(k), sizeof(k));
	if (r->nframes > REC_MAX_PY_FRAMES || k.keep == 0 || k.keep > r->nframes)
		return false;
	nsend = r->nframes - k.keep;
	if (len != sizeof(*r) + nsend * sizeof(struct rec_frame) + sizeof(k))
		return false;
	e = find(d, key_of(r));
	if (e == NULL || e->time_ns == 0 || k.keep > e->n)
		return false;
	whole = sizeof(*r) + (size_t)r->nframes * sizeof(struct rec_frame);
	memcpy(w, r, sizeof(*r) + nsend * sizeof(struct rec_frame));
	w->h = (struct rec_header){ REC_SAMPLE, (uint32_t)whole };
	for (uint32_t j = 0; j < k.keep; j++)
		w->frames[nsend + j] = e->frames[k.keep - 1 - j];
	note_time(d, r->time_ns);
	e = find(d, key_of(r)); /* a sweep may have moved it */
	if (e != NULL)
		remember(e, w->frames, r->nframes, k.keep, r->time_ns);
	*out_len = whole;
	return true;
}

const void *sample_delta_expand(struct sample_delta *d, const void *rec, size_t len,
                                size_t *out_len)
{
	struct rec_header h;

	*out_len = len;
	if (len < sizeof(h))
		return rec;
	memcpy(&h, rec, sizeof(h));
	if (h.type == REC_SAMPLE && h.size <= len)
		take_whole(d, rec, h.size);
	else if (h.type == REC_SAMPLE_DELTA && h.size <= len && rebuild(d, rec, h.size, out_len))
		return d->out;
	return rec;
}
