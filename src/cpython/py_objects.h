/* py_objects.h - where the fields of the objects `pytop dump --locals`
 * shows live, per CPython version (x86-64, default build): the built-in
 * values come from each version's headers (checked against live
 * interpreters); 3.13+ take every entry their _Py_DebugOffsets has from
 * the target itself, the built-in ones only for the rest. */
#ifndef PYTOP_PY_OBJECTS_H
#define PYTOP_PY_OBJECTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/py_runtime.h"

struct py_object_layout {
	unsigned minor;
	uint32_t ob_type, tp_name;
	uint32_t tuple_size, tuple_items;      /* items inline */
	uint32_t list_size, list_items;        /* items behind a pointer */
	uint32_t float_value;
	bool long_tag;                         /* 3.12+: lv_tag; 3.11: signed ob_size */
	uint32_t long_size, long_digits;
	uint32_t bytes_size, bytes_data;
	uint32_t str_length, str_state, str_ascii_data, str_compact_data;
	uint32_t dict_used, dict_keys, dict_values;
	uint32_t dict_values_items;            /* values[] inside PyDictValues */
	uint32_t set_used, set_mask, set_table;
	uint32_t cell_ref;                     /* PyCellObject.ob_ref */
	uint32_t co_flags, co_argcount, co_kwonlyargcount;
	uint32_t co_localsplusnames, co_localspluskinds;
	uint32_t co_filename, co_qualname;
	bool stackref_tagged;                  /* 3.14+: localsplus holds tagged refs */
	/* instance attributes (thread names) */
	uint32_t tp_basicsize, tp_flags;
	uint32_t ht_cached_keys;               /* PyHeapTypeObject: shared keys */
	uint32_t if_globals;                   /* _PyInterpreterFrame.f_globals */
	/* from the reader's table (py_offsets.h) */
	uint32_t ts_cframe, cf_current_frame, ts_current_frame;
	uint32_t if_code, if_previous, if_owner, if_localsplus, if_size;
	uint8_t owner_not_python;
};

/* The layout of rt's interpreter in process pid (3.13+: its
 * _Py_DebugOffsets read from its memory).  0, or -1 when the version is
 * not known or the target's table is not plausible. */
int py_objects_layout(pid_t pid, const struct py_runtime *rt, struct py_object_layout *out);

/* The built-in layout of 3.<minor> alone (tests), -1 when unknown. */
int py_objects_builtin(unsigned minor, struct py_object_layout *out);

#endif
