/* make_reader_seeds.c - writes fuzz_reader's seed corpus: for every
 * built-in version, fake CPython address spaces (tests/fake_python.c)
 * with well-formed stacks, dumped with the header of fuzz_reader.h.  On
 * 3.13+ also one whose layout comes from a _Py_DebugOffsets table, as
 * attaching to a real 3.13+ does.
 *
 * Usage: make_reader_seeds DIR  (built by `make fuzz`; its output is
 * committed under fuzz/corpus/reader/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_python.h"
#include "fuzz_reader.h"
#include "cpython/py_offsets.h"

#define TABLE_BYTES 1024

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* What the target changes between the first and the second tick: one
 * 64-bit word (see fuzz_reader.h's patch). */
struct change {
	uintptr_t addr; /* 0 = none */
	uint64_t value;
};

static void write_seed(const char *dir, const char *name, const struct fake_image *im,
                       size_t version, uint8_t flags, struct change c)
{
	struct fuzz_reader_header h = {
		.version = (uint8_t)version, .flags = flags,
		.patch_len = c.addr != 0 ? sizeof(c.value) : 0,
		.patch_at = c.addr != 0 ? (uint32_t)(c.addr - (uintptr_t)im->base) : 0,
		.base = (uint64_t)(uintptr_t)im->base,
		.runtime = im->runtime, .pycode_type = im->pycode_type,
	};
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/3.%u-%s", dir, im->o->minor, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(im->base, im->used, 1, f) != 1 ||
	    fwrite(&c.value, h.patch_len, 1, f) != (h.patch_len ? 1u : 0u) || fclose(f) != 0)
		die(path);
}

/* Which py_offsets field (a uint32_t, by its offset in the struct) the
 * debug table's slot `at` feeds, found by asking py_offsets_from_debug
 * with a marker in that slot alone; SIZE_MAX when none. */
static size_t field_of_slot(unsigned minor, size_t at)
{
	enum { MARK = 200 }; /* below every entry's sanity limit */
	uint8_t t[TABLE_BYTES] = "xdebugpy";
	struct py_offsets o;
	uint64_t mark = MARK;

	memcpy(t + at, &mark, sizeof(mark));
	memset(&o, 0, sizeof(o));
	(void)py_offsets_from_debug(t, sizeof(t), minor, &o);
	for (size_t f = 0; f + 4 <= offsetof(struct py_offsets, call_ops); f += 4) {
		uint32_t v;

		memcpy(&v, (const uint8_t *)&o + f, sizeof(v));
		if (v == MARK)
			return f;
	}
	return SIZE_MAX;
}

/* A debug table at the start of the runtime that describes o's layout. */
static void debug_table(const struct fake_image *im)
{
	uint8_t *t = (uint8_t *)im->runtime;

	memcpy(t, "xdebugpy", 8);
	for (size_t at = 8; at + 8 <= TABLE_BYTES && at + 8 <= im->o->rt_interp_head; at += 8) {
		size_t f = field_of_slot(im->o->minor, at);
		uint32_t v;
		uint64_t w;

		if (f == SIZE_MAX)
			continue;
		memcpy(&v, (const uint8_t *)im->o + f, sizeof(v));
		w = v;
		memcpy(t + at, &w, sizeof(w));
	}
}

/* One running thread: a module calling run() calling fn(); fn() returns
 * before the second tick. */
static struct change one_thread(struct fake_image *im)
{
	const struct py_offsets *o = im->o;
	struct fake_thread t;
	uintptr_t outer;
	uintptr_t mod = fake_code(im, "<module>", "/srv/app/main.py", 1, 0);
	uintptr_t run = fake_code(im, "App.run", "/srv/app/main.py", 40, 0);
	uintptr_t fn = fake_code(im, "f\xc3\xbcr_\xe2\x82\xac", "/srv/app/\xf0\x9f\x90\x8d.py", 7, 0);

	fake_thread_new(im, &t, 101);
	fake_push(im, &t, mod, 0);
	outer = fake_push(im, &t, run, 24);
	fake_push(im, &t, fn, 6);
	return (struct change){
		.addr = o->ts_current_frame ? t.tstate + o->ts_current_frame
		                            : t.cframe + o->cf_current_frame,
		.value = outer,
	};
}

/* A running thread whose stack spans two chunks and a generator frame,
 * and a sleeping one; before the second tick, work() is freed and another
 * code object (named like gen) takes its address. */
static struct change two_threads(struct fake_image *im)
{
	struct fake_thread a, b;
	uintptr_t mod = fake_code(im, "<module>", "/srv/app/jobs.py", 1, 0);
	uintptr_t gen = fake_code(im, "produce.<locals>.gen", "/srv/app/jobs.py", 12, 0);
	uintptr_t work = fake_code(im, "work", "/srv/app/jobs.py", 30, 200);

	fake_thread_new(im, &a, 103);
	fake_push(im, &a, mod, 4);
	fake_new_chunk(im, &a, 1024);
	fake_push(im, &a, work, 50);
	fake_push_heap(im, &a, gen, 8, 1);
	fake_push(im, &a, work, 2);
	fake_thread_new(im, &b, 104);
	fake_push(im, &b, mod, 10);
	fake_push(im, &b, work, 100);
	return (struct change){
		.addr = work + im->o->co_qualname,
		.value = fake_r64(gen + im->o->co_qualname),
	};
}

/* 3.12+ (the GIL lives in the interpreter): a thread holding the GIL,
 * stopped on a call instruction of a long code object, its stack in a
 * chunk larger than CPython's default; a second thread 40 distinct codes
 * deep (more than the reader re-checks with the thread state, so the rest
 * are re-checked in a read of their own) whose next frame, pushed before
 * the second tick, runs its outermost code again (cached, but not among
 * those re-checked with the thread state). */
static struct change busy(struct fake_image *im)
{
	const struct py_offsets *o = im->o;
	struct fake_thread a, b;
	uintptr_t gil = fake_alloc(im, o->gil_holder + 16);
	uintptr_t mod = fake_code(im, "<module>", "/srv/app/busy.py", 1, 0);
	uintptr_t big = fake_code(im, "Model.forward", "/srv/app/busy.py", 100, 1500);
	uintptr_t saved_top, next, first = 0;

	(void)gil; /* reserves interp + gil_holder, just past the interpreter */
	fake_thread_new(im, &a, 105);
	fake_new_chunk(im, &a, 20u << 10);
	fake_push(im, &a, mod, 0);
	fake_push(im, &a, big, 2400);
	fake_w8(big + o->co_code_adaptive + 2400, o->call_ops[0]);
	fake_w64(im->interp + o->gil_holder, a.tstate);
	fake_w32(im->interp + o->gil_holder + 8, 1);
	fake_thread_new(im, &b, 107);
	fake_push(im, &b, mod, 8);
	for (int i = 0; i < 40; i++) {
		char name[32];

		uintptr_t code;

		snprintf(name, sizeof(name), "step_%d", i);
		code = fake_code(im, name, "/srv/app/steps.py", 10 * i + 1, 8);
		fake_push(im, &b, code, 2);
		if (first == 0)
			first = code;
	}
	saved_top = b.top;
	next = fake_push(im, &b, first, 4);
	fake_set_current(im, &b, b.current == next ? fake_r64(next + o->if_previous) : b.current);
	b.top = saved_top;
	fake_store_stack(im, &b);
	return (struct change){
		.addr = o->ts_current_frame ? b.tstate + o->ts_current_frame
		                            : b.cframe + o->cf_current_frame,
		.value = next,
	};
}

int main(int argc, char **argv)
{
	const struct py_offsets *o;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t v = 0; (o = py_offsets_at(v)) != NULL; v++) {
		struct fake_image im;
		struct change c;

		fake_image_init(&im, o);
		c = one_thread(&im);
		write_seed(argv[1], "one-thread-returns", &im, v, 1u << FZR_TICKS_SHIFT, c);
		fake_image_free(&im);

		fake_image_init(&im, o);
		c = two_threads(&im);
		write_seed(argv[1], "two-threads-idle-code-reused", &im, v,
		           FZR_IDLE | 2u << FZR_TICKS_SHIFT, c);
		if (o->minor >= 13) {
			debug_table(&im);
			write_seed(argv[1], "debug-offsets", &im, v,
			           FZR_IDLE | FZR_DEBUG_OFFSETS | 1u << FZR_TICKS_SHIFT,
			           (struct change){ 0 });
		}
		fake_image_free(&im);

		if (o->minor == 12 || o->minor == 15) {
			fake_image_init(&im, o);
			c = busy(&im);
			write_seed(argv[1], "busy-gil-call-big-chunk", &im, v,
			           1u << FZR_TICKS_SHIFT, c);
			fake_image_free(&im);
		}
	}
	return 0;
}
