/* test_py_repr.c - py_repr.h on a fake address space: values built by hand
 * the way CPython 3.12 (and 3.11, 3.14 for the layouts that differ) lays
 * them out, shown as Python's repr shows them; and hostile or torn memory
 * (cycles, huge lengths, bad pointers, impossible flags, bytes that are
 * not a name) shown as unreadable, bounded, never a crash or a guess. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/py_objects.h"
#include "cpython/py_repr.h"
#include "fake_mem.h"

static struct py_object_layout L;

static void setup_version(unsigned minor)
{
	fake_reset();
	cr_assert_eq(py_objects_builtin(minor, &L), 0);
}

static void setup(void)
{
	setup_version(12);
}

static void teardown(void)
{
	fake_reset();
}

static uintptr_t type_named(const char *name)
{
	uintptr_t t = fake_alloc(416), s = fake_alloc(strlen(name) + 1);

	memcpy(fake_at(s), name, strlen(name) + 1);
	fake_put64(t + L.tp_name, s);
	return t;
}

static uintptr_t object(const char *type, size_t size)
{
	uintptr_t o = fake_alloc(size);

	fake_put64(o + L.ob_type, type_named(type));
	return o;
}

static uintptr_t mk_int(int64_t v)
{
	uintptr_t o = object("int", 40);
	uint64_t m = v < 0 ? (uint64_t)-v : (uint64_t)v;
	size_t n = 0;

	while (m != 0) {
		fake_put32(o + L.long_digits + 4 * n++, (uint32_t)(m & ((1u << 30) - 1)));
		m >>= 30;
	}
	fake_put64(o + L.long_size, (uint64_t)n << 3 | (v == 0 ? 1 : v < 0 ? 2 : 0));
	return o;
}

static uintptr_t mk_str(const char *ascii)
{
	size_t n = strlen(ascii);
	uintptr_t o = object("str", L.str_ascii_data + n + 1);

	fake_put64(o + L.str_length, n);
	fake_put32(o + L.str_state, 1u << 2 | 1u << 5 | 1u << 6); /* kind 1, compact, ascii */
	memcpy(fake_at(o + L.str_ascii_data), ascii, n);
	return o;
}

static uintptr_t mk_list(size_t n, const uintptr_t *items)
{
	uintptr_t o = object("list", 40), arr = fake_alloc(n ? 8 * n : 8);

	fake_put64(o + L.list_size, n);
	fake_put64(o + L.list_items, arr);
	for (size_t i = 0; i < n; i++)
		fake_put64(arr + 8 * i, items[i]);
	return o;
}

static char *show(uintptr_t addr)
{
	char *s = py_repr(&fake_mem, &L, addr);

	cr_assert_not_null(s);
	return s;
}

static void expect_repr(uintptr_t addr, const char *want)
{
	char *s = show(addr);

	cr_expect_str_eq(s, want);
	free(s);
}

/* "<unreadable WHAT at 0xADDR>" for the object at addr. */
static void expect_unreadable(uintptr_t addr, const char *what)
{
	char want[128];

	snprintf(want, sizeof want, "<unreadable %s at 0x%lx>", what, (unsigned long)addr);
	expect_repr(addr, want);
}

TestSuite(py_repr, .init = setup, .fini = teardown);

Test(py_repr, scalars_and_nesting)
{
	uintptr_t items[3] = { mk_int(-1234), mk_str("it's"), 0 };
	uintptr_t inner = mk_list(2, items);

	items[2] = inner;
	expect_repr(mk_int(0), "0");
	expect_repr(mk_int(-1234), "-1234");
	expect_repr(mk_int((int64_t)1 << 62), "4611686018427387904");
	expect_repr(mk_list(3, items), "[-1234, \"it's\", [-1234, \"it's\"]]");
	expect_repr(object("NoneType", 16), "None");
}

Test(py_repr, other_objects_by_type_and_address)
{
	uintptr_t o = object("threading.Thread", 16);
	char want[64];

	snprintf(want, sizeof want, "<threading.Thread object at 0x%lx>", (unsigned long)o);
	expect_repr(o, want);
}

Test(py_repr, float_shortest_round_trip)
{
	static const struct { double v; const char *want; } cases[] = {
		{ 0.1, "0.1" }, { 1e16, "1e+16" }, { 1e15, "1000000000000000.0" },
		{ 1.5e-7, "1.5e-07" }, { 0.0001, "0.0001" }, { 1e-5, "1e-05" },
		{ -0.0, "-0.0" }, { 2.5, "2.5" }, { 1.0 / 3, "0.3333333333333333" },
		{ 5e-324, "5e-324" }, { 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 123456789.123, "123456789.123" }, { 1e22, "1e+22" }, { 100.0, "100.0" },
	};
	char buf[48];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		py_float_repr(cases[i].v, buf, sizeof buf);
		cr_expect_str_eq(buf, cases[i].want);
	}
	py_float_repr(NAN, buf, sizeof buf);
	cr_expect_str_eq(buf, "nan");
	py_float_repr(-INFINITY, buf, sizeof buf);
	cr_expect_str_eq(buf, "-inf");
}

/* More digits than shown: said so, not printed, not unreadable. */
Test(py_repr, int_too_large)
{
	uintptr_t i = object("int", 24 + 4 * 481);
	char want[64];

	for (int d = 0; d < 481; d++)
		fake_put32(i + L.long_digits + 4 * (uintptr_t)d, 1);
	fake_put64(i + L.long_size, (uint64_t)481 << 3);
	snprintf(want, sizeof want, "<int too large to show at 0x%lx>", (unsigned long)i);
	expect_repr(i, want);
}

Test(py_repr, list_containing_itself)
{
	uintptr_t l = mk_list(1, (uintptr_t[]){ 0 });

	fake_put64(*(uint64_t *)fake_at(l + L.list_items), l);
	expect_repr(l, "[[...]]");
}

Test(py_repr, huge_lengths_are_not_believed)
{
	uintptr_t s = mk_str("abc"), l = mk_list(1, (uintptr_t[]){ mk_int(1) });
	uintptr_t b = object("bytes", 40);

	fake_put64(s + L.str_length, 1ull << 50);
	expect_unreadable(s, "str");
	/* 2^39 items behind a pointer to 8 bytes: the read of the first 100
	 * fails, nothing is allocated for the rest. */
	fake_put64(l + L.list_size, 1ull << 39);
	expect_unreadable(l, "list");
	fake_put64(b + L.bytes_size, UINT64_MAX);
	expect_unreadable(b, "bytes");
}

Test(py_repr, bad_pointers)
{
	uintptr_t wild = object("list", 40), o = fake_alloc(16);

	fake_put64(wild + L.list_size, 2);
	fake_put64(wild + L.list_items, 0xdead0000);    /* unmapped */
	expect_unreadable(wild, "list");
	fake_put64(o + L.ob_type, 0x1234);                /* not a type */
	expect_unreadable(o, "object");
	expect_unreadable(0, "object");
	expect_unreadable(0xfffffffffffffff0ull, "object");
	/* An item that points nowhere is unreadable, its neighbours shown. */
	char *s = show(mk_list(2, (uintptr_t[]){ 0x7000, mk_int(5) }));
	cr_expect_str_eq(s, "[<unreadable object at 0x7000>, 5]");
	free(s);
}

Test(py_repr, impossible_flags_and_bytes)
{
	uintptr_t s = mk_str("abc"), t = mk_str("xyz"), n = fake_alloc(16), i = mk_int(7);
	uintptr_t name = fake_alloc(8);

	fake_put32(s + L.str_state, 3u << 2 | 1u << 5);   /* kind 3: no such kind */
	expect_unreadable(s, "str");
	fake_at(t + L.str_ascii_data)[1] = 0xff;           /* "ascii" with a high byte */
	expect_unreadable(t, "str");
	/* A type whose name is not printable text (not UTF-8, no NUL). */
	memcpy(fake_at(name), "\xff\xfe\x1b[2JAB", 8);
	fake_put64(n + L.ob_type, fake_alloc(416));
	fake_put64(*(uint64_t *)fake_at(n + L.ob_type) + L.tp_name, name);
	expect_unreadable(n, "object");
	fake_put32(i + L.long_digits, 1u << 31);           /* a digit over 30 bits */
	expect_unreadable(i, "int");
	fake_put64(i + L.long_size, 3);                    /* sign 3: none such */
	expect_unreadable(i, "int");
}

Test(py_repr, dict_tables_checked)
{
	uintptr_t d = object("dict", 48), keys = fake_alloc(32 + 8 + 16 * 8);

	fake_put64(d + L.dict_used, 1);
	fake_put64(d + L.dict_keys, keys);
	fake_at(keys)[8] = 3, fake_at(keys)[9] = 3, fake_at(keys)[10] = 1; /* 8 slots, str keys */
	fake_put64(keys + 24, 1);                                  /* dk_nentries */
	fake_put64(keys + 32 + 8, mk_str("k"));
	fake_put64(keys + 32 + 8 + 8, d);                          /* {'k': itself} */
	expect_repr(d, "{'k': {...}}");
	fake_put64(keys + 24, 1ull << 40);                         /* more than the table */
	expect_unreadable(d, "dict");
	fake_put64(keys + 24, 1);
	fake_put64(d + L.dict_used, 5);                            /* more than it holds */
	expect_unreadable(d, "dict");
}

/* A split table (3.12): keys shared, values beside them, the order in
 * bytes before the values; an order naming no entry is torn. */
Test(py_repr, split_dict_order_checked)
{
	uintptr_t d = object("dict", 48), keys = fake_alloc(32 + 8 + 16 * 5);
	uintptr_t block = fake_alloc(64), values = block + 32;

	fake_put64(d + L.dict_used, 2);
	fake_put64(d + L.dict_keys, keys);
	fake_put64(d + L.dict_values, values);
	fake_at(keys)[8] = 3, fake_at(keys)[9] = 3, fake_at(keys)[10] = 2;
	fake_put64(keys + 24, 2);
	fake_put64(keys + 40, mk_str("x"));
	fake_put64(keys + 56, mk_str("y"));
	fake_put64(values, mk_int(1));
	fake_put64(values + 8, mk_int(2));
	fake_at(values)[-2] = 2;                       /* size */
	fake_at(values)[-3] = 1, fake_at(values)[-4] = 0; /* y first, then x */
	expect_repr(d, "{'y': 2, 'x': 1}");
	fake_at(values)[-4] = 7;                       /* no entry 7 */
	expect_unreadable(d, "dict");
}

Test(py_repr, set_table_checked)
{
	uintptr_t s = object("set", 200), table = fake_alloc(16 * 8);

	fake_put64(s + L.set_used, 2);
	fake_put64(s + L.set_mask, 7);
	fake_put64(s + L.set_table, table);
	fake_put64(table + 16 * 1, mk_int(1));
	fake_put64(table + 16 * 2, mk_int(9));
	fake_put64(table + 16 * 2 + 8, UINT64_MAX);                /* deleted (dummy) */
	fake_put64(table + 16 * 5, mk_int(2));
	expect_repr(s, "{1, 2}");
	fake_put64(s + L.set_mask, 6);                             /* not 2^n - 1 */
	expect_unreadable(s, "set");
}

/* A value that would print for ever (a list of 100 lists of 100 long
 * strings) stops at the output bound with the marker. */
Test(py_repr, output_bounded)
{
	char big[300];
	uintptr_t strs[100], lists[100];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	strs[0] = mk_str(big);
	for (int i = 1; i < 100; i++)
		strs[i] = strs[0];
	lists[0] = mk_list(100, strs);
	for (int i = 1; i < 100; i++)
		lists[i] = lists[0];
	char *s = show(mk_list(100, lists));
	cr_expect_leq(strlen(s), PY_REPR_MAX_OUT);
	cr_expect(strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "...") == 0, "%s", s + strlen(s) - 20);
	free(s);
}

/* 3.11's int keeps its sign in ob_size; 3.14's tuple its items at 32. */
Test(py_repr, version_layouts)
{
	uintptr_t i, t;

	setup_version(11);
	i = object("int", 40);
	fake_put64(i + L.long_size, (uint64_t)-1);
	fake_put32(i + L.long_digits, 42);
	expect_repr(i, "-42");
	setup_version(14);
	t = object("tuple", 48);
	fake_put64(t + L.tuple_size, 1);
	fake_put64(t + 32, mk_str(""));
	expect_repr(t, "('',)");
}
