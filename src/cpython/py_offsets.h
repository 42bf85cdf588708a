/* py_offsets.h - all CPython-version knowledge, as data: where the fields
 * pytop reads live in each supported version's structures (x86_64, default
 * GIL build, release).  Adding a version whose frames are kept like 3.11+
 * (data-stack chunks) means adding a table in py_offsets.c, nothing else;
 * another frame model also needs a frame walker (frame_walker.h lists the
 * files). */
#ifndef PYTOP_PY_OFFSETS_H
#define PYTOP_PY_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* struct _gil_runtime_state, the same in 3.11 to 3.15 (x86-64, glibc):
 * interval, last_holder, locked, switch_number, then the condition
 * variable and mutex a thread asking for the GIL sleeps on, and the pair
 * the thread that dropped it waits on for the hand-over.  last_holder is
 * PY_GIL_HOLDER_AT bytes in; the struct spans PY_GIL_SIZE bytes. */
#define PY_GIL_HOLDER_AT 8
#define PY_GIL_SIZE (4 * 8 + 2 * (48 + 40))

/* How much of each object the reader copies into fixed buffers: a layout
 * must keep every field it reads inside these (py_offsets_fit), since a
 * _Py_DebugOffsets table is written by the target and may lie. */
#define PY_TSTATE_READ_MAX 512 /* ts_read_size */
#define PY_FRAME_READ_MAX 128  /* if_size */
#define PY_CODE_HEAD_MAX 256   /* co_code_adaptive: the code object's header */
#define PY_STR_HEAD_MAX 128    /* str_compact_data */
#define PY_BYTES_HEAD_MAX 40   /* the bytes object's header */
#define PY_OBJECT_HEAD 16      /* ob_refcnt, ob_type: no code field lies there */

struct py_offsets {
	unsigned minor;             /* 3.<minor> */

	uint32_t rt_interp_head;    /* _PyRuntimeState.interpreters.head */

	uint32_t is_next;           /* PyInterpreterState.next */
	uint32_t is_threads_head;   /* PyInterpreterState.threads.head */

	uint32_t ts_next;           /* PyThreadState.next */
	uint32_t ts_interp;
	uint32_t ts_cframe;         /* 3.11/3.12: -> _PyCFrame; 0 = none */
	uint32_t cf_current_frame;  /* _PyCFrame.current_frame */
	uint32_t ts_current_frame;  /* 3.13+: direct; 0 = via cframe */
	uint32_t ts_native_tid;
	uint32_t ts_datastack_chunk;
	uint32_t ts_datastack_top;
	uint32_t ts_read_size;      /* bytes of PyThreadState pytop reads */

	uint32_t if_code;           /* f_code / f_executable */
	uint32_t if_previous;
	uint32_t if_instr;          /* prev_instr / instr_ptr */
	uint32_t if_owner;
	uint32_t if_size;           /* header up to localsplus */
	uint8_t owner_not_python;   /* owner >= this: shim, not Python code */
	uint32_t if_is_entry;       /* 3.11: is_entry (first frame of an eval
	                               loop invocation); 0 = a shim frame
	                               precedes each invocation instead */
	bool code_tagged;           /* f_executable carries tag bits (3.14) */

	uint32_t co_filename, co_name, co_qualname, co_linetable;
	uint32_t co_firstlineno;
	uint32_t co_code_adaptive;  /* bytecode starts here; also header size */

	uint32_t str_length;        /* PyASCIIObject.length */
	uint32_t str_state;         /* PyASCIIObject.state bitfield */
	uint32_t str_ascii_data;    /* sizeof(PyASCIIObject) */
	uint32_t str_compact_data;  /* sizeof(PyCompactUnicodeObject) */

	uint32_t bytes_size;        /* PyBytesObject.ob_size */
	uint32_t bytes_data;        /* PyBytesObject.ob_sval */

	/* The GIL: last_holder (a PyThreadState *) at gil_holder and the int
	 * `locked` 8 bytes after it, relative to _PyRuntime (3.11) or to the
	 * interpreter (3.12+); last_holder is stale unless locked. */
	bool gil_in_runtime;
	uint32_t gil_holder;
	uint32_t ts_gil_requested;  /* PyThreadState.gil_requested (3.15+); 0 = none */

	uint32_t chunk_size;        /* _PyStackChunk.size */
	uint32_t chunk_data;        /* _PyStackChunk.data */

	/* Opcodes of the call family (CALL, its specialisations and
	 * instrumented forms; 3.11's PRECALL, whose specialisations make the C
	 * call themselves): a leaf frame stopped on one of these is running
	 * native code.  Numbers change with every minor version. */
	const uint8_t *call_ops;
	uint8_t ncall_ops;
};

/* The table for CPython 3.<minor>, or NULL when unsupported. */
const struct py_offsets *py_offsets_for(unsigned major, unsigned minor);
/* CPython 3.13+ describes its own layout in _Py_DebugOffsets at the start of
 * _PyRuntime.  Fill *out from the table `t` (len bytes read from the target)
 * for 3.<minor>: entries the table has override the built-in ones.  -1 if
 * the table is not one this build understands (cookie, minor, size). */
int py_offsets_from_debug(const uint8_t *t, size_t len, unsigned minor,
                          struct py_offsets *out);

/* Whether every field o says the reader reads lies inside the bytes it
 * reads of that object, and those inside the PY_*_MAX buffers. */
bool py_offsets_fit(const struct py_offsets *o);

/* Is `opcode` in the call family of o's version? */
bool py_offsets_is_call(const struct py_offsets *o, uint8_t opcode);

/* The i-th built-in table (i from 0), NULL past the last: for tests that
 * cover every supported version. */
const struct py_offsets *py_offsets_at(size_t i);
/* "3.11" for the error message listing what this build reads. */
const char *py_offsets_supported(void);

#endif
