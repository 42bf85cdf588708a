#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_objects.h"

#include <string.h>

#include "target/remote_mem.h"

/* Common to 3.11-3.15 (x86-64): PyObject {ob_refcnt, ob_type}; PyTypeObject
 * tp_name at 24; PyVarObject ob_size at 16; PyListObject ob_item at 24;
 * PyFloatObject ob_fval at 16; long digits at 24; PyBytesObject 16/32;
 * PyASCIIObject length/state at 16/32; PyDictObject ma_used/ma_keys/
 * ma_values at 16/32/40; PySetObject used/mask/table at 24/32/40;
 * PyCellObject ob_ref at 16; PyCodeObject co_flags at 48,
 * co_localsplusnames/kinds at 96/104. */
static const struct py_object_layout common = {
	.ob_type = 8, .tp_name = 24,
	.tuple_size = 16, .tuple_items = 24,
	.list_size = 16, .list_items = 24,
	.float_value = 16,
	.long_size = 16, .long_digits = 24,
	.bytes_size = 16, .bytes_data = 32,
	.str_length = 16, .str_state = 32,
	.dict_used = 16, .dict_keys = 32, .dict_values = 40,
	.set_used = 24, .set_mask = 32, .set_table = 40,
	.cell_ref = 16,
	.co_flags = 48, .co_localsplusnames = 96, .co_localspluskinds = 104,
	.co_filename = 112, .co_qualname = 128,
	.tp_basicsize = 32, .tp_flags = 168,
};

/* sizeof(PyTypeObject): 408 in 3.11, 416 from 3.12 (tp_watched), 424 in
 * 3.15; the heap type's as_async, as_number, as_mapping, as_sequence,
 * as_buffer, ht_name, ht_slots and ht_qualname (464 bytes) come before
 * ht_cached_keys. */
#define HT_CACHED_KEYS_AFTER_TYPE 464

int py_objects_builtin(unsigned minor, struct py_object_layout *out)
{
	if (minor < 11 || minor > 15)
		return -1;
	*out = common;
	out->minor = minor;
	out->long_tag = minor >= 12;
	/* 3.11 has co_warmup and _co_linearray_entry_size (two shorts)
	 * before co_argcount. */
	out->co_argcount = minor == 11 ? 56 : 52;
	out->co_kwonlyargcount = out->co_argcount + 8;
	out->str_ascii_data = minor == 11 ? 48 : 40;
	out->str_compact_data = minor == 11 ? 72 : 56;
	/* 3.13 put capacity, size, embedded and valid bytes before values[]. */
	out->dict_values_items = minor >= 13 ? 8 : 0;
	/* 3.14 caches the tuple's hash before its items. */
	out->tuple_items = minor >= 14 ? 32 : 24;
	out->stackref_tagged = minor >= 14;
	out->ht_cached_keys = (minor == 11 ? 408 : minor == 15 ? 424 : 416) +
	                      HT_CACHED_KEYS_AFTER_TYPE;
	/* 3.11: f_func, then f_globals; 3.12+: f_code/f_executable, previous,
	 * f_funcobj, then f_globals. */
	out->if_globals = minor == 11 ? 8 : 24;
	return 0;
}

/* Where each minor version's _Py_DebugOffsets keeps the entries used here
 * (byte positions in the table, read from 3.13.x, 3.14.10, 3.15.2);
 * 0 = no such entry. */
struct debug_positions {
	unsigned minor;
	uint32_t size;
	uint32_t type_size; /* sizeof(PyTypeObject) */
	uint32_t argcount, localsplusnames, localspluskinds, ob_type, tp_name;
	uint32_t tuple_items, tuple_size, list_items, list_size;
	uint32_t set_used, set_table, set_mask, dict_keys, dict_values;
	uint32_t float_value, long_tag, long_digits, bytes_size, bytes_data;
	uint32_t str_state, str_length, str_ascii;
};

static const struct debug_positions positions[] = {
	{ 13, 584, 368, 320, 328, 336, 360, 376, 408, 416, 432, 440, 0, 0, 0, 456, 464,
	  480, 496, 504, 520, 528, 544, 552, 560 },
	{ 14, 760, 416, 360, 368, 376, 408, 424, 456, 464, 480, 488, 504, 512, 520, 536, 544,
	  560, 576, 584, 600, 608, 624, 632, 640 },
	{ 15, 880, 480, 424, 432, 440, 472, 488, 552, 560, 576, 584, 600, 608, 616,
	  632, 640, 656, 672, 680, 696, 704, 720, 728, 736 },
};

/* Entry `at` of table t into *field when present and small enough to be
 * an offset into the object pytop reads (a larger one is not believed). */
static void take(const uint8_t *t, uint32_t at, uint32_t *field)
{
	uint64_t v;

	if (at == 0)
		return;
	memcpy(&v, t + at, sizeof(v));
	if (v < 256)
		*field = (uint32_t)v;
}

static int from_debug(pid_t pid, const struct py_runtime *rt, struct py_object_layout *o)
{
	const struct debug_positions *p = NULL;
	uint8_t t[1024];

	for (size_t i = 0; i < sizeof(positions) / sizeof(positions[0]); i++)
		if (positions[i].minor == o->minor)
			p = &positions[i];
	if (p == NULL)
		return 0;
	if (remote_read(pid, rt->runtime, t, p->size) != 0 || memcmp(t, "xdebugpy", 8) != 0)
		return -1;
	if (p->type_size != 0) {
		uint32_t type_size = 0;

		memcpy(&type_size, t + p->type_size, 4); /* a uint64_t, little-endian */
		if (type_size >= 400 && type_size < 1024)
			o->ht_cached_keys = type_size + HT_CACHED_KEYS_AFTER_TYPE;
	}
	take(t, p->argcount, &o->co_argcount);
	o->co_kwonlyargcount = o->co_argcount + 8; /* posonly, then kwonly */
	take(t, p->localsplusnames, &o->co_localsplusnames);
	take(t, p->localspluskinds, &o->co_localspluskinds);
	take(t, p->ob_type, &o->ob_type);
	take(t, p->tp_name, &o->tp_name);
	take(t, p->tuple_items, &o->tuple_items);
	take(t, p->tuple_size, &o->tuple_size);
	take(t, p->list_items, &o->list_items);
	take(t, p->list_size, &o->list_size);
	take(t, p->set_used, &o->set_used);
	take(t, p->set_table, &o->set_table);
	take(t, p->set_mask, &o->set_mask);
	take(t, p->dict_keys, &o->dict_keys);
	take(t, p->dict_values, &o->dict_values);
	take(t, p->float_value, &o->float_value);
	take(t, p->long_tag, &o->long_size);
	take(t, p->long_digits, &o->long_digits);
	take(t, p->bytes_size, &o->bytes_size);
	take(t, p->bytes_data, &o->bytes_data);
	take(t, p->str_state, &o->str_state);
	take(t, p->str_length, &o->str_length);
	take(t, p->str_ascii, &o->str_ascii_data);
	o->str_compact_data = o->str_ascii_data + 16; /* utf8_length, utf8 */
	return 0;
}

int py_objects_layout(pid_t pid, const struct py_runtime *rt, struct py_object_layout *out)
{
	const struct py_offsets *f = rt->off;

	if (py_objects_builtin(f->minor, out) != 0)
		return -1;
	out->ts_cframe = f->ts_cframe;
	out->cf_current_frame = f->cf_current_frame;
	out->ts_current_frame = f->ts_current_frame;
	out->co_filename = f->co_filename;
	out->co_qualname = f->co_qualname;
	out->if_code = f->if_code;
	out->if_previous = f->if_previous;
	out->if_owner = f->if_owner;
	out->if_localsplus = f->if_size; /* the frame's header ends where localsplus starts */
	out->if_size = f->if_size;
	out->owner_not_python = f->owner_not_python;
	return rt->debug_offsets ? from_debug(pid, rt, out) : 0;
}
