/* test_json_arena.c - a JSON block's tree lives in its own chunks
 * (ui/json_arena.h): printing blocks between the aggregator's long-lived
 * allocations leaves no free holes behind in the heap, values made
 * outside a block are freed by the heap, and another thread's values
 * never land in this thread's arena. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_builder.h"
#include "../ui/json_arena.h"
#include "../ui/json_out.h"

#define ROWS 2000

/* The sanitizer's allocator is not glibc's: mallinfo2 says nothing there,
 * so the heap test runs in the gcc build only. */
#if defined(__SANITIZE_ADDRESS__)
#define NOT_GLIBC_MALLOC true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOT_GLIBC_MALLOC true
#endif
#endif
#ifndef NOT_GLIBC_MALLOC
#define NOT_GLIBC_MALLOC false
#endif

/* A snapshot with ROWS functions and ROWS lines, each a distinct name. */
static struct snapshot big_snapshot(char names[][32])
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.11.2", 100000);
	struct snap_func *f = sb_funcs(&s, ROWS);
	struct snap_line *l = sb_lines(&s, ROWS);
	for (size_t i = 0; i < ROWS; i++) {
		snprintf(names[i], 32, "render_%zu", i);
		f[i].name = l[i].name = names[i];
		f[i].file = l[i].file = "<template>";
		f[i].line = l[i].line = (int)i + 1;
		f[i].c.own = l[i].c.own = ROWS - i;
		f[i].c.total = l[i].c.total = 2 * (ROWS - i);
	}
	return s;
}

/* The service soak's pattern: a block printed every refresh, and between
 * two blocks the aggregator keeps a few new small things (a new code's
 * strings, a row).  Without the arena the long-lived blocks landed in the
 * holes each freed tree left and pinned its pages: the heap's free bytes
 * grew with the blocks (2.5 MiB free after 40 blocks here, against
 * 0.1 MiB with the arena). */
Test(json_arena, blocks_leave_no_holes_between_long_lived_data,
     .disabled = NOT_GLIBC_MALLOC)
{
	static char names[ROWS][32];
	struct snapshot s = big_snapshot(names);
	FILE *out = fopen("/dev/null", "w");
	enum { BLOCKS = 40, KEPT = 200 };
	static void *kept[BLOCKS * KEPT];

	cr_assert_not_null(out);
	for (size_t b = 0; b < BLOCKS; b++) {
		cr_assert_eq(json_out_print(out, &s), 0);
		for (size_t k = 0; k < KEPT; k++) {
			kept[b * KEPT + k] = malloc(24 + (k % 5) * 16);
			cr_assert_not_null(kept[b * KEPT + k]);
		}
	}
	(void)malloc_trim(0);
	struct mallinfo2 mi = mallinfo2();
	cr_expect_lt(mi.fordblks, 512u << 10,
	             "the heap keeps %zu bytes free (in use %zu) after %d blocks",
	             mi.fordblks, mi.uordblks, BLOCKS);
	for (size_t i = 0; i < BLOCKS * KEPT; i++)
		free(kept[i]);
	fclose(out);
	snapshot_free(&s);
}

/* The tree was built in the arena: it handed out at least the printed
 * line's size, and the line is whole JSON. */
Test(json_arena, a_block_is_built_in_the_arena)
{
	static char names[ROWS][32];
	struct snapshot s = big_snapshot(names);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert_not_null(out);
	json_arena_install();
	json_arena_begin();
	json_t *probe = json_string("probe");
	size_t used = json_arena_used();
	json_decref(probe);
	json_arena_end();
	cr_expect_gt(used, 0u, "a value made between begin and end is not in the arena");
	cr_expect_eq(json_arena_used(), 0u);
	cr_assert_eq(json_out_print(out, &s), 0);
	fclose(out);
	json_error_t err;
	json_t *j = json_loads(buf, 0, &err);
	cr_assert_not_null(j, "%s", err.text);
	cr_expect_eq(json_array_size(json_object_get(j, "functions")) > 0, true);
	json_decref(j);
	free(buf);
	snapshot_free(&s);
}

/* A value made before begin is freed by the heap inside the block (the
 * sanitizer build catches a wrong free), and one made after end is in
 * the heap again. */
Test(json_arena, values_made_outside_a_block_use_the_heap)
{
	json_arena_install();
	json_t *before = json_pack("{s:s, s:i}", "name", "outside", "n", 7);
	cr_assert_not_null(before);
	json_arena_begin();
	json_t *inside = json_pack("{s:o}", "kept", before);
	cr_assert_not_null(inside);
	json_decref(inside); /* frees `before` too: a heap block */
	json_arena_end();
	json_arena_begin();
	json_arena_end();
	json_t *after = json_string("after");
	cr_assert_not_null(after);
	cr_expect_eq(json_arena_used(), 0u);
	cr_expect_str_eq(json_string_value(after), "after");
	json_decref(after);
}

struct other_thread {
	pthread_barrier_t made, ended;
	json_t *value;
};

static void *other_thread_main(void *arg)
{
	struct other_thread *t = arg;
	t->value = json_pack("{s:s}", "from", "another thread");
	pthread_barrier_wait(&t->made);
	pthread_barrier_wait(&t->ended);
	return NULL;
}

/* Another thread's value, made while this thread's block is open, must
 * outlive the block's chunks: read after json_arena_end. */
Test(json_arena, another_threads_values_are_not_in_this_arena)
{
	struct other_thread t = { .value = NULL };
	pthread_t th;

	json_arena_install();
	pthread_barrier_init(&t.made, NULL, 2);
	pthread_barrier_init(&t.ended, NULL, 2);
	json_arena_begin();
	json_t *mine = json_string("mine");
	cr_assert_eq(pthread_create(&th, NULL, other_thread_main, &t), 0);
	pthread_barrier_wait(&t.made);
	size_t used = json_arena_used();
	json_decref(mine);
	json_arena_end();
	pthread_barrier_wait(&t.ended);
	pthread_join(th, NULL);
	cr_assert_not_null(t.value);
	char *text = json_dumps(t.value, JSON_COMPACT);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, "{\"from\":\"another thread\"}");
	free(text);
	json_decref(t.value);
	cr_expect_lt(used, 256u, "the other thread's value was counted in this arena (%zu bytes)", used);
	pthread_barrier_destroy(&t.made);
	pthread_barrier_destroy(&t.ended);
}
