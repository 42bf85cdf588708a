/* test_code_changed_retry.c - a code object freed and its address reused
 * by another while a tick read the stack: the check after the walk sees
 * the new fingerprint, and the reader reads the code there once more
 * within the tick (src/cpython/code_check.c), so the sample names the new
 * code instead of being refused as code_changed.  A code that changes
 * again before that one more read still tears the sample: one retry, no
 * wrong name.  Synthetic memory in a forked child (fake_reader.h), every
 * built-in offsets table.
 *
 * The test binary is linked with -Wl,--wrap=remote_read: the reader's
 * reads of single objects pass through __wrap_remote_read below, which
 * counts those of the code's address and can change the code in the child
 * just before one, the way the target would between two reads. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "fake_reader.h"
#include "target/remote_mem.h"

int __real_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);

/* What the wrapper does at the watched address. */
static struct watch {
	uintptr_t addr;             /* the code's address; 0: none */
	unsigned reads;             /* single reads of it seen */
	struct fake_reader *fr;     /* where to change it, when armed */
	uintptr_t swap_from;        /* armed: copy this code over it first */
} watch;

int __wrap_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len);
int __wrap_remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	if (watch.addr != 0 && addr == watch.addr) {
		watch.reads++;
		if (watch.swap_from != 0) {
			size_t size = watch.fr->o->co_code_adaptive + 2 * FAKE_CODE_UNITS;

			memcpy((void *)watch.addr, (const void *)watch.swap_from, size);
			fake_child_sync(&watch.fr->child, watch.addr, size);
			watch.swap_from = 0;
		}
	}
	return __real_remote_read(pid, addr, buf, len);
}

struct ctx {
	struct fake_reader fr;
	struct fake_thread t;
	uintptr_t mod, first, second; /* code objects */
	uintptr_t f;                   /* the frame the codes run in */
};

/* Frame f runs `code` at byte offset off. */
static void run_in_frame(struct ctx *c, uintptr_t code, int off)
{
	fake_w64(c->f + c->fr.o->if_code, c->fr.o->code_tagged ? code | 1 : code);
	fake_w64(c->f + c->fr.o->if_instr, code + c->fr.o->co_code_adaptive + (uintptr_t)off);
}

/* Code `from`'s bytes copied over the code at `to`: another code object
 * allocated at a freed one's address. */
static void code_over(struct ctx *c, uintptr_t to, uintptr_t from)
{
	memcpy((void *)to, (const void *)from, c->fr.o->co_code_adaptive + 2 * FAKE_CODE_UNITS);
}

/* <module> -> first, sampled; then first returned and second runs in its
 * frame, sampled: first is cached but on no stack, so the tick that finds
 * it again checks it only after the walk. */
static void ctx_init(struct ctx *c, size_t vi)
{
	memset(c, 0, sizeof(*c));
	fake_reader_start(&c->fr, py_offsets_at(vi));
	fake_thread_new(&c->fr.im, &c->t, c->fr.child.pid);
	c->mod = fake_code(&c->fr.im, "<module>", "/r.py", 1, 0);
	c->first = fake_code(&c->fr.im, "first", "/r.py", 10, 0);
	c->second = fake_code(&c->fr.im, "second", "/r.py", 20, 0);
	fake_push(&c->fr.im, &c->t, c->mod, 0);
	c->f = fake_push(&c->fr.im, &c->t, c->first, 2);
	fake_reader_publish(&c->fr);
	fake_reader_expect_frame(&c->fr, fake_reader_sample_one(&c->fr), 0, "first", 2, "first runs");
	run_in_frame(c, c->second, 4);
	fake_reader_publish(&c->fr);
	fake_reader_expect_frame(&c->fr, fake_reader_sample_one(&c->fr), 0, "second", 4, "second runs");
}

#define VERSION_TEST(name) FAKE_READER_VERSION_TEST(code_changed_retry, name)

/* first is freed, "third" allocated at its address and called in the
 * frame: the tick's walk names the cached first, the check after it sees
 * third, and the one more read gives third's name. */
VERSION_TEST(replaced_code_is_read_again_within_the_tick)
{
	struct ctx c;
	uintptr_t third;

	ctx_init(&c, *vi);
	third = fake_code(&c.fr.im, "third", "/t.py", 30, 0);
	code_over(&c, c.first, third);
	run_in_frame(&c, c.first, 6);
	fake_reader_publish(&c.fr);
	watch = (struct watch){ .addr = c.first };
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "third", 6, "third at first's address");
	fake_reader_expect_frame(&c.fr, py_reader_thread(c.fr.r, 0), 1, "<module>", 0, "third's caller");
	cr_expect_eq(watch.reads, 1, "3.%u: the code read again %u times in the tick",
	             c.fr.o->minor, watch.reads);
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "third", 6, "the next tick");
	watch = (struct watch){ 0 };
	fake_reader_end(&c.fr);
}

/* The same, but "fourth" takes the address again just before the one more
 * read: that read no longer shows what the check saw, so the sample is
 * torn as code_changed, after one read (no loop), never named first or
 * fourth.  The next tick names fourth. */
VERSION_TEST(code_changed_again_before_the_retry_is_code_changed)
{
	struct ctx c;
	uintptr_t third, fourth;
	const struct py_thread_sample *s;

	ctx_init(&c, *vi);
	third = fake_code(&c.fr.im, "third", "/t.py", 30, 0);
	fourth = fake_code(&c.fr.im, "fourth", "/f.py", 40, 0);
	code_over(&c, c.first, third);
	run_in_frame(&c, c.first, 6);
	fake_reader_publish(&c.fr);
	watch = (struct watch){ .addr = c.first, .fr = &c.fr, .swap_from = fourth };
	s = fake_reader_sample_one(&c.fr);
	cr_expect_eq(watch.reads, 1, "3.%u: the code read again %u times in the tick",
	             c.fr.o->minor, watch.reads);
	cr_expect_eq(watch.swap_from, 0, "3.%u: fourth never took the address", c.fr.o->minor);
	cr_assert_eq(s->status, PY_THREAD_ERROR, "3.%u: status %d, want code_changed",
	             c.fr.o->minor, s->status);
	cr_assert_eq(s->error_kind, SAMPLE_ERR_CODE_CHANGED, "3.%u: %s", c.fr.o->minor,
	             sample_error_name(s->error_kind));
	watch = (struct watch){ 0 };
	fake_reader_expect_frame(&c.fr, fake_reader_sample_one(&c.fr), 0, "fourth", 6, "the next tick");
	fake_reader_end(&c.fr);
}
