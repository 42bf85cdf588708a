/* py_offsets.c - the built-in CPython structure offsets, one table per
 * supported version, and their checks against what the reader copies
 * (py_offsets.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_offsets.h"

#include <stddef.h>
#include <string.h>

/* Values from offsetof() over each version's headers (Py_BUILD_CORE),
 * checked against live interpreters; see docs/architecture.md. Common to
 * every version: PyObject ob_type at 8, _PyStackChunk {previous, size,
 * top, data} at 0/8/16/24, PyBytesObject ob_size/ob_sval at 16/32,
 * PyASCIIObject length/state at 16/32. */
#define COMMON_TO_ALL \
	.ts_next = 8, .ts_interp = 16, \
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136, \
	.str_length = 16, .str_state = 32, \
	.bytes_size = 16, .bytes_data = 32, \
	.chunk_size = 8, .chunk_data = 24

/* From each version's own dis/opcode modules (opmap plus the
 * specialisations of CALL, CALL_KW, CALL_FUNCTION_EX, PRECALL and their
 * INSTRUMENTED_ forms), dumped from 3.11.2, 3.12.1, 3.13.0/3.13.18,
 * 3.14.10 and 3.15.2. */
#define CALL_OPS(...) \
	.call_ops = (const uint8_t[]){ __VA_ARGS__ }, \
	.ncall_ops = sizeof((const uint8_t[]){ __VA_ARGS__ })

static const struct py_offsets v3_11 = {
	COMMON_TO_ALL,
	.minor = 11,
	CALL_OPS(22, 23, 24, 64, 65, 66, 67, 72, 73, 76, 77, 78, 79, 80, 81, 113, 121, 127, 141, 142, 143, 166, 171),
	.gil_in_runtime = true, .gil_holder = 368,
	.rt_interp_head = 40,
	.is_next = 0, .is_threads_head = 16,
	.ts_cframe = 56, .cf_current_frame = 8, .ts_current_frame = 0,
	.ts_native_tid = 160,
	.ts_datastack_chunk = 296, .ts_datastack_top = 304,
	.ts_read_size = 320,
	.if_code = 32, .if_previous = 48, .if_instr = 56, .if_owner = 69, .if_is_entry = 68,
	.if_size = 72, .owner_not_python = 255, .code_tagged = false,
	.co_firstlineno = 72, .co_code_adaptive = 184,
	.str_ascii_data = 48, .str_compact_data = 72,
};

static const struct py_offsets v3_12 = {
	COMMON_TO_ALL,
	.minor = 12,
	CALL_OPS(23, 24, 28, 29, 34, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 56, 142, 171, 241, 244),
	.gil_holder = 1048,
	.rt_interp_head = 40,
	.is_next = 0, .is_threads_head = 72,
	.ts_cframe = 56, .cf_current_frame = 0, .ts_current_frame = 0,
	.ts_native_tid = 144,
	.ts_datastack_chunk = 232, .ts_datastack_top = 240,
	.ts_read_size = 256,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 70,
	.if_size = 72, .owner_not_python = 3, .code_tagged = false,
	.co_firstlineno = 68, .co_code_adaptive = 192,
	.str_ascii_data = 40, .str_compact_data = 56,
};

static const struct py_offsets v3_13 = {
	COMMON_TO_ALL,
	.minor = 13,
	CALL_OPS(53, 54, 57, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 244, 245, 246),
	.gil_holder = 7760,
	.rt_interp_head = 632,
	.is_next = 7264, .is_threads_head = 7344,
	.ts_cframe = 0, .cf_current_frame = 0, .ts_current_frame = 72,
	.ts_native_tid = 160,
	.ts_datastack_chunk = 232, .ts_datastack_top = 240,
	.ts_read_size = 256,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 70,
	.if_size = 72, .owner_not_python = 3, .code_tagged = false,
	.co_firstlineno = 68, .co_code_adaptive = 200,
	.str_ascii_data = 40, .str_compact_data = 56,
};

/* 3.14 and 3.15: values as their own _Py_DebugOffsets report them (3.14.10,
 * 3.15.2); used as they are only where the table has no entry.  f_executable
 * is a tagged _PyStackRef from 3.14 on. */
static const struct py_offsets v3_14 = {
	COMMON_TO_ALL,
	.minor = 14,
	CALL_OPS(4, 52, 55, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 250, 251, 252),
	.gil_holder = 7792,
	.rt_interp_head = 808,
	.is_next = 7272, .is_threads_head = 7344,
	.ts_cframe = 0, .cf_current_frame = 0, .ts_current_frame = 72,
	.ts_native_tid = 160,
	.ts_datastack_chunk = 232, .ts_datastack_top = 240,
	.ts_read_size = 256,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 74,
	.if_size = 80, .owner_not_python = 3, .code_tagged = true,
	.co_firstlineno = 68, .co_code_adaptive = 208,
	.str_ascii_data = 40, .str_compact_data = 56,
};

static const struct py_offsets v3_15 = {
	COMMON_TO_ALL,
	.minor = 15,
	CALL_OPS(4, 50, 53, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 249, 250, 251),
	.gil_holder = 7744, .ts_gil_requested = 40,
	.rt_interp_head = 936,
	.is_next = 7264, .is_threads_head = 7336,
	.ts_cframe = 0, .cf_current_frame = 0, .ts_current_frame = 72,
	.ts_native_tid = 184,
	.ts_datastack_chunk = 256, .ts_datastack_top = 264,
	.ts_read_size = 280,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 74,
	.if_size = 80, .owner_not_python = 3, .code_tagged = true,
	.co_firstlineno = 68, .co_code_adaptive = 208,
	.str_ascii_data = 40, .str_compact_data = 56,
};

static const struct py_offsets *const tables[] = { &v3_11, &v3_12, &v3_13, &v3_14, &v3_15 };

/* Where, inside _Py_DebugOffsets, each minor version keeps the entries
 * pytop uses (byte offsets into the table; the table grew between 3.13,
 * 3.14 and 3.15).  0 = no such entry. */
struct debug_layout {
	unsigned minor;
	uint32_t rt_size, interp_head, is_next, is_threads_head;
	uint32_t ts_next, ts_interp, ts_current_frame, ts_native_tid, ts_chunk;
	uint32_t if_size, if_previous, if_code, if_instr, if_localsplus, if_owner;
	uint32_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno, co_code;
	uint32_t str_state, str_length, str_ascii_size;
	uint32_t bytes_size, bytes_data;
	uint32_t gil_holder, ts_gil_requested;
	uint32_t table_size;
};

static const struct debug_layout layouts[] = {
	{ .minor = 13, .rt_size = 24, .interp_head = 40, .is_next = 64, .is_threads_head = 72,
	  .ts_next = 168, .ts_interp = 176, .ts_current_frame = 184, .ts_native_tid = 200,
	  .ts_chunk = 208, .if_size = 224, .if_previous = 232, .if_code = 240, .if_instr = 248,
	  .if_localsplus = 256, .if_owner = 264, .co_filename = 280, .co_name = 288,
	  .co_qualname = 296, .co_linetable = 304, .co_firstlineno = 312, .co_code = 344,
	  .bytes_size = 520, .bytes_data = 528,
	  .str_state = 544, .str_length = 552, .str_ascii_size = 560,
	  .gil_holder = 144, .table_size = 584 },
	{ .minor = 14, .rt_size = 24, .interp_head = 40, .is_next = 64, .is_threads_head = 72,
	  .ts_next = 192, .ts_interp = 200, .ts_current_frame = 208, .ts_native_tid = 224,
	  .ts_chunk = 232, .if_size = 248, .if_previous = 256, .if_code = 264, .if_instr = 272,
	  .if_localsplus = 280, .if_owner = 288, .co_filename = 320, .co_name = 328,
	  .co_qualname = 336, .co_linetable = 344, .co_firstlineno = 352, .co_code = 384,
	  .bytes_size = 600, .bytes_data = 608,
	  .str_state = 624, .str_length = 632, .str_ascii_size = 640,
	  .gil_holder = 152, .table_size = 760 },
	{ .minor = 15, .rt_size = 24, .interp_head = 40, .is_next = 64, .is_threads_head = 72,
	  .ts_next = 192, .ts_interp = 200, .ts_current_frame = 208, .ts_native_tid = 248,
	  .ts_chunk = 256, .if_size = 312, .if_previous = 320, .if_code = 328, .if_instr = 336,
	  .if_localsplus = 344, .if_owner = 352, .co_filename = 384, .co_name = 392,
	  .co_qualname = 400, .co_linetable = 408, .co_firstlineno = 416, .co_code = 448,
	  .gil_holder = 152, .ts_gil_requested = 280, .table_size = 880 },
};

static uint64_t word(const uint8_t *t, uint32_t at)
{
	uint64_t v;

	memcpy(&v, t + at, sizeof(v));
	return v;
}

/* Take entry `at` of the table into *field if present and sane. */
static void take(const uint8_t *t, uint32_t at, uint32_t *field, uint64_t limit)
{
	uint64_t v;

	if (at == 0)
		return;
	v = word(t, at);
	if (v < limit)
		*field = (uint32_t)v;
}

int py_offsets_from_debug(const uint8_t *t, size_t len, unsigned minor, struct py_offsets *out)
{
	const struct py_offsets *base = py_offsets_for(3, minor);
	const struct debug_layout *l = NULL;
	uint32_t end;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			l = &layouts[i];
	if (base == NULL || l == NULL || len < l->table_size || memcmp(t, "xdebugpy", 8) != 0)
		return -1;
	*out = *base;
	take(t, l->interp_head, &out->rt_interp_head, 1u << 20);
	take(t, l->is_next, &out->is_next, 1u << 20);
	take(t, l->is_threads_head, &out->is_threads_head, 1u << 20);
	take(t, l->ts_next, &out->ts_next, 4096);
	take(t, l->ts_interp, &out->ts_interp, 4096);
	take(t, l->ts_current_frame, &out->ts_current_frame, 4096);
	take(t, l->ts_native_tid, &out->ts_native_tid, 4096);
	take(t, l->ts_chunk, &out->ts_datastack_chunk, 4096);
	out->ts_datastack_top = out->ts_datastack_chunk + 8; /* chunk, top, limit */
	take(t, l->if_previous, &out->if_previous, 256);
	take(t, l->if_code, &out->if_code, 256);
	take(t, l->if_instr, &out->if_instr, 256);
	take(t, l->if_owner, &out->if_owner, 256);
	take(t, l->if_localsplus, &out->if_size, 256);
	take(t, l->co_filename, &out->co_filename, 1024);
	take(t, l->co_name, &out->co_name, 1024);
	take(t, l->co_qualname, &out->co_qualname, 1024);
	take(t, l->co_linetable, &out->co_linetable, 1024);
	take(t, l->co_firstlineno, &out->co_firstlineno, 1024);
	take(t, l->co_code, &out->co_code_adaptive, 1024);
	take(t, l->str_state, &out->str_state, 256);
	take(t, l->str_length, &out->str_length, 256);
	take(t, l->str_ascii_size, &out->str_ascii_data, 256);
	if (l->str_ascii_size)
		out->str_compact_data = out->str_ascii_data + 16; /* utf8_length, utf8 */
	take(t, l->bytes_size, &out->bytes_size, 256);
	take(t, l->bytes_data, &out->bytes_data, 256);
	take(t, l->gil_holder, &out->gil_holder, 1u << 20);
	take(t, l->ts_gil_requested, &out->ts_gil_requested, 4096);
	end = out->ts_native_tid > out->ts_datastack_top ? out->ts_native_tid : out->ts_datastack_top;
	if (out->ts_current_frame > end)
		end = out->ts_current_frame;
	if (out->ts_gil_requested > end)
		end = out->ts_gil_requested;
	if (out->ts_next > end)
		end = out->ts_next;
	if (out->ts_interp > end)
		end = out->ts_interp;
	out->ts_read_size = end + 8;
	return py_offsets_fit(out) ? 0 : -1;
}

/* A field of `width` bytes at `at` inside the first `len` bytes; at == 0
 * with `optional` means the version has no such field. */
static bool inside(uint32_t at, uint32_t width, uint32_t len, bool optional)
{
	return (optional && at == 0) || (uint64_t)at + width <= len;
}

static bool tstate_fits(const struct py_offsets *o)
{
	uint32_t len = o->ts_read_size;

	return len <= PY_TSTATE_READ_MAX && inside(o->ts_next, 8, len, false) &&
	       inside(o->ts_interp, 8, len, false) && inside(o->ts_cframe, 8, len, true) &&
	       inside(o->ts_current_frame, 8, len, true) &&
	       inside(o->ts_native_tid, 8, len, false) &&
	       inside(o->ts_datastack_chunk, 8, len, false) &&
	       inside(o->ts_datastack_top, 8, len, false) &&
	       inside(o->ts_gil_requested, 4, len, true);
}

static bool frame_fits(const struct py_offsets *o)
{
	uint32_t len = o->if_size;

	return len <= PY_FRAME_READ_MAX && inside(o->if_code, 8, len, false) &&
	       inside(o->if_previous, 8, len, false) && inside(o->if_instr, 8, len, false) &&
	       inside(o->if_owner, 1, len, false) && inside(o->if_is_entry, 1, len, true);
}

/* A code object field of `width` bytes at `at`, after the object header
 * and within the first `span` bytes. */
static bool code_field(uint32_t at, uint32_t width, uint32_t span)
{
	return at >= PY_OBJECT_HEAD && inside(at, width, span, false);
}

/* The reader fingerprints a code object by the bytes from the end of its
 * object header up to and including co_linetable (ob_size, co_consts and
 * co_names at 16-39 among them), so every field it reads must lie in that
 * span: one inside the header would index before it. */
static bool code_fits(const struct py_offsets *o)
{
	uint32_t span = o->co_linetable + 8;

	return o->co_code_adaptive <= PY_CODE_HEAD_MAX && span >= 40 &&
	       span <= o->co_code_adaptive && code_field(o->co_firstlineno, 4, span) &&
	       code_field(o->co_filename, 8, span) && code_field(o->co_name, 8, span) &&
	       code_field(o->co_qualname, 8, span);
}

static bool objects_fit(const struct py_offsets *o)
{
	return o->str_compact_data <= PY_STR_HEAD_MAX &&
	       o->str_ascii_data <= o->str_compact_data &&
	       inside(o->str_length, 8, o->str_ascii_data, false) &&
	       inside(o->str_state, 4, o->str_ascii_data, false) &&
	       inside(o->bytes_size, 8, PY_BYTES_HEAD_MAX, false);
}

bool py_offsets_fit(const struct py_offsets *o)
{
	return tstate_fits(o) && frame_fits(o) && code_fits(o) && objects_fit(o);
}

const struct py_offsets *py_offsets_for(unsigned major, unsigned minor)
{
	if (major != 3)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i]->minor == minor)
			return tables[i];
	return NULL;
}

bool py_offsets_is_call(const struct py_offsets *o, uint8_t opcode)
{
	for (uint8_t i = 0; i < o->ncall_ops; i++)
		if (o->call_ops[i] == opcode)
			return true;
	return false;
}

const struct py_offsets *py_offsets_at(size_t i)
{
	return i < sizeof(tables) / sizeof(tables[0]) ? tables[i] : NULL;
}

const char *py_offsets_supported(void)
{
	return "CPython 3.11 to 3.15";
}
