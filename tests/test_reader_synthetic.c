/* The stack reader (py_reader) over synthetic CPython memory images, for
 * every built-in offsets table: a fake interpreter laid out in a forked
 * child (tests/fake_python.h) is sampled through the same process_vm_readv
 * path as a real target.  Well-formed stacks must come back exactly; torn
 * and hostile layouts must end in PY_THREAD_ERROR or a correct result,
 * never a crash, a garbage name or an endless walk. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_reader.h"
#include "target/proc_threads.h"
#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "target/remote_mem.h"

#define READER_MAX_THREADS 1024 /* thread_list.h's bound on a thread list */

/* ---- fixture ----------------------------------------------------------- */

struct ctx {
	struct fake_reader fr;
	char v[8];                  /* "3.12", for messages */
};

/* What the test builds after this reaches the child with ctx_publish. */
static void ctx_init(struct ctx *c, size_t version_index)
{
	const struct py_offsets *o = py_offsets_at(version_index);

	memset(c, 0, sizeof(*c));
	cr_assert_not_null(o);
	snprintf(c->v, sizeof(c->v), "3.%u", o->minor);
	fake_reader_start(&c->fr, o);
}

static void ctx_publish(struct ctx *c)
{
	fake_reader_publish(&c->fr);
}

static int ctx_sample(struct ctx *c)
{
	return py_reader_sample(c->fr.r, c->fr.pt, true);
}

/* The child answers a command just before it blocks reading the next one:
 * wait until the kernel shows it asleep. */
static void ctx_wait_asleep(struct ctx *c)
{
	for (int i = 0; i < 2000; i++) {
		char path[64], buf[256], *paren;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)c->fr.child.pid);
		f = fopen(path, "r");
		cr_assert_not_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		paren = strrchr(buf, ')');
		if (paren != NULL && paren[1] == ' ' && paren[2] == 'S')
			return;
		usleep(500);
	}
	cr_assert_fail("%s: the child never went to sleep", c->v);
}

static void ctx_end(struct ctx *c)
{
	fake_reader_end(&c->fr);
}

/* A thread state of the child's main thread (its TID is its pid). */
static void ctx_thread(struct ctx *c, struct fake_thread *t)
{
	fake_thread_new(&c->fr.im, t, c->fr.child.pid);
}

struct code_ref {
	uintptr_t addr;
	const char *qualname, *filename;
	int firstlineno;
	uint32_t units;
};

static struct code_ref mk_code(struct ctx *c, const char *qualname,
                               const char *filename, int firstlineno)
{
	struct code_ref k = { 0, qualname, filename, firstlineno, FAKE_CODE_UNITS };

	k.addr = fake_code(&c->fr.im, qualname, filename, firstlineno, 0);
	return k;
}

/* One expected frame, innermost first. */
struct want {
	const struct code_ref *code;
	int instr;
};

/* ---- expectations -------------------------------------------------------- */

static const struct py_thread_sample *thread_at(struct ctx *c, size_t i)
{
	const struct py_thread_sample *th = py_reader_thread(c->fr.r, i);

	cr_assert_not_null(th, "%s: no thread %zu", c->v, i);
	return th;
}

/* Frame i of th is the code and offset w says. */
static void expect_frame(struct ctx *c, const struct py_thread_sample *th, size_t i,
                         const struct want *w)
{
	const struct rec_frame *f = &th->frames[i];
	const struct py_code *pc = py_reader_code(c->fr.r, f->code_id);

	cr_assert_not_null(pc, "%s: frame %zu: unknown code id %u", c->v, i, f->code_id);
	cr_assert(pc->valid, "%s: frame %zu: code %u not valid", c->v, i, f->code_id);
	cr_assert_eq(pc->addr, w->code->addr, "%s: frame %zu: code at %#lx, want %#lx (%s)",
	             c->v, i, (unsigned long)pc->addr, (unsigned long)w->code->addr,
	             w->code->qualname);
	cr_assert_str_eq(pc->qualname, w->code->qualname, "%s: frame %zu", c->v, i);
	cr_assert_str_eq(pc->filename, w->code->filename, "%s: frame %zu", c->v, i);
	cr_assert_eq(pc->firstlineno, w->code->firstlineno, "%s: frame %zu", c->v, i);
	cr_assert_eq(pc->code_bytes, (int32_t)(2 * w->code->units), "%s: frame %zu", c->v, i);
	cr_assert_eq(f->instr_offset, w->instr, "%s: frame %zu: offset %d, want %d",
	             c->v, i, f->instr_offset, w->instr);
}

static void expect_frames(struct ctx *c, size_t ti, const struct want *w, size_t n)
{
	const struct py_thread_sample *th = thread_at(c, ti);

	cr_assert_eq(th->status, PY_THREAD_OK, "%s: thread %zu status %d", c->v, ti, th->status);
	cr_assert_eq(th->nframes, n, "%s: thread %zu has %u frames, want %zu",
	             c->v, ti, th->nframes, n);
	for (size_t i = 0; i < n; i++)
		expect_frame(c, th, i, &w[i]);
}

static void expect_error(struct ctx *c, size_t ti)
{
	const struct py_thread_sample *th = thread_at(c, ti);

	cr_assert_eq(th->status, PY_THREAD_ERROR, "%s: thread %zu: status %d with %u frames, want an error",
	             c->v, ti, th->status, th->nframes);
}

/* A torn layout may be read as an error or, when the reader can still see
 * through it, as exactly the right stack; nothing else. */
static void expect_error_or(struct ctx *c, size_t ti, const struct want *w, size_t n)
{
	if (thread_at(c, ti)->status == PY_THREAD_ERROR)
		expect_error(c, ti);
	else
		expect_frames(c, ti, w, n);
}

static size_t count_codes(struct ctx *c)
{
	size_t n = 0;

	while (py_reader_code(c->fr.r, (uint32_t)n) != NULL)
		n++;
	return n;
}

/* No code the reader believes in may carry a name that is not text. */
static void expect_sane_codes(struct ctx *c)
{
	for (uint32_t id = 0; id < count_codes(c); id++) {
		const struct py_code *pc = py_reader_code(c->fr.r, id);
		const char *names[2] = { pc->qualname, pc->filename };

		if (!pc->valid)
			continue;
		for (int k = 0; k < 2; k++) {
			cr_assert_not_null(names[k], "%s: code %u lacks a name", c->v, id);
			cr_assert_leq(strlen(names[k]), 4096, "%s: code %u: name too long", c->v, id);
			for (const unsigned char *p = (const unsigned char *)names[k]; *p; p++)
				cr_assert(*p >= 0x20 && *p != 0x7F, "%s: code %u: control byte in %s",
				          c->v, id, names[k]);
		}
	}
}

/* ---- one test per built-in table ------------------------------------------ */

#define VERSION_TEST(name) FAKE_READER_VERSION_TEST(reader_synthetic, name)

Test(reader_synthetic, every_supported_version_has_a_table)
{
	size_t n = 0;

	for (const struct py_offsets *o; (o = py_offsets_at(n)) != NULL; n++) {
		cr_assert_eq(py_offsets_for(3, o->minor), o);
		cr_assert_leq(o->ts_read_size, 512);
	}
	cr_assert_geq(n, 3, "expected at least 3.11, 3.12 and 3.13");
	cr_assert_lt(n, FAKE_READER_MAX_VERSIONS);
}

/* ---- well-formed stacks ----------------------------------------------------- */

VERSION_TEST(three_frames_with_names_and_offsets)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, run, fn;
	uint32_t ids[3];

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/app/main.py", 1);
	run = mk_code(&c, "Worker.run", "/app/worker.py", 10);
	fn = mk_code(&c, "функция", "/app/ünï.py", 20);
	fake_push(&c.fr.im, &t, mod.addr, 0);
	fake_push(&c.fr.im, &t, run.addr, 24);
	fake_push(&c.fr.im, &t, fn.addr, 6);
	ctx_publish(&c);
	/* Tick 1 reads cold, later ticks through the speculative read. */
	for (int tick = 0; tick < 3; tick++) {
		const struct py_thread_sample *th;

		cr_assert_eq(ctx_sample(&c), 1, "%s: one thread", c.v);
		th = thread_at(&c, 0);
		cr_assert_eq(th->tid, c.fr.child.pid);
		cr_assert_eq(th->tstate, t.tstate);
		cr_assert_neq(th->state, 0, "%s: /proc state read", c.v);
		cr_assert_eq(th->flags & SAMPLE_TRUNCATED, 0);
		expect_frames(&c, 0, (struct want[]){ { &fn, 6 }, { &run, 24 }, { &mod, 0 } }, 3);
		for (int i = 0; i < 3; i++) {
			if (tick == 0)
				ids[i] = th->frames[i].code_id;
			cr_assert_eq(th->frames[i].code_id, ids[i], "%s: code ids stay", c.v);
		}
	}
	cr_assert_eq(count_codes(&c), 3, "%s: each code read once", c.v);
	{
		const struct py_code *pc = py_reader_code(c.fr.r, ids[0]);
		uintptr_t lt = fake_r64(fn.addr + c.fr.o->co_linetable);

		cr_assert_eq(pc->linetable_len, fake_r64(lt + c.fr.o->bytes_size));
		cr_assert_arr_eq(pc->linetable, (const void *)(lt + c.fr.o->bytes_data), pc->linetable_len);
	}
	ctx_end(&c);
}

VERSION_TEST(names_of_every_string_kind_come_back_as_utf8)
{
	static const struct {
		const char *name;
		unsigned kind;
		bool ascii;
	} names[] = {
		{ "plain_ascii", 1, true },
		{ "café.crème", 1, false },
		{ "функция", 2, false },
		{ "日本語", 2, false },
		{ "𝔣𝔲𝔫𝔠_🐍", 4, false },
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct ctx c;
	struct fake_thread t;
	struct code_ref codes[N];
	struct want w[N];

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	for (size_t i = 0; i < N; i++) {
		uintptr_t s;
		uint32_t state;

		codes[i] = mk_code(&c, names[i].name, i % 2 ? "/srv/ünï/日本.py" : "/srv/𝔣.py", (int)i + 1);
		/* The builder chose the kind CPython would. */
		s = fake_r64(codes[i].addr + c.fr.o->co_qualname);
		memcpy(&state, (const void *)(s + c.fr.o->str_state), 4);
		cr_assert_eq((state >> 2) & 7, names[i].kind, "%s", names[i].name);
		cr_assert_eq((state >> 6) & 1, names[i].ascii, "%s", names[i].name);
		fake_push(&c.fr.im, &t, codes[i].addr, 2 * (int)i);
		w[N - 1 - i] = (struct want){ &codes[i], 2 * (int)i };
	}
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, w, N);
	ctx_end(&c);
}

/* compile(source, "", "exec") gives a code object an empty file name. */
VERSION_TEST(empty_file_name)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, fn;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/app/main.py", 1);
	fn = mk_code(&c, "<module>", "", 1);
	fake_push(&c.fr.im, &t, mod.addr, 0);
	fake_push(&c.fr.im, &t, fn.addr, 2);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &fn, 2 }, { &mod, 0 } }, 2);
	ctx_end(&c);
}

VERSION_TEST(two_os_threads)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a, b, cc;
	pid_t tid2;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	fake_thread_new(&c.fr.im, &t2, 0); /* bound once the child's thread runs */
	a = mk_code(&c, "main", "/app/a.py", 3);
	b = mk_code(&c, "worker", "/app/b.py", 30);
	cc = mk_code(&c, "Thread._bootstrap", "/usr/lib/threading.py", 990);
	fake_push(&c.fr.im, &t1, a.addr, 4);
	fake_push(&c.fr.im, &t2, cc.addr, 10);
	fake_push(&c.fr.im, &t2, b.addr, 12);
	ctx_publish(&c);
	tid2 = fake_child_thread(&c.fr.child, t2.tstate + c.fr.o->ts_native_tid);
	cr_assert_gt(tid2, 0);
	cr_assert_neq(tid2, c.fr.child.pid);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2, "%s: two threads", c.v);
		cr_assert_eq(thread_at(&c, 0)->tid, c.fr.child.pid);
		cr_assert_eq(thread_at(&c, 1)->tid, tid2);
		expect_frames(&c, 0, (struct want[]){ { &a, 4 } }, 1);
		expect_frames(&c, 1, (struct want[]){ { &b, 12 }, { &cc, 10 } }, 2);
	}
	ctx_end(&c);
}

VERSION_TEST(unbound_and_vanished_threads_are_skipped)
{
	struct ctx c;
	struct fake_thread t1, t2, t3;
	struct code_ref a;

	ctx_init(&c, *vi);
	fake_thread_new(&c.fr.im, &t1, 0);          /* never bound to an OS thread */
	ctx_thread(&c, &t2);
	fake_thread_new(&c.fr.im, &t3, 0x3ffffff0); /* no such TID in the child */
	a = mk_code(&c, "f", "/f.py", 1);
	fake_push(&c.fr.im, &t1, a.addr, 0);
	fake_push(&c.fr.im, &t2, a.addr, 2);
	fake_push(&c.fr.im, &t3, a.addr, 4);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 3);
	cr_assert_eq(thread_at(&c, 0)->status, PY_THREAD_SKIPPED);
	expect_frames(&c, 1, (struct want[]){ { &a, 2 } }, 1);
	cr_assert_eq(thread_at(&c, 2)->status, PY_THREAD_SKIPPED);
	ctx_end(&c);
}

VERSION_TEST(sleeping_thread_is_skipped_unless_idle)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref a;
	const struct py_thread_sample *th;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	a = mk_code(&c, "sleep", "/s.py", 1);
	fake_push(&c.fr.im, &t, a.addr, 0);
	ctx_publish(&c);
	ctx_wait_asleep(&c); /* in read(), waiting for a command */
	cr_assert_eq(py_reader_sample(c.fr.r, c.fr.pt, false), 1);
	th = thread_at(&c, 0);
	cr_assert_eq(th->state, 'S', "%s: state %c", c.v, th->state);
	cr_assert_eq(th->status, PY_THREAD_SKIPPED);
	cr_assert_eq(th->flags & SAMPLE_RUNNING, 0);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
	ctx_end(&c);
}

VERSION_TEST(stack_spanning_chunks_of_several_sizes)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref k[9];
	struct want w[9];
	static const char *const names[9] = { "a", "b", "c", "d", "e", "f", "g", "h", "i" };

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	for (int i = 0; i < 9; i++) {
		if (i == 3)
			fake_new_chunk(&c.fr.im, &t, 0);
		if (i == 6) /* bigger than the usual chunk, as for a huge frame */
			fake_new_chunk(&c.fr.im, &t, 3 * FAKE_CHUNK_SIZE);
		k[i] = mk_code(&c, names[i], "/deep.py", 100 + i);
		fake_push(&c.fr.im, &t, k[i].addr, 2 * i);
		w[8 - i] = (struct want){ &k[i], 2 * i };
	}
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, w, 9);
	}
	ctx_end(&c);
}

/* Mutual recursion 600 deep: chunks fill up and CPython starts new ones. */
VERSION_TEST(recursion_fills_several_chunks)
{
	enum { DEPTH = 600 };
	struct ctx c;
	struct fake_thread t;
	struct code_ref ping, pong;
	static struct want w[DEPTH];
	uintptr_t root;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	root = t.chunk;
	ping = mk_code(&c, "ping", "/rec.py", 1);
	pong = mk_code(&c, "pong", "/rec.py", 5);
	for (int i = 0; i < DEPTH; i++) {
		const struct code_ref *k = i % 2 ? &pong : &ping;

		fake_push(&c.fr.im, &t, k->addr, 2 * (i % 60));
		w[DEPTH - 1 - i] = (struct want){ k, 2 * (i % 60) };
	}
	cr_assert_neq(t.chunk, root);
	cr_assert_neq(fake_r64(fake_r64(t.chunk)), root, "%s: at least three chunks", c.v);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, w, DEPTH);
	}
	ctx_end(&c);
}

/* More chunks than the reader copies per thread: the rest is read frame by
 * frame, still exactly. */
VERSION_TEST(more_chunks_than_copied)
{
	enum { CHUNKS = 24, PER = 2 };
	struct ctx c;
	struct fake_thread t;
	struct code_ref k;
	static struct want w[CHUNKS * PER];

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	k = mk_code(&c, "level", "/l.py", 7);
	for (int i = 0; i < CHUNKS * PER; i++) {
		if (i > 0 && i % PER == 0)
			fake_new_chunk(&c.fr.im, &t, 0);
		fake_push(&c.fr.im, &t, k.addr, 2 * (i % 64));
		w[CHUNKS * PER - 1 - i] = (struct want){ &k, 2 * (i % 64) };
	}
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, w, CHUNKS * PER);
	}
	ctx_end(&c);
}

/* A stack eight times deeper than a sample holds, over many chunks: the
 * sample is its innermost frames, one REC_MORE_FRAMES marker counting the
 * rest, and its outermost frames (all of `outer`'s), the same at later
 * ticks, which read its older chunks in one go (the walker's prefetch). */
VERSION_TEST(deeper_than_the_limit_keeps_both_ends)
{
	enum { DEPTH = 8 * PY_READER_MAX_FRAMES, OUTER = 52 };
	struct ctx c;
	struct fake_thread t;
	struct code_ref outer, inner;
	static struct want w[DEPTH];
	const struct py_thread_sample *th;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	outer = mk_code(&c, "outer", "/t.py", 1);
	inner = mk_code(&c, "inner", "/t.py", 9);
	for (int i = 0; i < DEPTH; i++) {
		const struct code_ref *k = i < OUTER ? &outer : &inner;

		fake_push(&c.fr.im, &t, k->addr, 2 * (i % 50));
		w[DEPTH - 1 - i] = (struct want){ k, 2 * (i % 50) };
	}
	ctx_publish(&c);
	for (int tick = 0; tick < 4; tick++) {
		uint64_t calls = remote_calls();
		cr_assert_eq(ctx_sample(&c), 1);
		calls = remote_calls() - calls;
		/* Warm: the first read, then the older chunks (about a
		 * hundred of 16 KiB here) 64 at a time. */
		if (tick > 0)
			cr_assert_leq(calls, 3, "%s: %lu reads at tick %d", c.v,
			              (unsigned long)calls, tick);
		th = thread_at(&c, 0);
		cr_assert_eq(th->status, PY_THREAD_OK, "%s: tick %d status %d", c.v, tick, th->status);
		cr_assert_neq(th->flags & SAMPLE_TRUNCATED, 0, "%s: flagged truncated", c.v);
		cr_assert_eq(th->nframes, PY_READER_MAX_FRAMES, "%s: %u frames", c.v, th->nframes);
		size_t m = th->nframes;
		for (size_t i = 0; i < th->nframes; i++)
			if (th->frames[i].code_id == REC_MORE_FRAMES) {
				cr_assert_eq(m, th->nframes, "%s: a second marker at %zu", c.v, i);
				m = i;
			}
		cr_assert_lt(m, th->nframes, "%s: no marker frame", c.v);
		size_t kept_outer = th->nframes - m - 1;
		size_t left_out = (size_t)th->frames[m].instr_offset;
		cr_assert_eq(m + left_out + kept_outer, DEPTH, "%s: %zu + %zu + %zu frames", c.v, m,
		             left_out, kept_outer);
		cr_assert_geq(kept_outer, OUTER, "%s: only %zu outermost frames", c.v, kept_outer);
		for (size_t i = 0; i < m; i++)
			expect_frame(&c, th, i, &w[i]);
		for (size_t i = m + 1; i < th->nframes; i++)
			expect_frame(&c, th, i, &w[i - 1 + left_out]);
	}
	ctx_end(&c);
}

/* Frames outside the chunks (generators) are read one by one: a chain
 * of more than a sample holds is cut after as many reads, the innermost
 * frames kept and a last marker frame counting those read past them. */
VERSION_TEST(frames_read_one_by_one_are_bounded)
{
	enum { HEAP = PY_READER_MAX_FRAMES + 100 };
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, gen;
	const struct py_thread_sample *th;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/g.py", 1);
	gen = mk_code(&c, "numbers", "/g.py", 4);
	fake_push(&c.fr.im, &t, mod.addr, 10);
	for (int i = 0; i < HEAP; i++)
		fake_push_heap(&c.fr.im, &t, gen.addr, 8, 1 /* FRAME_OWNED_BY_GENERATOR */);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	th = thread_at(&c, 0);
	cr_assert_eq(th->status, PY_THREAD_OK, "%s: status %d", c.v, th->status);
	cr_assert_neq(th->flags & SAMPLE_TRUNCATED, 0, "%s: flagged truncated", c.v);
	cr_assert_gt(th->nframes, 1, "%s: %u frames", c.v, th->nframes);
	const struct rec_frame *last = &th->frames[th->nframes - 1];
	cr_assert_eq(last->code_id, REC_MORE_FRAMES, "%s: the last frame is no marker", c.v);
	cr_assert_geq(last->instr_offset, 1, "%s: marker counts %d", c.v, last->instr_offset);
	cr_assert_leq(th->nframes - 1 + (size_t)last->instr_offset, HEAP + 1,
	              "%s: %u frames and %d more: more than the stack has", c.v, th->nframes,
	              last->instr_offset);
	for (size_t i = 0; i + 1 < th->nframes; i++)
		expect_frame(&c, th, i, &(struct want){ &gen, 8 });
	ctx_end(&c);
}

/* A generator's frame lives in the generator object, outside every chunk:
 * main (chunk) <- gen (heap) <- helper (chunk). */
VERSION_TEST(generator_frame_outside_the_data_stack)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, gen, helper;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/g.py", 1);
	gen = mk_code(&c, "numbers", "/g.py", 4);
	helper = mk_code(&c, "helper", "/g.py", 9);
	fake_push(&c.fr.im, &t, mod.addr, 10);
	fake_push_heap(&c.fr.im, &t, gen.addr, 8, 1 /* FRAME_OWNED_BY_GENERATOR */);
	fake_push(&c.fr.im, &t, helper.addr, 2);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &helper, 2 }, { &gen, 8 }, { &mod, 10 } }, 3);
	}
	/* ... and as the innermost frame. */
	fake_set_current(&c.fr.im, &t, fake_r64(t.current + c.fr.o->if_previous));
	t.top -= FAKE_FRAME_SIZE;
	fake_store_stack(&c.fr.im, &t);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &gen, 8 }, { &mod, 10 } }, 2);
	}
	ctx_end(&c);
}

/* 3.12+: each eval-loop entry leaves a C-stack shim frame (owner
 * FRAME_OWNED_BY_CSTACK) that is not Python code. */
VERSION_TEST(shim_frames_are_skipped)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, cb;
	uintptr_t shim_code;

	ctx_init(&c, *vi);
	if (c.fr.o->owner_not_python > 3) {
		ctx_end(&c);
		cr_skip_test("3.%u has no shim frames", c.fr.o->minor);
	}
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/m.py", 1);
	cb = mk_code(&c, "callback", "/m.py", 12);
	/* 3.12: a real code object named <shim>; 3.13: Py_None. */
	shim_code = c.fr.o->minor == 12 ? fake_code(&c.fr.im, "<interpreter trampoline>", "<shim>", 0, 4)
	                             : c.fr.im.none;
	fake_push_heap(&c.fr.im, &t, shim_code, 0, c.fr.o->owner_not_python);
	fake_push(&c.fr.im, &t, mod.addr, 20);
	fake_push_heap(&c.fr.im, &t, shim_code, 0, c.fr.o->owner_not_python);
	fake_push(&c.fr.im, &t, cb.addr, 4);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &cb, 4 }, { &mod, 20 } }, 2);
	}
	ctx_end(&c);
}

VERSION_TEST(offsets_at_both_ends_of_the_bytecode)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref a, b;
	int last = 2 * FAKE_CODE_UNITS - 2;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	a = mk_code(&c, "a", "/o.py", 1);
	b = mk_code(&c, "b", "/o.py", 2);
	fake_push(&c.fr.im, &t, a.addr, last);
	fake_push(&c.fr.im, &t, b.addr, -2); /* 3.11/3.12: not started yet */
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &b, -2 }, { &a, last } }, 2);
	ctx_end(&c);
}

VERSION_TEST(thread_without_frames)
{
	struct ctx c;
	struct fake_thread t;
	const struct py_thread_sample *th;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	th = thread_at(&c, 0);
	cr_assert_eq(th->status, PY_THREAD_OK);
	cr_assert_eq(th->nframes, 0);
	ctx_end(&c);
}

/* The stack grows, shrinks, enters a new chunk and leaves it (CPython
 * unmaps the chunk it leaves) between ticks. */
VERSION_TEST(stack_changes_between_ticks)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref k[5];
	static struct want w[300];
	uintptr_t f[5], root;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	root = t.chunk;
	static const char *const names[5] = { "f0", "f1", "f2", "f3", "f4" };

	for (int i = 0; i < 5; i++)
		k[i] = mk_code(&c, names[i], "/s.py", i);
	for (int i = 0; i < 3; i++)
		f[i] = fake_push(&c.fr.im, &t, k[i].addr, 2 * i);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &k[2], 4 }, { &k[1], 2 }, { &k[0], 0 } }, 3);

	for (int i = 3; i < 5; i++)
		f[i] = fake_push(&c.fr.im, &t, k[i].addr, 2 * i);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &k[4], 8 }, { &k[3], 6 }, { &k[2], 4 },
	                                      { &k[1], 2 }, { &k[0], 0 } }, 5);

	fake_set_current(&c.fr.im, &t, f[0]);
	t.top = f[0] + FAKE_FRAME_SIZE;
	fake_store_stack(&c.fr.im, &t);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &k[0], 0 } }, 1);

	/* Deep enough for a second chunk. */
	w[299] = (struct want){ &k[0], 0 };
	for (int i = 1; i < 300; i++) {
		fake_push(&c.fr.im, &t, k[1 + i % 4].addr, 2 * i % 100);
		w[299 - i] = (struct want){ &k[1 + i % 4], 2 * i % 100 };
	}
	cr_assert_neq(t.chunk, root);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, w, 300);
	}

	/* Back to the root chunk; the newer one is gone. */
	fake_child_protect(&c.fr.child, t.chunk, FAKE_CHUNK_SIZE);
	t.chunk = root;
	fake_set_current(&c.fr.im, &t, f[0]);
	t.top = f[0] + FAKE_FRAME_SIZE;
	fake_store_stack(&c.fr.im, &t);
	fake_child_sync(&c.fr.child, t.tstate, 512);
	if (t.cframe)
		fake_child_sync(&c.fr.child, t.cframe, 32);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &k[0], 0 } }, 1);
	}
	ctx_end(&c);
}

/* A call that starts a new chunk, and the return that leaves it, between
 * two ticks: last tick's copy of the old chunk must not stand in for the
 * new one. */
VERSION_TEST(new_chunk_between_ticks)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref a, b, d;
	uintptr_t f1, root;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	root = t.chunk;
	a = mk_code(&c, "a", "/n.py", 1);
	b = mk_code(&c, "b", "/n.py", 2);
	d = mk_code(&c, "d", "/n.py", 3);
	fake_push(&c.fr.im, &t, a.addr, 0);
	f1 = fake_push(&c.fr.im, &t, b.addr, 2);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &b, 2 }, { &a, 0 } }, 2);
	}
	fake_new_chunk(&c.fr.im, &t, 0);
	fake_push(&c.fr.im, &t, d.addr, 4);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &d, 4 }, { &b, 2 }, { &a, 0 } }, 3);
	}
	/* return: the new chunk is unmapped and its slot reused for another */
	fake_child_protect(&c.fr.child, t.chunk, FAKE_CHUNK_SIZE);
	t.chunk = root;
	t.top = f1 + FAKE_FRAME_SIZE;
	fake_store_stack(&c.fr.im, &t);
	fake_set_current(&c.fr.im, &t, f1);
	fake_child_sync(&c.fr.child, t.tstate, 512);
	if (t.cframe != 0)
		fake_child_sync(&c.fr.child, t.cframe, 32);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &b, 2 }, { &a, 0 } }, 2);
	}
	ctx_end(&c);
}

/* The reader's promise (py_reader.h): a handful of system calls per tick
 * for the whole process, however deep the stacks, once warm. */
VERSION_TEST(steady_state_system_calls)
{
	enum { DEPTH = 600 };
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a, b, g;
	uint64_t calls;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	a = mk_code(&c, "a", "/d.py", 1);
	b = mk_code(&c, "b", "/d.py", 2);
	g = mk_code(&c, "gen", "/d.py", 3);
	for (int i = 0; i < DEPTH; i++)
		fake_push(&c.fr.im, &t1, (i % 2 ? a : b).addr, 0);
	fake_push(&c.fr.im, &t2, a.addr, 0);
	fake_push_heap(&c.fr.im, &t2, g.addr, 2, 1);
	fake_push(&c.fr.im, &t2, b.addr, 4);
	ctx_publish(&c);
	calls = remote_calls();
	cr_assert_eq(ctx_sample(&c), 2);
	calls = remote_calls() - calls;
	cr_assert_leq(calls, 64, "%s: %lu reads for the first tick", c.v, (unsigned long)calls);
	for (int tick = 0; tick < 6; tick++) {
		calls = remote_calls();
		cr_assert_eq(ctx_sample(&c), 2);
		calls = remote_calls() - calls;
		cr_assert_eq(thread_at(&c, 0)->nframes, DEPTH);
		expect_frames(&c, 1, (struct want[]){ { &b, 4 }, { &g, 2 }, { &a, 0 } }, 3);
		if (tick >= 2)
			cr_assert_leq(calls, 2, "%s: %lu reads per tick when warm", c.v,
			              (unsigned long)calls);
	}
	ctx_end(&c);
}

VERSION_TEST(threads_come_and_go)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a, b;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	a = mk_code(&c, "a", "/a.py", 1);
	b = mk_code(&c, "b", "/b.py", 1);
	fake_push(&c.fr.im, &t1, a.addr, 0);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);

	ctx_thread(&c, &t2);
	fake_push(&c.fr.im, &t2, b.addr, 2);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
		expect_frames(&c, 1, (struct want[]){ { &b, 2 } }, 1);
	}

	/* The first thread exits: the head moves to the second. */
	fake_w64(c.fr.im.interp + c.fr.o->is_threads_head, t2.tstate);
	memset((void *)t1.tstate, 0, c.fr.o->ts_read_size);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		cr_assert_eq(thread_at(&c, 0)->tstate, t2.tstate);
		expect_frames(&c, 0, (struct want[]){ { &b, 2 } }, 1);
	}
	ctx_end(&c);
}

/* A thread exits, and a later one gets its freed thread state and data-
 * stack chunk back, running other code.  The reader's guess about the old
 * thread's stack (read in the tick that noticed the exit, into memory
 * reused by every tick since) must not stand in for the new thread's. */
VERSION_TEST(new_thread_in_an_exited_threads_memory)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a, b, d;
	uintptr_t frame;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	a = mk_code(&c, "a", "/a.py", 1);
	b = mk_code(&c, "old_thread_code", "/old.py", 1);
	d = mk_code(&c, "new_thread_code", "/new.py", 1);
	fake_push(&c.fr.im, &t1, a.addr, 0);
	frame = fake_push(&c.fr.im, &t2, b.addr, 2);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_frames(&c, 1, (struct want[]){ { &b, 2 } }, 1);
	}

	/* The second thread leaves the list; its memory stays readable. */
	fake_w64(t1.tstate + c.fr.o->ts_next, 0);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
	}

	/* A new thread in the same thread state and chunk, its one frame
	 * where the old one's was, running other code. */
	t2.top = frame;
	t2.current = 0;
	fake_push(&c.fr.im, &t2, d.addr, 4);
	fake_w64(t1.tstate + c.fr.o->ts_next, t2.tstate);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
		expect_frames(&c, 1, (struct want[]){ { &d, 4 } }, 1);
	}
	ctx_end(&c);
}

/* A freed code object's address reused by another: the names of the new
 * one must show, never the cached ones. */
VERSION_TEST(code_address_reused_by_another_code)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref alpha, other, beta;
	uint32_t id_alpha, id_beta;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	alpha = mk_code(&c, "alpha", "/reuse.py", 10);
	other = mk_code(&c, "caller", "/reuse.py", 1);
	fake_push(&c.fr.im, &t, other.addr, 0);
	fake_push(&c.fr.im, &t, alpha.addr, 6);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &alpha, 6 }, { &other, 0 } }, 2);
	id_alpha = thread_at(&c, 0)->frames[0].code_id;

	/* Another code object now lives at alpha's address: new first line
	 * and names, same size. */
	beta = alpha;
	beta.qualname = "Beta.method";
	beta.filename = "/other.py";
	beta.firstlineno = 99;
	fake_w64(alpha.addr + c.fr.o->co_qualname, fake_str(&c.fr.im, beta.qualname));
	fake_w64(alpha.addr + c.fr.o->co_name, fake_str(&c.fr.im, "method"));
	fake_w64(alpha.addr + c.fr.o->co_filename, fake_str(&c.fr.im, beta.filename));
	fake_w32(alpha.addr + c.fr.o->co_firstlineno, 99);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &beta, 6 }, { &other, 0 } }, 2);
		id_beta = thread_at(&c, 0)->frames[0].code_id;
		cr_assert_neq(id_beta, id_alpha, "%s: a new id for the new code", c.v);
		cr_assert_not(py_reader_code(c.fr.r, id_alpha)->valid, "%s: old entry retired", c.v);
	}

	/* Only the first line differs. */
	fake_w32(alpha.addr + c.fr.o->co_firstlineno, 200);
	beta.firstlineno = 200;
	fake_child_sync(&c.fr.child, alpha.addr, c.fr.o->co_code_adaptive);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &beta, 6 }, { &other, 0 } }, 2);
	cr_assert_neq(thread_at(&c, 0)->frames[0].code_id, id_beta);

	/* Only the size differs (a shorter code): the offset must fit it. */
	fake_w64(alpha.addr + 16, 8);
	beta.units = 8;
	fake_child_sync(&c.fr.child, alpha.addr, c.fr.o->co_code_adaptive);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &beta, 6 }, { &other, 0 } }, 2);
	ctx_end(&c);
}

/* A cached code not on last tick's stack (called, returned, freed, its
 * address reused, the new code called) is checked when it shows up again:
 * the old names must never come back for it. */
VERSION_TEST(code_reused_while_off_the_stack)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref mod, a, b, a2;
	uintptr_t f;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	mod = mk_code(&c, "<module>", "/r.py", 1);
	a = mk_code(&c, "first", "/r.py", 10);
	b = mk_code(&c, "second", "/r.py", 20);
	fake_push(&c.fr.im, &t, mod.addr, 0);
	f = fake_push(&c.fr.im, &t, a.addr, 2);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &a, 2 }, { &mod, 0 } }, 2);

	/* first returns, second runs in the same slot */
	fake_w64(f + c.fr.o->if_code, b.addr);
	fake_w64(f + c.fr.o->if_instr, b.addr + c.fr.o->co_code_adaptive + 4);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	expect_frames(&c, 0, (struct want[]){ { &b, 4 }, { &mod, 0 } }, 2);

	/* first is freed, "third" takes its address and is called */
	a2 = a;
	a2.qualname = "third";
	a2.firstlineno = 30;
	fake_w64(a.addr + c.fr.o->co_qualname, fake_str(&c.fr.im, "third"));
	fake_w32(a.addr + c.fr.o->co_firstlineno, 30);
	fake_w64(f + c.fr.o->if_code, a.addr);
	fake_w64(f + c.fr.o->if_instr, a.addr + c.fr.o->co_code_adaptive + 6);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		if (tick == 0) /* found out after the walk: torn, or right */
			expect_error_or(&c, 0, (struct want[]){ { &a2, 6 }, { &mod, 0 } }, 2);
		else
			expect_frames(&c, 0, (struct want[]){ { &a2, 6 }, { &mod, 0 } }, 2);
	}
	ctx_end(&c);
}

VERSION_TEST(target_gone)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref a;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	a = mk_code(&c, "a", "/a.py", 1);
	fake_push(&c.fr.im, &t, a.addr, 0);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 1);
	fake_child_stop(&c.fr.child);
	errno = 0;
	cr_assert_eq(ctx_sample(&c), -1, "%s: a reaped target is gone", c.v);
	cr_assert_eq(errno, ESRCH);
	ctx_end(&c);
}

/* ---- torn and hostile layouts --------------------------------------------- */

/* One thread running inner <- middle <- outer. */
struct three {
	struct fake_thread t;
	struct code_ref outer, middle, inner;
	uintptr_t f_outer, f_middle, f_inner;
};

static void three_frames(struct ctx *c, struct three *s)
{
	ctx_thread(c, &s->t);
	s->outer = mk_code(c, "outer", "/h.py", 1);
	s->middle = mk_code(c, "middle", "/h.py", 10);
	s->inner = mk_code(c, "inner", "/h.py", 20);
	s->f_outer = fake_push(&c->fr.im, &s->t, s->outer.addr, 0);
	s->f_middle = fake_push(&c->fr.im, &s->t, s->middle.addr, 2);
	s->f_inner = fake_push(&c->fr.im, &s->t, s->inner.addr, 4);
}

/* Sample a few times (cold and speculative paths) expecting an error. */
static void expect_error_ticks(struct ctx *c)
{
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(c), 1);
		expect_error(c, 0);
		expect_sane_codes(c);
	}
}

VERSION_TEST(frame_whose_previous_is_itself)
{
	struct ctx c;
	struct three s;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	fake_w64(s.f_middle + c.fr.o->if_previous, s.f_middle);
	ctx_publish(&c);
	expect_error_ticks(&c);
	ctx_end(&c);
}

VERSION_TEST(heap_frame_whose_previous_is_itself)
{
	struct ctx c;
	struct three s;
	uintptr_t g;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	g = fake_push_heap(&c.fr.im, &s.t, s.inner.addr, 0, 1);
	fake_w64(g + c.fr.o->if_previous, g);
	ctx_publish(&c);
	expect_error_ticks(&c);
	ctx_end(&c);
}

/* A cycle is no stack: neither an error-free sample nor one cut at the
 * frame limit may come out of it. */
VERSION_TEST(cycle_of_two_frames)
{
	struct ctx c;
	struct three s;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	fake_w64(s.f_outer + c.fr.o->if_previous, s.f_middle); /* inner -> middle -> outer -> middle ... */
	ctx_publish(&c);
	expect_error_ticks(&c);
	ctx_end(&c);
}

VERSION_TEST(cycle_through_a_heap_frame)
{
	struct ctx c;
	struct three s;
	uintptr_t g;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	g = fake_push_heap(&c.fr.im, &s.t, s.middle.addr, 0, 1);
	fake_push(&c.fr.im, &s.t, s.inner.addr, 0);
	fake_w64(s.f_outer + c.fr.o->if_previous, g);
	ctx_publish(&c);
	expect_error_ticks(&c);
	ctx_end(&c);
}

VERSION_TEST(previous_into_unmapped_memory)
{
	static const uint64_t bad[] = { 0, 0xdead0000u, 0x7ffffffff000ull };
	struct ctx c;
	struct three s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ctx_init(&c, *vi);
		three_frames(&c, &s);
		fake_w64(s.f_middle + c.fr.o->if_previous, bad[i] != 0 ? bad[i] : c.fr.im.guard);
		ctx_publish(&c);
		expect_error_ticks(&c);
		ctx_end(&c);
	}
}

VERSION_TEST(previous_above_the_stack_top)
{
	struct ctx c;
	struct three s;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	/* a popped slot: stale zeros past datastack_top */
	fake_w64(s.f_middle + c.fr.o->if_previous, s.t.top + FAKE_FRAME_SIZE);
	ctx_publish(&c);
	expect_error_ticks(&c);
	ctx_end(&c);
}

VERSION_TEST(misaligned_and_unmapped_frame_pointers)
{
	struct ctx c;
	struct three s;

	for (int variant = 0; variant < 3; variant++) {
		ctx_init(&c, *vi);
		three_frames(&c, &s);
		if (variant == 0)
			fake_set_current(&c.fr.im, &s.t, s.f_inner + 4);
		else if (variant == 1)
			fake_set_current(&c.fr.im, &s.t, c.fr.im.guard + 64);
		else if (c.fr.o->ts_cframe != 0)
			fake_w64(s.t.tstate + c.fr.o->ts_cframe, c.fr.im.guard);
		else
			fake_set_current(&c.fr.im, &s.t, 0x10);
		ctx_publish(&c);
		expect_error_ticks(&c);
		ctx_end(&c);
	}
}

VERSION_TEST(code_pointer_to_something_else)
{
	struct ctx c;
	struct three s;

	for (int variant = 0; variant < 4; variant++) {
		uintptr_t code = 0;

		ctx_init(&c, *vi);
		three_frames(&c, &s);
		switch (variant) {
		case 0: /* a str object */
			code = fake_r64(s.middle.addr + c.fr.o->co_name);
			break;
		case 1: /* a code-shaped object of another type */
			code = fake_code(&c.fr.im, "impostor", "/x.py", 1, 0);
			fake_w64(code + 8, c.fr.im.other_type);
			fake_w64(s.f_middle + c.fr.o->if_instr, code + c.fr.o->co_code_adaptive + 2);
			break;
		case 2:
			code = c.fr.im.guard;
			break;
		case 3:
			code = 0;
			break;
		}
		fake_w64(s.f_middle + c.fr.o->if_code, code);
		ctx_publish(&c);
		expect_error_ticks(&c);
		ctx_end(&c);
	}
}

/* The bytes of a hostile str object: header state and length, then data;
 * and the text the reader must show for it (py_name_text.h), NULL when it
 * is no str and the sample an error. */
struct bad_str {
	const char *what;
	uint32_t state;
	uint64_t length;
	const char *data;
	size_t data_len;
	const char *shown;
};

/* "shown" of the 100 000 letters: the first 1000 and the marker. */
#define LONG_SHOWN "@long"

#define KIND_ASCII (FAKE_STR_KIND(1) | FAKE_STR_COMPACT | FAKE_STR_ASCII)

static const struct bad_str bad_strs[] = {
	{ "length 1e9", KIND_ASCII, 1000000000ull, "huge", 4, NULL },
	{ "100000 letters, all readable", KIND_ASCII, 100000, NULL, 100000, LONG_SHOWN },
	{ "negative length", KIND_ASCII, (uint64_t)-5, "neg", 3, NULL },
	{ "control character", KIND_ASCII, 4, "ab\001c", 4, "ab\\x01c" },
	{ "newline", KIND_ASCII, 4, "ab\nc", 4, "ab\\x0ac" },
	{ "DEL", KIND_ASCII, 3, "a\177b", 3, "a\\x7fb" },
	{ "not compact", FAKE_STR_KIND(1) | FAKE_STR_ASCII, 4, "abcd", 4, NULL },
	{ "kind 0", FAKE_STR_COMPACT, 4, "abcd", 4, NULL },
	{ "kind 3", FAKE_STR_KIND(3) | FAKE_STR_COMPACT, 2, "abcdef", 6, NULL },
	{ "ascii flag with kind 2", FAKE_STR_KIND(2) | FAKE_STR_COMPACT | FAKE_STR_ASCII, 2, "a\0b\0", 4, NULL },
	{ "lone surrogate", FAKE_STR_KIND(2) | FAKE_STR_COMPACT, 2, "a\0\000\330", 4, "a\\ud800" },
	{ "code point past U+10FFFF", FAKE_STR_KIND(4) | FAKE_STR_COMPACT, 1, "\0\0\021\0", 4, NULL },
	{ "latin-1 control", FAKE_STR_KIND(1) | FAKE_STR_COMPACT, 1, "\001", 1, "\\x01" },
	{ "latin-1 C1 control", FAKE_STR_KIND(1) | FAKE_STR_COMPACT, 2, "a\205", 2, "a\\x85" },
	{ "non-UTF-8 byte (surrogateescape)", FAKE_STR_KIND(2) | FAKE_STR_COMPACT, 2, "a\0\351\334", 4, "a\\xe9" },
	{ "bidirectional override", FAKE_STR_KIND(2) | FAKE_STR_COMPACT, 2, "\056\040a\0", 4, "\\u202ea" },
};

/* What the reader shows for b (b->shown not NULL): owned. */
static char *shown_text(const struct bad_str *b)
{
	char *s;

	if (strcmp(b->shown, LONG_SHOWN) != 0)
		return strdup(b->shown);
	s = malloc(1100);
	memset(s, 'a', 1000);
	snprintf(s + 1000, 100, "\xe2\x80\xa6[+99000 chars]");
	return s;
}

/* Every hostile name at once, one thread each: as qualname and as file
 * name of the middle frame of inner <- middle <- outer.  A str that is
 * none is an error; one that is a str but a strange name is shown
 * escaped and the sample kept. */
VERSION_TEST(hostile_names)
{
	enum { N = sizeof(bad_strs) / sizeof(bad_strs[0]) };
	struct ctx c;
	struct fake_thread good, t[2 * N];
	struct code_ref outer, inner, middles[2 * N];
	char *shown[2 * N];

	ctx_init(&c, *vi);
	outer = mk_code(&c, "outer", "/h.py", 1);
	inner = mk_code(&c, "inner", "/h.py", 20);
	for (size_t i = 0; i < 2 * N; i++) {
		const struct bad_str *b = &bad_strs[i / 2];
		uintptr_t middle = fake_code(&c.fr.im, "middle", "/h.py", 10, 0);
		char *letters = b->data == NULL ? malloc(b->data_len) : NULL;
		uintptr_t str;

		if (letters != NULL)
			memset(letters, 'a', b->data_len);
		str = fake_str_raw(&c.fr.im, b->state, b->length, b->data ? b->data : letters, b->data_len);
		free(letters);

		fake_w64(middle + (i % 2 ? c.fr.o->co_filename : c.fr.o->co_qualname), str);
		shown[i] = b->shown != NULL ? shown_text(b) : NULL;
		middles[i] = (struct code_ref){ middle, i % 2 ? "middle" : shown[i],
		                                i % 2 ? shown[i] : "/h.py", 10, FAKE_CODE_UNITS };
		ctx_thread(&c, &t[i]);
		fake_push(&c.fr.im, &t[i], outer.addr, 0);
		fake_push(&c.fr.im, &t[i], middle, 2);
		fake_push(&c.fr.im, &t[i], inner.addr, 4);
	}
	ctx_thread(&c, &good); /* and one that is fine, last */
	fake_push(&c.fr.im, &good, outer.addr, 0);
	fake_push(&c.fr.im, &good, inner.addr, 4);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2 * N + 1);
		for (size_t i = 0; i < 2 * N; i++) {
			if (shown[i] != NULL) {
				expect_frames(&c, i, (struct want[]){ { &inner, 4 }, { &middles[i], 2 },
				                                       { &outer, 0 } }, 3);
				continue;
			}
			cr_assert_eq(thread_at(&c, i)->status, PY_THREAD_ERROR, "%s: %s %s read as a name",
			             c.v, i % 2 ? "filename" : "qualname", bad_strs[i / 2].what);
		}
		expect_frames(&c, 2 * N, (struct want[]){ { &inner, 4 }, { &outer, 0 } }, 2);
		expect_sane_codes(&c);
	}
	for (size_t i = 0; i < 2 * N; i++)
		free(shown[i]);
	ctx_end(&c);
}

VERSION_TEST(name_pointers_into_unmapped_memory)
{
	for (int variant = 0; variant < 3; variant++) {
		struct ctx c;
		struct three s;
		uintptr_t str;

		ctx_init(&c, *vi);
		three_frames(&c, &s);
		if (variant == 0) {
			str = c.fr.im.guard;
		} else if (variant == 1) {
			str = 0;
		} else {
			/* a header that fits, data that runs into the guard page */
			static const char text[] = "abcdefghijklmnopqrstuvwxyz";

			str = c.fr.im.guard - c.fr.o->str_compact_data - 16;
			memset((void *)str, 0, c.fr.o->str_compact_data + 16);
			fake_w64(str + 8, c.fr.im.other_type);
			fake_w64(str + c.fr.o->str_length, 1000);
			fake_w32(str + c.fr.o->str_state, KIND_ASCII);
			memcpy((void *)(str + c.fr.o->str_ascii_data), text, 16);
			fake_child_sync(&c.fr.child, str, c.fr.o->str_compact_data + 16);
		}
		fake_w64(s.inner.addr + c.fr.o->co_qualname, str);
		ctx_publish(&c);
		expect_error_ticks(&c);
		ctx_end(&c);
	}
}

VERSION_TEST(instruction_pointer_outside_the_code)
{
	static const int64_t bad[] = { 2 * FAKE_CODE_UNITS, 2 * FAKE_CODE_UNITS + 100, -4,
	                               1ll << 30, -(1ll << 40) };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctx c;
		struct three s;

		ctx_init(&c, *vi);
		three_frames(&c, &s);
		fake_w64(s.f_middle + c.fr.o->if_instr,
		         s.middle.addr + c.fr.o->co_code_adaptive + (uint64_t)bad[i]);
		ctx_publish(&c);
		expect_error_ticks(&c);
		ctx_end(&c);
	}
}

/* A frame stuck on a bad offset must not make the reader re-read (and
 * re-number) the same unchanged code object every tick: each new id is a
 * new code definition sent to the aggregator and kept for the session. */
VERSION_TEST(bad_offset_does_not_grow_the_code_table)
{
	struct ctx c;
	struct three s;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	fake_w64(s.f_middle + c.fr.o->if_instr, s.middle.addr + c.fr.o->co_code_adaptive + 4 * FAKE_CODE_UNITS);
	ctx_publish(&c);
	for (int tick = 0; tick < 50; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		expect_error(&c, 0);
	}
	cr_assert_leq(count_codes(&c), 4, "%s: %zu code entries after 50 ticks over 3 codes",
	              c.v, count_codes(&c));
	ctx_end(&c);
}

VERSION_TEST(garbage_frame_owner)
{
	struct ctx c;
	struct three s;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	fake_w8(s.f_middle + c.fr.o->if_owner, 200);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 1);
		/* an error, or the frame taken for a shim and left out */
		expect_error_or(&c, 0, (struct want[]){ { &s.inner, 4 }, { &s.outer, 0 } }, 2);
	}
	ctx_end(&c);
}

VERSION_TEST(absurd_line_table_is_left_out)
{
	for (int variant = 0; variant < 4; variant++) {
		struct ctx c;
		struct three s;
		uintptr_t lt;
		const struct py_code *pc;

		ctx_init(&c, *vi);
		three_frames(&c, &s);
		lt = fake_r64(s.inner.addr + c.fr.o->co_linetable);
		if (variant == 0)
			fake_w64(lt + c.fr.o->bytes_size, 1ull << 40);
		else if (variant == 1)
			fake_w64(lt + c.fr.o->bytes_size, (uint64_t)-1);
		else if (variant == 2) /* 16 MiB, all of it mapped */
			fake_w64(lt + c.fr.o->bytes_size, 16u << 20);
		else
			fake_w64(s.inner.addr + c.fr.o->co_linetable, c.fr.im.guard);
		ctx_publish(&c);
		cr_assert_eq(ctx_sample(&c), 1);
		expect_frames(&c, 0, (struct want[]){ { &s.inner, 4 }, { &s.middle, 2 }, { &s.outer, 0 } }, 3);
		pc = py_reader_code(c.fr.r, thread_at(&c, 0)->frames[0].code_id);
		cr_assert_eq(pc->linetable_len, 0);
		cr_assert_null(pc->linetable);
		ctx_end(&c);
	}
}

/* The outer frames in an older chunk whose header is torn. */
VERSION_TEST(absurd_chunk_headers)
{
	for (int variant = 0; variant < 5; variant++) {
		struct ctx c;
		struct fake_thread t;
		struct code_ref a, b, d;
		uintptr_t root, cur;

		ctx_init(&c, *vi);
		ctx_thread(&c, &t);
		a = mk_code(&c, "a", "/c.py", 1);
		b = mk_code(&c, "b", "/c.py", 2);
		d = mk_code(&c, "d", "/c.py", 3);
		root = t.chunk;
		fake_push(&c.fr.im, &t, a.addr, 0);
		fake_push(&c.fr.im, &t, b.addr, 2);
		cur = fake_new_chunk(&c.fr.im, &t, 0);
		fake_push(&c.fr.im, &t, d.addr, 4);
		switch (variant) {
		case 0:
			fake_w64(root + c.fr.o->chunk_size, 1ull << 40);
			break;
		case 1:
			fake_w64(root + c.fr.o->chunk_size, 8);
			break;
		case 2:
			fake_w64(cur + c.fr.o->chunk_size, 1ull << 40);
			break;
		case 3: /* the current chunk's previous is itself */
			fake_w64(cur, cur);
			break;
		case 4: /* ... or unmapped */
			fake_w64(cur, c.fr.im.guard);
			break;
		}
		ctx_publish(&c);
		for (int tick = 0; tick < 3; tick++) {
			cr_assert_eq(ctx_sample(&c), 1);
			expect_error_or(&c, 0, (struct want[]){ { &d, 4 }, { &b, 2 }, { &a, 0 } }, 3);
			expect_sane_codes(&c);
		}
		ctx_end(&c);
	}
}

VERSION_TEST(datastack_top_outside_its_chunk)
{
	for (int variant = 0; variant < 3; variant++) {
		struct ctx c;
		struct three s;

		ctx_init(&c, *vi);
		three_frames(&c, &s);
		if (variant == 0)
			s.t.top = s.t.chunk - 64;
		else if (variant == 1)
			s.t.top = s.t.chunk + (4u << 20);
		else
			s.t.top = c.fr.im.guard + 4096;
		fake_store_stack(&c.fr.im, &s.t);
		ctx_publish(&c);
		for (int tick = 0; tick < 3; tick++) {
			cr_assert_eq(ctx_sample(&c), 1);
			expect_error_or(&c, 0, (struct want[]){ { &s.inner, 4 }, { &s.middle, 2 },
			                                       { &s.outer, 0 } }, 3);
		}
		ctx_end(&c);
	}
}

/* One thread's chunk unreadable: that thread is an error, the next one
 * is still read. */
VERSION_TEST(unreadable_chunk_spoils_only_its_thread)
{
	struct ctx c;
	struct three s;
	struct fake_thread t2;
	struct code_ref k;

	ctx_init(&c, *vi);
	three_frames(&c, &s);
	ctx_thread(&c, &t2);
	k = mk_code(&c, "other", "/o.py", 5);
	fake_push(&c.fr.im, &t2, k.addr, 8);
	ctx_publish(&c);
	fake_child_protect(&c.fr.child, s.t.chunk, FAKE_CHUNK_SIZE);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_error(&c, 0);
		expect_frames(&c, 1, (struct want[]){ { &k, 8 } }, 1);
	}
	ctx_end(&c);
}

/* Thread 0 leaves a chunk CPython then unmaps; the speculative read of it
 * fails.  Thread 1's stack is unchanged and must keep its code ids. */
VERSION_TEST(freed_chunk_of_one_thread_keeps_other_threads_codes)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a, b;
	uintptr_t f0, root;
	uint32_t id_b;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	a = mk_code(&c, "a", "/a.py", 1);
	b = mk_code(&c, "b", "/b.py", 1);
	root = t1.chunk;
	f0 = fake_push(&c.fr.im, &t1, a.addr, 0);
	fake_new_chunk(&c.fr.im, &t1, 0);
	fake_push(&c.fr.im, &t1, a.addr, 2);
	fake_push(&c.fr.im, &t2, b.addr, 6);
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_frames(&c, 0, (struct want[]){ { &a, 2 }, { &a, 0 } }, 2);
		expect_frames(&c, 1, (struct want[]){ { &b, 6 } }, 1);
	}
	id_b = thread_at(&c, 1)->frames[0].code_id;

	fake_child_protect(&c.fr.child, t1.chunk, FAKE_CHUNK_SIZE);
	t1.chunk = root;
	t1.top = f0 + FAKE_FRAME_SIZE;
	fake_store_stack(&c.fr.im, &t1);
	fake_set_current(&c.fr.im, &t1, f0);
	fake_child_sync(&c.fr.child, t1.tstate, 512);
	if (t1.cframe)
		fake_child_sync(&c.fr.child, t1.cframe, 32);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), 2);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
		expect_frames(&c, 1, (struct want[]){ { &b, 6 } }, 1);
		cr_assert_eq(thread_at(&c, 1)->frames[0].code_id, id_b,
		             "%s: thread 1's unchanged code re-read under a new id", c.v);
	}
	ctx_end(&c);
}

/* ---- hostile thread and interpreter lists ----------------------------------- */

VERSION_TEST(thread_list_with_a_cycle)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	a = mk_code(&c, "a", "/a.py", 1);
	fake_push(&c.fr.im, &t1, a.addr, 0);
	fake_push(&c.fr.im, &t2, a.addr, 2);
	fake_w64(t2.tstate + c.fr.o->ts_next, t1.tstate);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		int n = ctx_sample(&c);

		cr_assert_geq(n, 2, "%s", c.v);
		cr_assert_leq(n, READER_MAX_THREADS, "%s: %d threads", c.v, n);
		for (int i = 0; i < n; i++) {
			const struct py_thread_sample *th = thread_at(&c, (size_t)i);

			cr_assert(th->tstate == t1.tstate || th->tstate == t2.tstate);
			if (th->status == PY_THREAD_OK)
				expect_frames(&c, (size_t)i, (struct want[]){ { &a, th->tstate == t1.tstate ? 0 : 2 } }, 1);
		}
	}
	ctx_end(&c);
}

/* Each thread state is listed once, however the list loops. */
VERSION_TEST(thread_list_cycle_lists_each_thread_once)
{
	struct ctx c;
	struct fake_thread t1, t2;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	fake_w64(t2.tstate + c.fr.o->ts_next, t1.tstate);
	ctx_publish(&c);
	cr_assert_eq(ctx_sample(&c), 2, "%s: a two-thread cycle", c.v);
	ctx_end(&c);
}

VERSION_TEST(thread_state_of_another_interpreter)
{
	struct ctx c;
	struct fake_thread t1, t2;
	struct code_ref a;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t1);
	ctx_thread(&c, &t2);
	a = mk_code(&c, "a", "/a.py", 1);
	fake_push(&c.fr.im, &t1, a.addr, 0);
	fake_push(&c.fr.im, &t2, a.addr, 2);
	fake_w64(t2.tstate + c.fr.o->ts_interp, fake_alloc(&c.fr.im, 64));
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		int n = ctx_sample(&c);

		cr_assert_geq(n, 1, "%s", c.v);
		cr_assert_leq(n, 2, "%s", c.v);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
	}
	ctx_end(&c);
}

VERSION_TEST(interpreter_list_with_a_cycle)
{
	struct ctx c;
	struct fake_thread t;
	struct code_ref a;

	ctx_init(&c, *vi);
	ctx_thread(&c, &t);
	a = mk_code(&c, "a", "/a.py", 1);
	fake_push(&c.fr.im, &t, a.addr, 0);
	fake_w64(c.fr.im.interp + c.fr.o->is_next, c.fr.im.interp);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		int n = ctx_sample(&c);

		cr_assert_geq(n, 1, "%s", c.v);
		cr_assert_leq(n, READER_MAX_THREADS, "%s", c.v);
		expect_frames(&c, 0, (struct want[]){ { &a, 0 } }, 1);
	}
	ctx_end(&c);
}

VERSION_TEST(no_interpreter_yet)
{
	for (int variant = 0; variant < 3; variant++) {
		struct ctx c;

		ctx_init(&c, *vi);
		if (variant == 0)
			fake_w64(c.fr.im.runtime + c.fr.o->rt_interp_head, 0);
		else if (variant == 1)
			fake_w64(c.fr.im.runtime + c.fr.o->rt_interp_head, c.fr.im.guard);
		else
			fake_w64(c.fr.im.interp + c.fr.o->is_threads_head, c.fr.im.guard + 8);
		ctx_publish(&c);
		for (int tick = 0; tick < 2; tick++)
			cr_assert_eq(ctx_sample(&c), 0, "%s: variant %d", c.v, variant);
		ctx_end(&c);
	}
}

/* ---- many threads, many codes: scatter reads past the kernel's IOV_MAX --- */

/* 600 threads, each in its own function: more ranges than one
 * process_vm_readv takes (IOV_MAX, 1024), on the first tick (3.11/3.12:
 * two per thread) and on later ones (thread states, speculative stack
 * reads and code checks). */
VERSION_TEST(six_hundred_threads)
{
	enum { N = 600 };
	struct ctx c;
	static struct fake_thread t[N];
	static struct code_ref k[N];
	static char names[N][24];

	ctx_init(&c, *vi);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "worker_%d", i);
		ctx_thread(&c, &t[i]);
		k[i] = mk_code(&c, names[i], "/pool.py", i);
		fake_push(&c.fr.im, &t[i], k[i].addr, 2 * (i % 64));
	}
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), N);
		for (int i = 0; i < N; i++)
			expect_frames(&c, (size_t)i, (struct want[]){ { &k[i], 2 * (i % 64) } }, 1);
	}
	ctx_end(&c);
}

/* 40 threads with 32 distinct functions each: 1280 code checks per tick.
 * A code object replaced at its address must still be noticed. */
VERSION_TEST(code_reuse_noticed_among_many_codes)
{
	enum { T = 40, D = 32 };
	struct ctx c;
	static struct fake_thread t[T];
	static struct code_ref k[T * D];
	static struct want w[D];
	static char names[T * D][32];

	ctx_init(&c, *vi);
	for (int i = 0; i < T; i++) {
		ctx_thread(&c, &t[i]);
		for (int j = 0; j < D; j++) {
			snprintf(names[i * D + j], sizeof(names[0]), "f_%d_%d", i, j);
			k[i * D + j] = mk_code(&c, names[i * D + j], "/many.py", j);
			fake_push(&c.fr.im, &t[i], k[i * D + j].addr, 2 * j);
		}
	}
	ctx_publish(&c);
	for (int tick = 0; tick < 2; tick++) {
		cr_assert_eq(ctx_sample(&c), T);
		for (int j = 0; j < D; j++)
			w[D - 1 - j] = (struct want){ &k[j], 2 * j };
		expect_frames(&c, 0, w, D);
	}
	/* thread 0's outermost function is replaced by another at its address */
	k[0].qualname = "replacement";
	k[0].firstlineno = 77;
	fake_w64(k[0].addr + c.fr.o->co_qualname, fake_str(&c.fr.im, "replacement"));
	fake_w32(k[0].addr + c.fr.o->co_firstlineno, 77);
	ctx_publish(&c);
	for (int tick = 0; tick < 3; tick++) {
		cr_assert_eq(ctx_sample(&c), T);
		expect_frames(&c, 0, w, D);
		for (int i = 1; i < T; i++)
			cr_assert_eq(thread_at(&c, (size_t)i)->status, PY_THREAD_OK);
	}
	ctx_end(&c);
}
