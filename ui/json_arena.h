/* json_arena.h - a private region for the JSON tree of one batch block.
 *
 * Each `-b --json` block builds a jansson tree of tens of thousands of
 * small objects, prints it and frees it, every refresh.  In the heap those
 * allocations interleave with the aggregator's long-lived ones (strings,
 * codes, rows added between blocks), which then pin the pages the tree
 * freed: over an hour of code churn the heap held 3 MiB free that
 * malloc_trim could not give back.  Inside json_arena_begin/end, jansson
 * allocates from chunks of its own, unmapped at json_arena_end, so the
 * heap holds only what outlives a block.
 *
 * Rules: json_arena_install() once, before any JSON is built; between
 * begin and end, the calling thread's JSON values live in the arena and
 * must all be released before end (jansson's free of an arena block is a
 * no-op; end gives the chunks back).  Other threads, and this thread
 * outside begin/end, use the heap as before.  Not nestable. */
#ifndef PYTOP_JSON_ARENA_H
#define PYTOP_JSON_ARENA_H

#include <stdbool.h>
#include <stddef.h>

void json_arena_install(void);
void json_arena_begin(void);
void json_arena_end(void);
/* Bytes handed out since begin (0 outside begin/end): for the tests. */
size_t json_arena_used(void);

#endif
