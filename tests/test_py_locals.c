/* test_py_locals.c - the frame walk, locals and thread names of dump on a
 * fake address space laid out as CPython 3.12 and 3.13 lay it out: the
 * ordinary case (arguments, locals, a cell, an unbound slot; a Thread's
 * name in a materialised dict, in 3.12's shared-key values, in 3.13's
 * inline values) and the hostile one (a frame chain that loops, a code
 * object claiming 2^40 locals), which must end, bounded, without a name
 * or a value that was not there. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/py_locals.h"
#include "cpython/py_objects.h"
#include "cpython/py_thread_names.h"
#include "fake_mem.h"

static struct py_object_layout L;

static void use_version(unsigned minor)
{
	struct py_runtime rt = { .off = py_offsets_for(3, minor) };

	fake_reset();
	cr_assert_not_null(rt.off);
	cr_assert_eq(py_objects_layout(0, &rt, &L), 0);
}

static void teardown(void)
{
	fake_reset();
}

static uintptr_t type_named(const char *name, uint64_t flags)
{
	uintptr_t t = fake_alloc(1024), s = fake_alloc(strlen(name) + 1);

	memcpy(fake_at(s), name, strlen(name) + 1);
	fake_put64(t + L.tp_name, s);
	fake_put64(t + L.tp_flags, flags);
	fake_put64(t + L.tp_basicsize, 16);
	return t;
}

static uintptr_t object(const char *type, size_t size)
{
	uintptr_t o = fake_alloc(size);

	fake_put64(o + L.ob_type, type_named(type, 0));
	return o;
}

static uintptr_t mk_str(const char *ascii)
{
	size_t n = strlen(ascii);
	uintptr_t o = object("str", L.str_ascii_data + n + 1);

	fake_put64(o + L.str_length, n);
	fake_put32(o + L.str_state, 1u << 2 | 1u << 5 | 1u << 6);
	memcpy(fake_at(o + L.str_ascii_data), ascii, n);
	return o;
}

static uintptr_t mk_int(uint32_t v)
{
	uintptr_t o = object("int", 32);

	fake_put64(o + L.long_size, v == 0 ? 1 : 1u << 3);
	fake_put32(o + L.long_digits, v);
	return o;
}

/* A code object with these local names and kinds, argcount arguments. */
static uintptr_t mk_code(const char *qualname, const char *file, int argcount, size_t n,
                         const char *const *names, const uint8_t *kinds)
{
	uintptr_t code = object("code", 256);
	uintptr_t tuple = object("tuple", L.tuple_items + 8 * n + 8);
	uintptr_t bytes = object("bytes", L.bytes_data + n + 1);

	fake_put64(tuple + L.tuple_size, n);
	fake_put64(bytes + L.bytes_size, n);
	for (size_t i = 0; i < n; i++) {
		fake_put64(tuple + L.tuple_items + 8 * i, mk_str(names[i]));
		fake_at(bytes + L.bytes_data)[i] = kinds[i];
	}
	fake_put32(code + L.co_argcount, (uint32_t)argcount);
	fake_put64(code + L.co_localsplusnames, tuple);
	fake_put64(code + L.co_localspluskinds, bytes);
	fake_put64(code + L.co_qualname, mk_str(qualname));
	fake_put64(code + L.co_filename, mk_str(file));
	return code;
}

static uintptr_t mk_frame(uintptr_t code, uintptr_t previous, size_t nslots)
{
	uintptr_t f = fake_alloc(L.if_localsplus + 8 * nslots + 8);

	fake_put64(f + L.if_code, code);
	fake_put64(f + L.if_previous, previous);
	return f;
}

/* A thread state whose current frame is f (3.12: through _PyCFrame). */
static uintptr_t mk_tstate(uintptr_t f)
{
	uintptr_t ts = fake_alloc(512), cframe = fake_alloc(64);

	if (L.ts_cframe != 0) {
		fake_put64(ts + L.ts_cframe, cframe);
		fake_put64(cframe + L.cf_current_frame, f);
	} else {
		fake_put64(ts + L.ts_current_frame, f);
	}
	return ts;
}

TestSuite(py_locals, .fini = teardown);

Test(py_locals, arguments_locals_cells_unbound)
{
	static const char *const names[] = { "x", "s", "unbound", "captured" };
	static const uint8_t kinds[] = { 0x20, 0x20, 0x20, 0x40 };
	uintptr_t code, frame, ts, cell;
	struct py_frame_locals out = { 0 };

	use_version(12);
	code = mk_code("f", "/m.py", 1, 4, names, kinds);
	frame = mk_frame(code, 0, 4);
	cell = object("cell", 24);
	fake_put64(cell + L.cell_ref, mk_str("in a cell"));
	fake_put64(frame + L.if_localsplus, mk_int(5));
	fake_put64(frame + L.if_localsplus + 8, mk_str("a"));
	fake_put64(frame + L.if_localsplus + 24, cell);
	ts = mk_tstate(frame);
	cr_assert_eq(py_locals_read(&fake_mem, &L, ts, (uintptr_t[]){ code }, 1, &out), 0);
	cr_assert_null(out.error);
	cr_assert_eq(out.nvars, 3);
	cr_expect_str_eq(out.vars[0].name, "x");
	cr_expect_str_eq(out.vars[0].repr, "5");
	cr_expect(out.vars[0].argument);
	cr_expect_str_eq(out.vars[1].repr, "'a'");
	cr_expect(!out.vars[1].argument);
	cr_expect_str_eq(out.vars[2].name, "captured");
	cr_expect_str_eq(out.vars[2].repr, "'in a cell'");
	py_frame_locals_free(&out);
	/* Another code than the reader saw: nothing shown under it. */
	cr_expect_eq(py_locals_read(&fake_mem, &L, ts, (uintptr_t[]){ code + 8 }, 1, &out), -1);
}

Test(py_locals, looping_frame_chain_ends)
{
	uintptr_t code, a, b, ts, frame, found;

	use_version(12);
	code = mk_code("Thread._bootstrap", "/usr/lib/python3.12/threading.py", 1, 0, NULL, NULL);
	a = mk_frame(code, 0, 1);
	b = mk_frame(code, a, 1);
	fake_put64(a + L.if_previous, b); /* a -> b -> a -> ... */
	ts = mk_tstate(a);
	cr_expect(!py_frames_outermost(&fake_mem, &L, ts, 100000, &frame, &found));
	cr_expect_null(py_thread_name(&fake_mem, &L, ts, &(uintptr_t){ 0 }));
}

Test(py_locals, code_claiming_huge_locals)
{
	static const char *const names[] = { "x" };
	static const uint8_t kinds[] = { 0x20 };
	uintptr_t code, frame, ts;
	struct py_frame_locals out = { 0 };

	use_version(12);
	code = mk_code("f", "/m.py", 0, 1, names, kinds);
	fake_put64(*(uint64_t *)fake_at(code + L.co_localsplusnames) + L.tuple_size, 1ull << 40);
	frame = mk_frame(code, 0, 1);
	ts = mk_tstate(frame);
	cr_assert_eq(py_locals_read(&fake_mem, &L, ts, (uintptr_t[]){ code }, 1, &out), 0);
	cr_expect_not_null(out.error);
	cr_expect_eq(out.nvars, 0);
}

/* A dict {'_name': name} with str keys (DK kind 1). */
static uintptr_t mk_name_dict(const char *name)
{
	uintptr_t d = object("dict", 48), keys = fake_alloc(32 + 8 + 16 * 5);

	fake_put64(d + L.dict_used, 1);
	fake_put64(d + L.dict_keys, keys);
	fake_at(keys)[8] = 3, fake_at(keys)[9] = 3, fake_at(keys)[10] = 1;
	fake_put64(keys + 24, 1);
	fake_put64(keys + 40, mk_str("_name"));
	fake_put64(keys + 48, mk_str(name));
	return d;
}

/* A thread running Thread._bootstrap(self) outermost, self of a class
 * with a managed dict; returns its thread state, *self the object. */
static uintptr_t bootstrap_thread(uintptr_t *self, uint64_t type_flags)
{
	static const char *const names[] = { "self" };
	static const uint8_t kinds[] = { 0x20 };
	uintptr_t code = mk_code("Thread._bootstrap", "/usr/lib/python3/threading.py", 1, 1,
	                         names, kinds);
	uintptr_t outer = mk_frame(code, 0, 1), inner = mk_frame(code + 0, outer, 1);
	uintptr_t block = fake_alloc(64 + 16 + 64), type = type_named("Thread", type_flags);

	*self = block + 32; /* room before it for 3.11/3.12's pre-header */
	fake_put64(*self + L.ob_type, type);
	fake_put64(outer + L.if_localsplus, *self);
	return mk_tstate(inner);
}

Test(py_locals, thread_name_in_dict)
{
	uintptr_t self, ts;
	char *name;

	use_version(12);
	ts = bootstrap_thread(&self, 1u << 4);
	fake_put64(self - 24, mk_name_dict("worker-1")); /* materialised dict */
	name = py_thread_name(&fake_mem, &L, ts, &(uintptr_t){ 0 });
	cr_assert_not_null(name);
	cr_expect_str_eq(name, "worker-1");
	free(name);
}

Test(py_locals, thread_name_in_inline_values)
{
	uintptr_t self, ts, keys, type;
	char *name;

	use_version(13);
	ts = bootstrap_thread(&self, 1u << 4 | 1u << 2);
	type = *(uint64_t *)fake_at(self + L.ob_type);
	keys = fake_alloc(32 + 8 + 16 * 5);
	fake_at(keys)[8] = 3, fake_at(keys)[9] = 3, fake_at(keys)[10] = 2; /* split */
	fake_put64(keys + 24, 1);
	fake_put64(keys + 40, mk_str("_name"));
	fake_put64(type + L.ht_cached_keys, keys);
	fake_at(self + 16)[3] = 1;                         /* values valid */
	fake_put64(self + 16 + 8, mk_str("inline"));       /* values[0] */
	name = py_thread_name(&fake_mem, &L, ts, &(uintptr_t){ 0 });
	cr_assert_not_null(name);
	cr_expect_str_eq(name, "inline");
	free(name);
	/* Values marked invalid and no dict: no name, not a stale one. */
	fake_at(self + 16)[3] = 0;
	cr_expect_null(py_thread_name(&fake_mem, &L, ts, &(uintptr_t){ 0 }));
}
