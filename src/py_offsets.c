#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "py_offsets.h"

#include <stddef.h>

/* Values from offsetof() over each version's headers (Py_BUILD_CORE),
 * checked against live interpreters; see docs/architecture.md. Common to
 * every version: PyObject ob_type at 8, _PyStackChunk {previous, size,
 * top, data} at 0/8/16/24, PyBytesObject ob_size/ob_sval at 16/32,
 * PyASCIIObject length/state at 16/32. */
static const struct py_offsets v3_11 = {
	.minor = 11,
	.rt_interp_head = 40,
	.is_next = 0, .is_threads_head = 16,
	.ts_next = 8, .ts_interp = 16,
	.ts_cframe = 56, .cf_current_frame = 8, .ts_current_frame = 0,
	.ts_native_tid = 160,
	.ts_datastack_chunk = 296, .ts_datastack_top = 304,
	.ts_read_size = 320,
	.if_code = 32, .if_previous = 48, .if_instr = 56, .if_owner = 69,
	.if_size = 72, .owner_not_python = 255, .code_tagged = false,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 72, .co_code_adaptive = 184,
	.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
	.bytes_size = 16, .bytes_data = 32,
	.chunk_size = 8, .chunk_data = 24,
};

static const struct py_offsets v3_12 = {
	.minor = 12,
	.rt_interp_head = 40,
	.is_next = 0, .is_threads_head = 72,
	.ts_next = 8, .ts_interp = 16,
	.ts_cframe = 56, .cf_current_frame = 0, .ts_current_frame = 0,
	.ts_native_tid = 144,
	.ts_datastack_chunk = 232, .ts_datastack_top = 240,
	.ts_read_size = 256,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 70,
	.if_size = 72, .owner_not_python = 3, .code_tagged = false,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 68, .co_code_adaptive = 192,
	.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
	.bytes_size = 16, .bytes_data = 32,
	.chunk_size = 8, .chunk_data = 24,
};

static const struct py_offsets v3_13 = {
	.minor = 13,
	.rt_interp_head = 632,
	.is_next = 7264, .is_threads_head = 7344,
	.ts_next = 8, .ts_interp = 16,
	.ts_cframe = 0, .cf_current_frame = 0, .ts_current_frame = 72,
	.ts_native_tid = 160,
	.ts_datastack_chunk = 232, .ts_datastack_top = 240,
	.ts_read_size = 256,
	.if_code = 0, .if_previous = 8, .if_instr = 56, .if_owner = 70,
	.if_size = 72, .owner_not_python = 3, .code_tagged = false,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 68, .co_code_adaptive = 200,
	.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
	.bytes_size = 16, .bytes_data = 32,
	.chunk_size = 8, .chunk_data = 24,
};

static const struct py_offsets *const tables[] = { &v3_11, &v3_12, &v3_13 };

const struct py_offsets *py_offsets_for(unsigned major, unsigned minor)
{
	if (major != 3)
		return NULL;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i]->minor == minor)
			return tables[i];
	return NULL;
}

const struct py_offsets *py_offsets_at(size_t i)
{
	return i < sizeof(tables) / sizeof(tables[0]) ? tables[i] : NULL;
}

const char *py_offsets_supported(void)
{
	return "CPython 3.11, 3.12 and 3.13";
}
