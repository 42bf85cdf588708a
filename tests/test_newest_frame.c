/* test_newest_frame.c - the newest frame read while the target changes
 * it (src/cpython/frame_walk_chunks.c).
 *
 * Its instruction pointer is stored at every instruction, and the kernel's
 * copy is not atomic per word: a read can mix the old pointer's bytes with
 * the new one's and point outside the frame's code.  The walker reads that
 * word alone once more, at most twice (settle_newest_instr), instead of
 * refusing the sample; frames below the newest, whose pointers nothing
 * stores, are never read again.
 *
 * On 3.14 and later a frame popped after the thread's newest-frame pointer
 * was read shows a null code reference (popped_newest): the walk starts at
 * its caller.  Older versions never clear it: a null code there is torn.
 *
 * Synthetic memory in a forked child (fake_reader.h), every built-in
 * offsets table.  The test binary is linked with -Wl,--wrap=remote_read:
 * the walker's reads of single words pass through __wrap_remote_read
 * below, which counts those of the watched word and can finish the
 * target's store just before one. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "fake_reader.h"
#include "sample_errors.h"
#include "target/remote_mem.h"

int __real_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);

/* What the wrapper does at the watched word. */
static struct watch {
	uintptr_t addr;         /* a frame's instruction pointer; 0: none */
	unsigned reads;         /* single reads of it seen */
	struct fake_reader *fr; /* where to store, when armed */
	uint64_t store;         /* armed (non-zero): the value stored first */
} watch;

int __wrap_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);
int __wrap_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	if (watch.addr != 0 && addr == watch.addr) {
		watch.reads++;
		if (watch.store != 0) {
			fake_w64(watch.addr, watch.store);
			fake_child_sync(&watch.fr->child, watch.addr, 8);
			watch.store = 0;
		}
	}
	return __real_remote_read(pid, addr, buf, len);
}

struct ctx {
	struct fake_reader fr;
	struct fake_thread t;
	uintptr_t mod, fn; /* code objects */
	uintptr_t fmod, f; /* their frames: <module> calls fn */
};

/* The instruction pointer `off` bytes into `code`'s bytecode. */
static uint64_t instr_at(const struct ctx *c, uintptr_t code, int off)
{
	return code + c->fr.o->co_code_adaptive + (uint64_t)(int64_t)off;
}

/* A pointer the way a torn copy leaves it: its low byte from the new
 * value, the rest from an old one a 256-byte boundary away, which puts it
 * past the end of the code. */
static uint64_t torn(const struct ctx *c, uintptr_t code)
{
	return instr_at(c, code, 2 * (int)FAKE_CODE_UNITS + 256);
}

/* s was refused as `kind`. */
static void expect_refused(struct ctx *c, const struct py_thread_sample *s,
                           enum sample_error kind, const char *when)
{
	cr_assert_eq(s->status, PY_THREAD_ERROR, "3.%u, %s: status %d, want an error",
	             c->fr.o->minor, when, s->status);
	cr_assert_eq(s->error_kind, kind, "3.%u, %s: %s, want %s", c->fr.o->minor, when,
	             sample_error_name(s->error_kind), sample_error_name(kind));
}

/* <module> -> fn at offset 4, sampled once so that both codes are cached
 * (a torn pointer is judged against its code's known length). */
static void ctx_init(struct ctx *c, size_t vi)
{
	memset(c, 0, sizeof(*c));
	fake_reader_start(&c->fr, py_offsets_at(vi));
	fake_thread_new(&c->fr.im, &c->t, c->fr.child.pid);
	c->mod = fake_code(&c->fr.im, "<module>", "/t.py", 1, 0);
	c->fn = fake_code(&c->fr.im, "fn", "/t.py", 10, 0);
	c->fmod = fake_push(&c->fr.im, &c->t, c->mod, 8);
	c->f = fake_push(&c->fr.im, &c->t, c->fn, 4);
	fake_reader_publish(&c->fr);
	fake_reader_expect_frame(&c->fr, fake_reader_sample_one(&c->fr), 0, "fn", 4, "fn runs");
}

#define VERSION_TEST(name) FAKE_READER_VERSION_TEST(newest_frame, name)

/* The copy caught fn's pointer mid-store; the store is done by the one
 * more read, which gives the true offset: the sample is taken, not
 * refused, after exactly one more read. */
VERSION_TEST(torn_pointer_is_read_again)
{
	struct ctx c;

	ctx_init(&c, *vi);
	fake_w64(c.f + c.fr.o->if_instr, torn(&c, c.fn));
	fake_reader_publish(&c.fr);
	watch = (struct watch){ .addr = c.f + c.fr.o->if_instr, .fr = &c.fr,
	                        .store = instr_at(&c, c.fn, 6) };
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "fn", 6, "fn's pointer read torn");
	fake_reader_expect_frame(&c.fr, py_reader_thread(c.fr.r, 0), 1, "<module>", 8, "fn's caller");
	cr_expect_eq(watch.reads, 1, "3.%u: the pointer read again %u times",
	             c.fr.o->minor, watch.reads);
	watch = (struct watch){ 0 };
	fake_reader_end(&c.fr);
}

/* A pointer that stays outside its code is not a store in flight: two more
 * reads at most, then the sample is refused as before, and the code's
 * cached entry is not what was wrong. */
VERSION_TEST(pointer_outside_after_two_reads_is_refused)
{
	struct ctx c;

	ctx_init(&c, *vi);
	fake_w64(c.f + c.fr.o->if_instr, torn(&c, c.fn));
	fake_reader_publish(&c.fr);
	watch = (struct watch){ .addr = c.f + c.fr.o->if_instr };
	expect_refused(&c, fake_reader_sample_one(&c.fr), SAMPLE_ERR_CODE, "fn's pointer outside fn");
	cr_expect_eq(watch.reads, 2, "3.%u: the pointer read again %u times, want 2",
	             c.fr.o->minor, watch.reads);
	fake_w64(c.f + c.fr.o->if_instr, instr_at(&c, c.fn, 6));
	fake_reader_publish(&c.fr);
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "fn", 6, "the next tick");
	watch = (struct watch){ 0 };
	fake_reader_end(&c.fr);
}

/* A caller's pointer waits in its call: one outside its code is refused
 * without reading it again, and a newest frame's pointer inside its code
 * costs no read either. */
VERSION_TEST(only_the_newest_frame_is_read_again)
{
	struct ctx c;

	ctx_init(&c, *vi);
	watch = (struct watch){ .addr = c.f + c.fr.o->if_instr };
	for (int i = 0; i < 3; i++)
		fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "fn", 4, "a steady stack");
	cr_expect_eq(watch.reads, 0, "3.%u: a pointer inside its code read again %u times",
	             c.fr.o->minor, watch.reads);
	fake_w64(c.fmod + c.fr.o->if_instr, torn(&c, c.mod));
	fake_reader_publish(&c.fr);
	watch = (struct watch){ .addr = c.fmod + c.fr.o->if_instr };
	expect_refused(&c, fake_reader_sample_one(&c.fr), SAMPLE_ERR_CODE,
	               "<module>'s pointer outside <module>");
	cr_expect_eq(watch.reads, 0, "3.%u: the caller's pointer read again %u times",
	             c.fr.o->minor, watch.reads);
	watch = (struct watch){ 0 };
	fake_reader_end(&c.fr);
}

/* fn's frame, pushed on fn2's, as 3.14 leaves a frame it pops: its code
 * reference the tagged null (older versions: never so). */
static void pop_frame(struct ctx *c, uintptr_t f)
{
	fake_w64(f + c->fr.o->if_code, c->fr.o->code_tagged ? 1 : 0);
}

/* fn returned, and fn2, which <module> called next in the same place,
 * returned too, both after the thread's newest-frame pointer was read:
 * on 3.14 and later the sample shows <module>, the frame that runs; on
 * older versions a null code is no pop but a torn frame. */
VERSION_TEST(popped_newest_frames_start_at_their_caller)
{
	struct ctx c;
	const struct py_thread_sample *s;
	uintptr_t fn2, f2;

	ctx_init(&c, *vi);
	fn2 = fake_code(&c.fr.im, "fn2", "/t.py", 20, 0);
	f2 = fake_push(&c.fr.im, &c.t, fn2, 2);
	fake_reader_publish(&c.fr);
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "fn2", 2, "fn2 runs");
	pop_frame(&c, f2);
	pop_frame(&c, c.f);
	fake_reader_publish(&c.fr);
	s = fake_reader_sample_one(&c.fr);
	if (!c.fr.o->code_tagged) {
		expect_refused(&c, s, SAMPLE_ERR_FRAME, "a null code before 3.14");
	} else {
		fake_reader_expect_frame(&c.fr, s, 0, "<module>", 8, "fn and fn2 popped");
		cr_assert_eq(s->nframes, 1, "3.%u: %u frames", c.fr.o->minor, s->nframes);
	}
	fake_reader_end(&c.fr);
}

/* A null code below a Python frame is no pop in flight (frames are popped
 * newest first): torn, on every version. */
VERSION_TEST(null_code_below_the_newest_is_torn)
{
	struct ctx c;

	ctx_init(&c, *vi);
	pop_frame(&c, c.fmod);
	fake_reader_publish(&c.fr);
	expect_refused(&c, fake_reader_sample_one(&c.fr), SAMPLE_ERR_FRAME, "a null caller");
	fake_reader_end(&c.fr);
}
