/* A reader's memory (src/cpython/mem_region.h): handed out zeroed,
 * aligned and apart; costs no page until touched; and goes back to the
 * kernel, all of it, when the region is released - the property that
 * keeps pytop -s flat through a fork storm. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cpython/mem_region.h"

#define SMALL 3000
#define BIG (8u << 20) /* the reader's tick arena */

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Resident pages of [p, p + n), or -1 with errno ENOMEM once unmapped. */
static long resident(const void *p, size_t n)
{
	uintptr_t start = (uintptr_t)p & ~(page() - 1);
	size_t pages = ((uintptr_t)p + n - start + page() - 1) / page();
	unsigned char vec[4096];
	long count = 0;

	cr_assert_leq(pages, sizeof vec);
	if (mincore((void *)start, pages * page(), vec) != 0)
		return -1;
	for (size_t i = 0; i < pages; i++)
		count += vec[i] & 1;
	return count;
}

Test(mem_region, small_allocations_are_zeroed_aligned_and_apart)
{
	struct mem_region m;
	static uint8_t *p[SMALL];

	mem_region_init(&m);
	for (size_t i = 0; i < SMALL; i++) {
		size_t n = 1 + i % 700;
		p[i] = mem_region_alloc(&m, n);
		cr_assert_not_null(p[i]);
		cr_assert_eq((uintptr_t)p[i] % 16, 0, "allocation %zu not 16-aligned", i);
		for (size_t k = 0; k < n; k++)
			cr_assert_eq(p[i][k], 0, "allocation %zu byte %zu not zero", i, k);
		memset(p[i], (int)(i & 0xff) | 1, n);
	}
	for (size_t i = 0; i < SMALL; i++)
		for (size_t k = 0; k < 1 + i % 700; k++)
			cr_assert_eq(p[i][k], (i & 0xff) | 1, "allocation %zu overwritten", i);
	mem_region_release(&m);
}

Test(mem_region, a_table_costs_only_the_pages_touched)
{
	struct mem_region m;

	mem_region_init(&m);
	uint8_t *a = mem_region_alloc(&m, BIG);
	cr_assert_not_null(a);
	/* At most the page the block's header shares with the table. */
	cr_expect_leq(resident(a, BIG), 1, "untouched table: %ld pages resident",
	              resident(a, BIG));
	a[0] = 1;
	a[BIG - 1] = 1;
	cr_expect_leq(resident(a, BIG), 2, "two bytes touched, %ld pages resident",
	              resident(a, BIG));
	mem_region_release(&m);
}

Test(mem_region, release_gives_every_block_back)
{
	struct mem_region m;
	uint8_t *big, *small[64];

	mem_region_init(&m);
	big = mem_region_alloc(&m, BIG);
	cr_assert_not_null(big);
	memset(big, 1, BIG);
	for (size_t i = 0; i < 64; i++) {
		small[i] = mem_region_alloc(&m, 20000); /* several shared blocks */
		cr_assert_not_null(small[i]);
		memset(small[i], 1, 20000);
	}
	cr_assert_geq(m.mapped, BIG + 64 * 20000);
	mem_region_release(&m);
	cr_expect_eq(m.mapped, 0);
	errno = 0;
	cr_expect_eq(resident(big, BIG), -1, "the big table is still mapped");
	cr_expect_eq(errno, ENOMEM);
	for (size_t i = 0; i < 64; i++)
		cr_expect_eq(resident(small[i], 20000), -1, "small table %zu still mapped", i);
	/* Initialised again by the release: usable at once. */
	cr_expect_not_null(mem_region_alloc(&m, 100));
	mem_region_release(&m);
}

Test(mem_region, a_size_no_mapping_can_hold_is_refused)
{
	struct mem_region m;

	mem_region_init(&m);
	errno = 0;
	cr_expect_null(mem_region_alloc(&m, SIZE_MAX - 8));
	cr_expect_eq(errno, ENOMEM);
	mem_region_release(&m);
}
