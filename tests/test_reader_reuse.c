/* A stack spanning data-stack chunks is read, from its second walk on,
 * as its newest chunk plus the frames below that chunk's first frame kept
 * from the last walk, while the thread took no page fault since
 * (src/cpython/frame_walk_chunks.c, frame_walk_kept.h).  Synthetic
 * memory in a forked child (fake_python.h); where the test rebuilds the
 * stack, the sampled thread is the child's main thread, so that its own
 * writes into freshly mapped pages are the page faults the reuse must
 * notice.
 *
 * That only the newest chunk is read shows as the sample staying whole
 * while the older chunks are unreadable in the child; that a stack which
 * changed below is never shown with the old frames, as the new frames in
 * the sample after the chunks were mapped again. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "cpython/py_runtime.h"
#include "fake_reader.h"
#include "target/proc_threads.h"

#define DEPTH 400  /* frames of f: three chunks of FAKE_FRAME_SIZE frames */
#define PAGE 4096u

struct ctx {
	struct fake_reader fr;
	struct fake_thread t;
	uintptr_t main_code, f_code, g_code, leaf_code;
	uintptr_t chunks[4];        /* the thread's chunks, root first */
	size_t nchunks;
	uintptr_t frames[DEPTH + 2]; /* main, f x DEPTH, leaf */
};

static void remember_chunk(struct ctx *c)
{
	if (c->nchunks == 0 || c->chunks[c->nchunks - 1] != c->t.chunk)
		c->chunks[c->nchunks++] = c->t.chunk;
}

/* main -> f x DEPTH -> leaf, published.  The sampled thread is the
 * child's main thread, whose writes into the child's memory (the test's
 * changes) are its own page faults where they land on fresh pages, or
 * (asleep) a thread of its own that never faults, whatever the child's
 * main thread does (under the sanitizers each command may fault). */
static void ctx_init(struct ctx *c, const struct py_offsets *o, bool asleep)
{
	memset(c, 0, sizeof(*c));
	fake_reader_start(&c->fr, o);
	c->main_code = fake_code(&c->fr.im, "main", "/app/m.py", 1, 0);
	c->f_code = fake_code(&c->fr.im, "f", "/app/m.py", 10, 0);
	c->g_code = fake_code(&c->fr.im, "g", "/app/m.py", 20, 0);
	c->leaf_code = fake_code(&c->fr.im, "leaf", "/app/m.py", 30, 0);
	fake_thread_new(&c->fr.im, &c->t, c->fr.child.pid);
	remember_chunk(c);
	c->frames[0] = fake_push(&c->fr.im, &c->t, c->main_code, 8);
	for (int i = 1; i <= DEPTH; i++) {
		c->frames[i] = fake_push(&c->fr.im, &c->t, c->f_code, 4);
		remember_chunk(c);
	}
	c->frames[DEPTH + 1] = fake_push(&c->fr.im, &c->t, c->leaf_code, 2);
	cr_assert_eq(c->nchunks, 3, "the stack spans %zu chunks", c->nchunks);
	/* The sleeping thread stores its TID in the image before it is
	 * published. */
	if (asleep)
		fake_child_thread(&c->fr.child, c->t.tstate + o->ts_native_tid);
	fake_reader_publish(&c->fr);
}

static void ctx_end(struct ctx *c)
{
	fake_reader_end(&c->fr);
}

static const struct py_thread_sample *ctx_sample(struct ctx *c)
{
	const struct py_thread_sample *s;

	cr_assert_eq(py_reader_sample(c->fr.r, c->fr.pt, true), 1);
	s = py_reader_thread(c->fr.r, 0);
	cr_assert_not_null(s);
	return s;
}

/* The sample's frames, leaf first, runs of one code counted:
 * "leaf f*400 main". */
static void describe(struct ctx *c, const struct py_thread_sample *s, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	if (s->status != PY_THREAD_OK) {
		snprintf(out, cap, "error %d", (int)s->error_kind);
		return;
	}
	for (uint32_t i = 0; i < s->nframes;) {
		const struct py_code *code = py_reader_code(c->fr.r, s->frames[i].code_id);
		uint32_t run = 1;

		while (i + run < s->nframes && s->frames[i + run].code_id == s->frames[i].code_id)
			run++;
		len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "%s%s",
		                        len ? " " : "", code ? code->qualname : "?");
		if (run > 1)
			len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, "*%u", run);
		i += run;
	}
}

static void expect_stack(struct ctx *c, const char *want, const char *when)
{
	char got[256];

	describe(c, ctx_sample(c), got, sizeof(got));
	cr_expect_str_eq(got, want, "3.%u, %s: %s", c->fr.o->minor, when, got);
}

/* The walks that make the last one reusable: the first finds the stack
 * spans chunks, the second keeps its frames (and the first stat read of
 * the thread tells no fault count yet). */
static void warm_up(struct ctx *c)
{
	for (int i = 0; i < 3; i++)
		expect_stack(c, "leaf f*400 main", "warm-up");
}

/* Make chunk i unreadable in the child (its whole pages inside it). */
static void hide_chunk(struct ctx *c, size_t i)
{
	uintptr_t lo = (c->chunks[i] + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	uintptr_t hi = (c->chunks[i] + FAKE_CHUNK_SIZE) & ~(uintptr_t)(PAGE - 1);

	cr_assert_gt(hi, lo);
	fake_child_protect(&c->fr.child, lo, hi - lo);
}

static void for_reusing_versions(void (*body)(struct ctx *), bool asleep)
{
	size_t tested = 0;

	for (size_t i = 0; py_offsets_at(i) != NULL; i++) {
		struct ctx c;

		if (py_offsets_at(i)->minor > 13)
			continue;
		ctx_init(&c, py_offsets_at(i), asleep);
		body(&c);
		ctx_end(&c);
		tested++;
	}
	cr_assert_geq(tested, 3, "3.11, 3.12 and 3.13 at least");
}

static void unchanged(struct ctx *c)
{
	warm_up(c);
	hide_chunk(c, 0);
	hide_chunk(c, 1);
	expect_stack(c, "leaf f*400 main", "older chunks unreadable, nothing changed");
	expect_stack(c, "leaf f*400 main", "and again");
}

Test(reader_reuse, unchanged_stack_reads_only_its_newest_chunk)
{
	for_reusing_versions(unchanged, true);
}

static void top_changed(struct ctx *c)
{
	uintptr_t top_before = c->t.top;

	warm_up(c);
	hide_chunk(c, 0);
	hide_chunk(c, 1);
	/* leaf returned, two calls made instead, all in the newest chunk */
	c->t.top -= FAKE_FRAME_SIZE;
	fake_set_current(&c->fr.im, &c->t, c->frames[DEPTH]);
	fake_push(&c->fr.im, &c->t, c->g_code, 6);
	fake_push(&c->fr.im, &c->t, c->leaf_code, 4);
	fake_child_sync(&c->fr.child, c->t.chunk, c->t.top - c->t.chunk);
	fake_child_sync(&c->fr.child, c->t.tstate, 512);
	if (c->t.cframe)
		fake_child_sync(&c->fr.child, c->t.cframe, 32);
	cr_assert_gt(c->t.top, top_before);
	expect_stack(c, "leaf g f*400 main", "the newest frames changed");
}

Test(reader_reuse, changed_top_is_read_afresh_and_the_rest_kept)
{
	for_reusing_versions(top_changed, true);
}

/* Between two samples the thread returned to frame 10 and called back
 * down to the same depth through g instead of f: the frames are at the
 * same addresses, the newest ones the same code at the same instruction,
 * and only the older chunks say otherwise.  CPython freed the two newer
 * chunks on the way up and mapped them again on the way down. */
static void up_and_down(struct ctx *c)
{
	uintptr_t lo = c->chunks[1] & ~(uintptr_t)(PAGE - 1);
	uintptr_t hi = (c->chunks[2] + FAKE_CHUNK_SIZE + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
	char want[64];
	int from = 200, to = 300; /* in the middle chunk */

	warm_up(c);
	for (int i = from; i < to; i++) {
		fake_w64(c->frames[i] + c->fr.o->if_code,
		         c->fr.o->code_tagged ? c->g_code | 1 : c->g_code);
		fake_w64(c->frames[i] + c->fr.o->if_instr, c->g_code + c->fr.o->co_code_adaptive + 6);
	}
	cr_assert_lt(c->frames[from], c->chunks[2]);
	cr_assert_gt(c->frames[from], c->chunks[1]);
	fake_child_remap(&c->fr.child, lo, hi - lo);
	fake_child_sync(&c->fr.child, lo, hi - lo);
	snprintf(want, sizeof(want), "leaf f*%d g*%d f*%d main", DEPTH - to + 1, to - from,
	         from - 1);
	expect_stack(c, want, "went up and down again through other code");
	expect_stack(c, want, "and the next sample");
}

Test(reader_reuse, stack_rebuilt_below_the_top_is_never_shown_stale)
{
	for_reusing_versions(up_and_down, false);
}

/* The newest chunk returned (CPython freed it): the chunk below is now
 * the live one, and the frames below its first frame are still kept. */
static void returned_across(struct ctx *c)
{
	uintptr_t first_in_top = c->chunks[2] + c->fr.o->chunk_data;
	char want[64];
	int i = DEPTH;

	warm_up(c);
	while (c->frames[i] != first_in_top)
		i--;
	/* frames[i - 1], the last one of the middle chunk, is the leaf now */
	c->t.chunk = c->chunks[1];
	c->t.top = c->frames[i - 1] + FAKE_FRAME_SIZE;
	fake_store_stack(&c->fr.im, &c->t);
	fake_set_current(&c->fr.im, &c->t, c->frames[i - 1]);
	fake_child_sync(&c->fr.child, c->t.tstate, 512);
	if (c->t.cframe)
		fake_child_sync(&c->fr.child, c->t.cframe, 32);
	hide_chunk(c, 2); /* freed */
	snprintf(want, sizeof(want), "f*%d main", i - 1);
	expect_stack(c, want, "the middle chunk is the newest again");
	hide_chunk(c, 0);
	expect_stack(c, want, "the root chunk unreadable");
}

Test(reader_reuse, return_across_a_chunk_keeps_the_frames_below)
{
	for_reusing_versions(returned_across, true);
}

/* A call that needs a new chunk maps it: the fault sends the walk to the
 * older chunks again, and the sample is whole. */
static void called_across(struct ctx *c)
{
	warm_up(c);
	fake_new_chunk(&c->fr.im, &c->t, 0);
	fake_push(&c->fr.im, &c->t, c->g_code, 2);
	fake_child_sync(&c->fr.child, (uintptr_t)c->fr.im.base, c->fr.im.used);
	expect_stack(c, "g leaf f*400 main", "a new chunk on top");
	expect_stack(c, "g leaf f*400 main", "and the next sample");
}

Test(reader_reuse, call_into_a_new_chunk_reads_the_whole_stack)
{
	for_reusing_versions(called_across, false);
}

/* 3.14 and later keep a freed chunk cached and take it back without a
 * page fault: nothing tells the frames below changed, so every sample
 * reads them. */
Test(reader_reuse, versions_caching_a_chunk_read_every_chunk)
{
	size_t tested = 0;

	for (size_t i = 0; py_offsets_at(i) != NULL; i++) {
		struct ctx c;

		if (py_offsets_at(i)->minor <= 13)
			continue;
		ctx_init(&c, py_offsets_at(i), true);
		warm_up(&c);
		hide_chunk(&c, 0);
		{
			char got[256];

			describe(&c, ctx_sample(&c), got, sizeof(got));
			cr_expect(strncmp(got, "error", 5) == 0,
			          "3.%u read no older chunk: %s", c.fr.o->minor, got);
		}
		ctx_end(&c);
		tested++;
	}
	cr_assert_geq(tested, 1);
}
