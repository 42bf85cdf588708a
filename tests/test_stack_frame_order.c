/* test_stack_frame_order.c - the stack table numbers frames in the order
 * they were first seen, leaf first within a stack (as the aggregator
 * resolves a sample's frames), and a fold keeps that order: a line's name
 * derived from the stacks is the first function seen on it, as the line
 * rows name it (profile/stack_derive.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdlib.h>

#include "profile/stack_table.h"

static uint32_t intern(struct stack_table *t, uint32_t leaf, uint32_t caller)
{
	struct stack_frame f[2] = { { leaf, 10 }, { caller, 10 } };
	return stack_table_intern(t, f, 2);
}

/* The frame ids of code ids a, b, c (UINT32_MAX: absent). */
static void ids_of(const struct stack_table *t, const uint32_t *codes, size_t n,
                   uint32_t *ids)
{
	for (size_t k = 0; k < n; k++) {
		ids[k] = UINT32_MAX;
		for (size_t i = 1; i < t->nframes; i++)
			if (t->frames[i].code_id == codes[k])
				ids[k] = (uint32_t)i;
	}
}

Test(stack_frame_order, leaf_first_and_kept_across_a_fold)
{
	struct stack_table t;
	const uint32_t codes[] = { 3, 2, 1 }; /* in the order first seen */
	uint32_t ids[3];
	cr_assert(stack_table_init(&t));
	/* A generator expression (3) under its function (2), then the
	 * function under main (1): seen in the order 3, 2, 1. */
	uint32_t rare = intern(&t, 3, 2), hot = intern(&t, 2, 1);
	cr_assert(rare != STACK_NO_CELL && hot != STACK_NO_CELL);
	ids_of(&t, codes, 3, ids);
	cr_expect(ids[0] < ids[1] && ids[1] < ids[2],
	          "frames numbered %u %u %u for codes 3 2 1", ids[0], ids[1], ids[2]);
	/* The hot stack is kept, the rare one folds: its leaf's frame goes,
	 * the two others stay in their order. */
	cr_assert_neq(stack_table_count(&t, hot, 1, 1, 1000), STACK_NO_CELL);
	cr_assert_neq(stack_table_count(&t, hot, 1, 1, 1000), STACK_NO_CELL);
	cr_assert_neq(stack_table_count(&t, rare, 1, 1, 1000), STACK_NO_CELL);
	uint32_t *map = stack_table_fold(&t, 1, NULL, NULL);
	cr_assert_not_null(map);
	free(map);
	ids_of(&t, codes, 3, ids);
	cr_expect_eq(ids[0], UINT32_MAX, "the folded stack's leaf stayed");
	cr_expect(ids[1] != UINT32_MAX && ids[2] != UINT32_MAX && ids[1] < ids[2],
	          "after the fold: frames %u %u for codes 2 1", ids[1], ids[2]);
	stack_table_destroy(&t);
}
