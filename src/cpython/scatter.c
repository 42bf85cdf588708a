/* scatter.c - see scatter.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/scatter.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "target/remote_mem.h"

#define NONE UINT32_MAX

static void *alloc_n(struct mem_region *mem, size_t n, size_t size)
{
	return n > SIZE_MAX / size ? NULL : mem_region_alloc(mem, n * size);
}

int scatter_init(struct scatter *s, struct mem_region *mem, size_t cap)
{
	size_t slots = 2;

	*s = (struct scatter){ 0 };
	if (cap == 0 || cap >= NONE / 4)
		return -1;
	while (slots < 2 * cap)
		slots *= 2;
	long page = sysconf(_SC_PAGESIZE);

	/* A power of two: the per-range page number is a shift, not a
	 * division (40 cycles each, twice per range). */
	if (page <= 0 || (page & (page - 1)) != 0)
		return -1;
	s->page = (size_t)page;
	while ((size_t)1 << s->page_shift < s->page)
		s->page_shift++;
	s->local = alloc_n(mem, cap, sizeof(*s->local));
	s->remote = alloc_n(mem, cap, sizeof(*s->remote));
	s->arrived = alloc_n(mem, cap, sizeof(*s->arrived));
	s->glocal = alloc_n(mem, 2 * cap, sizeof(*s->glocal));
	s->gremote = alloc_n(mem, cap, sizeof(*s->gremote));
	s->read_as = alloc_n(mem, cap, sizeof(*s->read_as));
	s->epoch_of = alloc_n(mem, cap, sizeof(*s->epoch_of));
	s->gepoch = alloc_n(mem, cap, sizeof(*s->gepoch));
	s->next = alloc_n(mem, cap, sizeof(*s->next));
	s->head = alloc_n(mem, cap, sizeof(*s->head));
	s->tail = alloc_n(mem, cap, sizeof(*s->tail));
	s->gpage = alloc_n(mem, cap, sizeof(*s->gpage));
	s->order = alloc_n(mem, cap, sizeof(*s->order));
	s->pages = alloc_n(mem, slots, sizeof(*s->pages));
	s->sink = mem_region_alloc(mem, s->page);
	if (s->local == NULL || s->remote == NULL || s->arrived == NULL || s->glocal == NULL ||
	    s->gremote == NULL || s->read_as == NULL || s->epoch_of == NULL ||
	    s->gepoch == NULL || s->next == NULL || s->head == NULL || s->tail == NULL ||
	    s->gpage == NULL || s->order == NULL || s->pages == NULL ||
	    s->sink == NULL)
		return -1;
	s->pages_mask = slots - 1;
	s->cap = cap;
	return 0;
}

void scatter_reset(struct scatter *s)
{
	s->n = 0;
	s->epoch = 0;
}

void scatter_barrier(struct scatter *s)
{
	s->epoch++;
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
	s->epoch_of[s->n] = s->epoch;
	s->arrived[s->n++] = arrived;
	if (arrived != NULL)
		*arrived = true;
}

/* ---- grouping by page ------------------------------------------------------ */

/* The page range k lies on, or NONE-like UINTPTR_MAX when it spans pages
 * (or is empty): such a range is read on its own. */
static uintptr_t page_of(const struct scatter *s, size_t k)
{
	uintptr_t a = (uintptr_t)s->remote[k].iov_base;
	size_t len = s->remote[k].iov_len;

	if (len == 0 || a > UINTPTR_MAX - len || a >> s->page_shift != (a + len - 1) >> s->page_shift)
		return UINTPTR_MAX;
	return a >> s->page_shift;
}

static uint32_t new_group(struct scatter *s, uint32_t *ngroups, size_t k, uintptr_t page)
{
	uint32_t g = (*ngroups)++;

	s->head[g] = s->tail[g] = (uint32_t)k;
	s->gpage[g] = page;
	s->gepoch[g] = s->epoch_of[k];
	s->next[k] = NONE;
	return g;
}

/* Group the queued ranges by page, groups in the order of their first
 * range.  Returns the number of groups. */
static uint32_t group_by_page(struct scatter *s)
{
	uint32_t ngroups = 0;
	size_t mask = 1;

	/* A table as small as the ranges allow: a tick's few dozen ranges
	 * then probe one or two cache lines, not the whole table's. */
	while (mask < 2 * s->n - 1 && mask < s->pages_mask)
		mask = 2 * mask + 1;

	for (size_t k = 0; k < s->n; k++) {
		uintptr_t page = page_of(s, k);
		size_t h;

		if (page == UINTPTR_MAX) {
			new_group(s, &ngroups, k, page);
			continue;
		}
		h = (size_t)(((uint64_t)(page + s->epoch_of[k]) * 0x9E3779B97F4A7C15ull) >> 32) &
		    mask;
		while (s->pages[h] != 0 && (s->gpage[s->pages[h] - 1] != page ||
		                            s->gepoch[s->pages[h] - 1] != s->epoch_of[k]))
			h = (h + 1) & mask;
		if (s->pages[h] == 0) {
			s->pages[h] = new_group(s, &ngroups, k, page) + 1;
			continue;
		}
		uint32_t g = s->pages[h] - 1;

		s->next[s->tail[g]] = (uint32_t)k;
		s->tail[g] = (uint32_t)k;
		s->next[k] = NONE;
	}
	memset(s->pages, 0, (mask + 1) * sizeof(*s->pages));
	return ngroups;
}

static uintptr_t start_of(const struct scatter *s, uint32_t k)
{
	return (uintptr_t)s->remote[k].iov_base;
}

/* Group g's ranges by address into s->order; returns how many. */
static size_t sort_group(struct scatter *s, uint32_t g)
{
	size_t m = 0;

	for (uint32_t k = s->head[g]; k != NONE; k = s->next[k]) {
		size_t i = m++;

		while (i > 0 && start_of(s, s->order[i - 1]) > start_of(s, k)) {
			s->order[i] = s->order[i - 1];
			i--;
		}
		s->order[i] = k;
	}
	return m;
}

static bool overlapping(const struct scatter *s, size_t m)
{
	for (size_t i = 1; i < m; i++)
		if (start_of(s, s->order[i]) <
		    start_of(s, s->order[i - 1]) + s->remote[s->order[i - 1]].iov_len)
			return true;
	return false;
}

/* The merged read's vectors; returns the number of remote ranges, and
 * the local buffers' in *nlocal. */
static size_t build_merged(struct scatter *s, uint32_t ngroups, size_t *nlocal)
{
	size_t nl = 0, nr = 0;

	for (uint32_t g = 0; g < ngroups; g++) {
		size_t m = sort_group(s, g);

		if (m == 1 || overlapping(s, m)) {
			/* One byte cannot go to two buffers: read each alone. */
			for (size_t i = 0; i < m; i++) {
				uint32_t k = s->order[i];

				s->glocal[nl++] = s->local[k];
				s->gremote[nr] = s->remote[k];
				s->read_as[k] = (uint32_t)nr++;
			}
			continue;
		}
		uintptr_t first = start_of(s, s->order[0]), at = first;

		for (size_t i = 0; i < m; i++) {
			uint32_t k = s->order[i];

			if (start_of(s, k) > at)
				s->glocal[nl++] = (struct iovec){ s->sink, start_of(s, k) - at };
			s->glocal[nl++] = s->local[k];
			at = start_of(s, k) + s->local[k].iov_len;
			s->read_as[k] = (uint32_t)nr;
		}
		s->gremote[nr++] = (struct iovec){ (void *)first, at - first };
	}
	*nlocal = nl;
	return nr;
}

/* ---- the read ---------------------------------------------------------------- */

static size_t read_plain(struct scatter *s, pid_t pid)
{
	int got = remote_readv(pid, s->local, s->remote, (int)s->n);

	if (got < 0)
		got = 0;
	s->ranges_read = s->n;
	for (size_t k = (size_t)got; k < s->n; k++)
		if (s->arrived[k] != NULL)
			*s->arrived[k] = false;
	return (size_t)got;
}

size_t scatter_read(struct scatter *s, pid_t pid)
{
	size_t nlocal, nremote, lead = s->n;
	int got;

	if (s->n == 0)
		return 0;
	nremote = build_merged(s, group_by_page(s), &nlocal);
	if (nremote == s->n || nlocal > IOV_MAX || nremote > IOV_MAX)
		return read_plain(s, pid); /* nothing shares a page, or too many */
	s->ranges_read = nremote;
	got = remote_readv_gather(pid, s->glocal, (int)nlocal, s->gremote, (int)nremote);
	if (got < 0)
		got = 0;
	for (size_t k = 0; k < s->n; k++) {
		if (s->read_as[k] < (uint32_t)got)
			continue;
		if (lead == s->n)
			lead = k;
		if (s->arrived[k] != NULL)
			*s->arrived[k] = false;
	}
	return lead;
}

size_t scatter_ranges_read(const struct scatter *s)
{
	return s->ranges_read;
}
