/* py_offsets_from_debug against hostile _Py_DebugOffsets tables.  The
 * table is written by the target, and the reader copies thread states,
 * frames, code, str and bytes headers into fixed buffers at the offsets it
 * gives: a table placing a field beyond those buffers must be refused, not
 * turned into a layout (found by fuzz/fuzz_reader: a str header offset
 * of 200 overflowed the reader's 128-byte stack buffer). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "cpython/py_offsets.h"

#define TABLE_BYTES 1024 /* what py_runtime.c reads */

/* The table slot (byte offset) that feeds the py_offsets field at byte
 * `field`: found by a marker in each slot in turn; 0 when none. */
static size_t slot_of(unsigned minor, size_t field)
{
	enum { MARK = 200 };

	for (size_t at = 8; at + 8 <= TABLE_BYTES; at += 8) {
		uint8_t t[TABLE_BYTES] = "xdebugpy";
		struct py_offsets o;
		uint64_t mark = MARK;
		uint32_t v;

		memcpy(t + at, &mark, sizeof(mark));
		memset(&o, 0, sizeof(o));
		(void)py_offsets_from_debug(t, sizeof(t), minor, &o);
		memcpy(&v, (const uint8_t *)&o + field, sizeof(v));
		if (v == MARK)
			return at;
	}
	return 0;
}

/* A table that describes the built-in layout of 3.<minor> exactly. */
static void honest_table(unsigned minor, uint8_t t[TABLE_BYTES])
{
	const struct py_offsets *o = py_offsets_for(3, minor);

	memset(t, 0, TABLE_BYTES);
	memcpy(t, "xdebugpy", 8);
	for (size_t f = 0; f + 4 <= offsetof(struct py_offsets, call_ops); f += 4) {
		size_t at = slot_of(minor, f);
		uint32_t v;
		uint64_t w;

		if (at == 0)
			continue;
		memcpy(&v, (const uint8_t *)o + f, sizeof(v));
		w = v;
		memcpy(t + at, &w, sizeof(w));
	}
}

struct lie {
	const char *what;
	size_t field;   /* offsetof(struct py_offsets, ...) */
	uint64_t value; /* below take()'s own per-entry limit */
};

static const struct lie lies[] = {
	{ "str header past the 128-byte buffer", offsetof(struct py_offsets, str_ascii_data), 200 },
	{ "str length outside the header", offsetof(struct py_offsets, str_length), 120 },
	{ "bytes size past the 40-byte buffer", offsetof(struct py_offsets, bytes_size), 200 },
	{ "frame field past the frame", offsetof(struct py_offsets, if_previous), 200 },
	{ "frame owner past the frame", offsetof(struct py_offsets, if_owner), 250 },
	{ "code name past the fingerprinted header", offsetof(struct py_offsets, co_name), 1000 },
	{ "line table before ob_size and co_names", offsetof(struct py_offsets, co_linetable), 0 },
	{ "file name inside the object header", offsetof(struct py_offsets, co_filename), 1 },
	{ "qualified name inside the object header", offsetof(struct py_offsets, co_qualname), 0 },
	{ "thread link past the thread state read", offsetof(struct py_offsets, ts_next), 4000 },
};

Test(debug_offsets, honest_tables_give_the_builtin_layout)
{
	for (size_t i = 0; py_offsets_at(i) != NULL; i++) {
		const struct py_offsets *b = py_offsets_at(i);
		uint8_t t[TABLE_BYTES];
		struct py_offsets o;

		cr_assert(py_offsets_fit(b), "3.%u's built-in table must fit", b->minor);
		if (b->minor < 13)
			continue;
		honest_table(b->minor, t);
		cr_assert_eq(py_offsets_from_debug(t, sizeof(t), b->minor, &o), 0,
		             "3.%u: an honest table is refused", b->minor);
		cr_assert_eq(o.str_ascii_data, b->str_ascii_data, "3.%u", b->minor);
		cr_assert_eq(o.if_size, b->if_size, "3.%u", b->minor);
		cr_assert_eq(o.co_linetable, b->co_linetable, "3.%u", b->minor);
	}
}

Test(debug_offsets, tables_placing_fields_outside_the_buffers_are_refused)
{
	for (size_t i = 0; py_offsets_at(i) != NULL; i++) {
		unsigned minor = py_offsets_at(i)->minor;

		if (minor < 13)
			continue;
		for (size_t k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
			uint8_t t[TABLE_BYTES];
			struct py_offsets o;
			size_t at = slot_of(minor, lies[k].field);

			if (at == 0)
				continue; /* this version's table has no such entry */
			honest_table(minor, t);
			memcpy(t + at, &lies[k].value, sizeof(lies[k].value));
			cr_expect_eq(py_offsets_from_debug(t, sizeof(t), minor, &o), -1,
			             "3.%u accepted a table with %s", minor, lies[k].what);
		}
	}
}
