/* The code cache's address -> slot index (src/cpython/code_index.h): every
 * address put is found with its latest id, absent ones are not, through
 * growth and after clearing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>

#include "cpython/code_index.h"

#define BASE 0x7f0000001000ull
#define N 20000 /* several growths past the initial 1024 slots */

/* Code objects are 8-aligned heap pointers, a few hundred bytes apart. */
static uintptr_t addr_of(size_t i)
{
	return (uintptr_t)(BASE + i * 184);
}

Test(code_index, finds_every_address_with_its_latest_id)
{
	struct code_index ix;
	uint32_t id;

	cr_assert_eq(code_index_init(&ix), 0);
	for (size_t i = 0; i < N; i++)
		cr_assert_eq(code_index_put(&ix, addr_of(i), (uint32_t)i), 0);
	for (size_t i = 0; i < N; i += 3) /* a new code at a reused address */
		cr_assert_eq(code_index_put(&ix, addr_of(i), (uint32_t)(i + N)), 0);
	cr_expect_eq(ix.count, N);
	cr_expect_geq(ix.cap, 2 * ix.count);
	for (size_t i = 0; i < N; i++) {
		cr_assert(code_index_get(&ix, addr_of(i), &id), "lost %zu", i);
		cr_assert_eq(id, i % 3 == 0 ? i + N : i);
	}
	cr_expect_not(code_index_get(&ix, addr_of(N), &id));
	cr_expect_not(code_index_get(&ix, addr_of(0) + 8, &id));
	cr_expect_not(code_index_get(&ix, 0, &id));
	code_index_destroy(&ix);
}

Test(code_index, clear_forgets_everything_and_keeps_working)
{
	struct code_index ix;
	size_t cap;
	uint32_t id;

	cr_assert_eq(code_index_init(&ix), 0);
	for (size_t i = 0; i < 3000; i++)
		cr_assert_eq(code_index_put(&ix, addr_of(i), (uint32_t)i), 0);
	cap = ix.cap;
	code_index_clear(&ix);
	cr_expect_eq(ix.count, 0);
	cr_expect_eq(ix.cap, cap, "clearing kept its memory");
	for (size_t i = 0; i < 3000; i++)
		cr_assert_not(code_index_get(&ix, addr_of(i), &id));
	cr_assert_eq(code_index_put(&ix, addr_of(7), 70), 0);
	cr_assert(code_index_get(&ix, addr_of(7), &id));
	cr_expect_eq(id, 70);
	code_index_destroy(&ix);
}
