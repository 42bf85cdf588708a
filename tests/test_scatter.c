/* The tick's scatter read (src/cpython/scatter.c) asks the kernel for one
 * range per page its ranges lie on, and still delivers every range's own
 * bytes to its own buffer, with the arrival flags the kernel's "stops at
 * the first unreadable range" implies.  The memory is a forked child's:
 * pages whose every byte says where it is, and an unmapped hole. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpython/mem_region.h"
#include "cpython/scatter.h"

#define PAGES 4 /* 0, 1 and 3 readable; 2 a hole */

static uint8_t *map;
static size_t page;
static pid_t child;
static struct mem_region mem;
static struct scatter sc;

static uint8_t byte_at(size_t off)
{
	return (uint8_t)(off * 7 + off / 251);
}

static void start(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	map = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(map != MAP_FAILED);
	for (size_t i = 0; i < PAGES * page; i++)
		map[i] = byte_at(i);
	cr_assert(munmap(map + 2 * page, page) == 0);
	child = fork();
	cr_assert(child >= 0);
	if (child == 0)
		for (;;)
			pause();
	mem_region_init(&mem);
	cr_assert(scatter_init(&sc, &mem, 16) == 0);
}

static void stop(void)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	mem_region_release(&mem);
	munmap(map, 2 * page);
	munmap(map + 3 * page, page);
}

TestSuite(scatter, .init = start, .fini = stop);

struct want {
	size_t off, len;
	bool arrives;
};

/* Queue the ranges in order, read them, check each one's bytes and flag;
 * returns what scatter_read returned. */
static size_t read_and_check(const struct want *w, size_t n)
{
	static uint8_t bufs[16][512];
	bool arrived[16];
	size_t lead;

	scatter_reset(&sc);
	for (size_t i = 0; i < n; i++) {
		memset(bufs[i], 0xEE, sizeof(bufs[i]));
		scatter_add(&sc, bufs[i], (uintptr_t)(map + w[i].off), w[i].len, &arrived[i]);
	}
	lead = scatter_read(&sc, child);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(arrived[i], w[i].arrives, "range %zu at %zu: arrived %d", i, w[i].off,
		             arrived[i]);
		if (!arrived[i])
			continue;
		for (size_t b = 0; b < w[i].len; b++)
			if (bufs[i][b] != byte_at(w[i].off + b)) {
				cr_expect(false, "range %zu: byte %zu is 0x%02x, not 0x%02x", i, b,
				          bufs[i][b], byte_at(w[i].off + b));
				break;
			}
		cr_expect_eq(bufs[i][w[i].len], 0xEE, "range %zu wrote past its end", i);
	}
	return lead;
}

Test(scatter, ranges_on_one_page_are_one_read)
{
	/* Out of address order, with gaps, and a second page between. */
	const struct want w[] = {
		{ 600, 8, true },  { 100, 16, true }, { page + 40, 320, true },
		{ 300, 8, true },  { 2000, 128, true }, { page + 8, 16, true },
	};

	cr_assert_eq(read_and_check(w, 6), 6);
	cr_expect_eq(scatter_ranges_read(&sc), 2, "asked the kernel for %zu ranges",
	             scatter_ranges_read(&sc));
}

Test(scatter, overlapping_ranges_each_get_their_bytes)
{
	const struct want w[] = { { 100, 64, true }, { 132, 64, true }, { 100, 8, true } };

	cr_assert_eq(read_and_check(w, 3), 3);
}

Test(scatter, a_range_across_pages_is_read_alone)
{
	const struct want w[] = {
		{ page - 16, 32, true }, { 40, 8, true }, { page + 100, 8, true },
	};

	cr_assert_eq(read_and_check(w, 3), 3);
	cr_expect_eq(scatter_ranges_read(&sc), 3);
}

/* The kernel stops at the hole: what comes after it arrives only when
 * its page was read before the hole. */
Test(scatter, the_first_unreadable_range_ends_the_read)
{
	const struct want w[] = {
		{ 64, 8, true },          /* page 0 */
		{ page + 64, 8, true },   /* page 1 */
		{ 2 * page + 8, 8, false }, /* the hole */
		{ 512, 8, true },         /* page 0 again: read with the first */
		{ 3 * page + 8, 8, false }, /* page 3, after the hole */
	};

	cr_expect_eq(read_and_check(w, 5), 2, "the leading ranges that arrived");
}

/* After a barrier, a range on a page already queued is read on its own,
 * after everything before the barrier (a code's fingerprint after the
 * stack that names it). */
Test(scatter, a_barrier_keeps_later_ranges_later)
{
	static uint8_t a[8], b[8], c[8];
	bool got[3];

	scatter_reset(&sc);
	scatter_add(&sc, a, (uintptr_t)(map + 64), 8, &got[0]);
	scatter_add(&sc, b, (uintptr_t)(map + page + 64), 8, &got[1]);
	scatter_barrier(&sc);
	scatter_add(&sc, c, (uintptr_t)(map + 512), 8, &got[2]);
	cr_assert_eq(scatter_read(&sc, child), 3);
	cr_expect_eq(scatter_ranges_read(&sc), 3, "asked the kernel for %zu ranges",
	             scatter_ranges_read(&sc));
	cr_expect(got[2] && c[0] == byte_at(512));
	/* The same ranges without the barrier: page 0's two are one. */
	scatter_reset(&sc);
	scatter_add(&sc, a, (uintptr_t)(map + 64), 8, &got[0]);
	scatter_add(&sc, b, (uintptr_t)(map + page + 64), 8, &got[1]);
	scatter_add(&sc, c, (uintptr_t)(map + 512), 8, &got[2]);
	cr_assert_eq(scatter_read(&sc, child), 3);
	cr_expect_eq(scatter_ranges_read(&sc), 2);
}

Test(scatter, nothing_shared_reads_as_queued)
{
	const struct want w[] = { { 8, 8, true }, { page + 8, 8, true }, { 3 * page, 8, true } };

	cr_assert_eq(read_and_check(w, 3), 3);
	cr_expect_eq(scatter_ranges_read(&sc), 3);
}
