#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_thread_names.h"

#include "cpython/py_locals.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 100000        /* deeper than any recursion limit in use */
#define MAX_ENTRIES 1024          /* a module's globals, an instance's attributes */
#define TPFLAGS_INLINE_VALUES (1ul << 2)  /* 3.13+ */
#define TPFLAGS_MANAGED_DICT (1ul << 4)

static bool rd(const struct py_mem *m, uintptr_t addr, void *buf, size_t len)
{
	return addr >= 4096 && addr < (1ull << 47) && len < (1ull << 20) &&
	       m->read(m->ctx, addr, buf, len) == 0;
}

static bool rd64(const struct py_mem *m, uintptr_t addr, uint64_t *v)
{
	return rd(m, addr, v, 8);
}

static bool is_str(const struct py_mem *m, const struct py_object_layout *l, uint64_t key,
                   const char *want)
{
	char *text = py_str_text(m, l, (uintptr_t)key, 64);
	bool same = text != NULL && strcmp(text, want) == 0;

	free(text);
	return same;
}

/* The value of `name` in a keys table: its own entries (values == 0) or
 * a split table's values[] at `values`.  0 when absent or unreadable. */
static uint64_t keys_get(const struct py_mem *m, const struct py_object_layout *l,
                         uint64_t keys, uint64_t values, const char *name)
{
	uint8_t head[32];
	uint64_t nentries, e[MAX_ENTRIES * 3], v = 0;
	size_t width, n;

	if (!rd(m, keys, head, sizeof(head)))
		return 0;
	memcpy(&nentries, head + 24, 8);
	if (head[8] > 40 || head[9] < head[8] || head[9] > head[8] + 3 || head[10] > 2 ||
	    nentries > (1ull << head[8]))
		return 0;
	width = head[10] == 0 ? 3 : 2;
	n = nentries < MAX_ENTRIES ? (size_t)nentries : MAX_ENTRIES;
	if (!rd(m, keys + 32 + (1ull << head[9]), e, n * width * 8))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const uint64_t *entry = e + i * width + (width - 2); /* key, value */

		if (entry[0] == 0 || !is_str(m, l, entry[0], name))
			continue;
		if (values == 0)
			return entry[1];
		return rd64(m, values + 8 * i, &v) ? v : 0;
	}
	return 0;
}

static uint64_t dict_get(const struct py_mem *m, const struct py_object_layout *l,
                         uint64_t dict, const char *name)
{
	uint64_t keys, values;

	if (dict == 0 || !rd64(m, dict + l->dict_keys, &keys) ||
	    !rd64(m, dict + l->dict_values, &values))
		return 0;
	return keys_get(m, l, keys, values != 0 ? values + l->dict_values_items : 0, name);
}

/* An attribute of an instance of a class defined in Python: in its dict
 * or, not materialised, in values shared with its type's cached keys.
 * Where they live changed in 3.12 and again in 3.13. */
static uint64_t attr_get(const struct py_mem *m, const struct py_object_layout *l,
                         uint64_t obj, const char *name)
{
	uint64_t type, flags, keys, basic, word, dict;
	uint8_t head[8];

	if (!rd64(m, obj + l->ob_type, &type) || !rd64(m, type + l->tp_flags, &flags) ||
	    !(flags & TPFLAGS_MANAGED_DICT) || !rd64(m, type + l->ht_cached_keys, &keys))
		return 0;
	if (l->minor >= 13) {
		/* Inline values after the object; a dict at obj - 24 once made. */
		if ((flags & TPFLAGS_INLINE_VALUES) && rd64(m, type + l->tp_basicsize, &basic) &&
		    basic < 4096 && rd(m, obj + basic, head, sizeof(head)) && head[3] != 0)
			return keys_get(m, l, keys, obj + basic + 8, name);
		return rd64(m, obj - 24, &dict) ? dict_get(m, l, dict, name) : 0;
	}
	if (l->minor == 12) { /* dict, or values - 1 (odd), at obj - 24 */
		if (!rd64(m, obj - 24, &word))
			return 0;
		return (word & 1) ? keys_get(m, l, keys, word + 1, name) : dict_get(m, l, word, name);
	}
	/* 3.11: values at obj - 32, dict at obj - 24 */
	if (rd64(m, obj - 32, &word) && word != 0)
		return keys_get(m, l, keys, word, name);
	return rd64(m, obj - 24, &dict) ? dict_get(m, l, dict, name) : 0;
}

static char *thread_name(const struct py_mem *m, const struct py_object_layout *l, uint64_t thread)
{
	uint64_t name = thread != 0 ? attr_get(m, l, thread, "_name") : 0;

	return name != 0 ? py_str_name(m, l, (uintptr_t)name, PY_THREAD_NAME_MAX) : NULL;
}

static bool runs_bootstrap(const struct py_mem *m, const struct py_object_layout *l,
                           uintptr_t code)
{
	uint64_t qualname, filename;
	char *file;
	size_t n;
	bool yes;

	if (!rd64(m, code + l->co_qualname, &qualname) || !rd64(m, code + l->co_filename, &filename) ||
	    !is_str(m, l, qualname, "Thread._bootstrap"))
		return false;
	file = py_str_text(m, l, (uintptr_t)filename, 4096);
	n = file != NULL ? strlen(file) : 0;
	yes = n >= 13 && strcmp(file + n - 13, "/threading.py") == 0;
	free(file);
	return yes;
}

char *py_thread_name(const struct py_mem *m, const struct py_object_layout *l,
                     uintptr_t tstate, uintptr_t *threading_globals)
{
	return py_thread_name_within(m, l, tstate, MAX_FRAMES, threading_globals);
}

char *py_thread_name_within(const struct py_mem *m, const struct py_object_layout *l,
                            uintptr_t tstate, size_t max_frames, uintptr_t *threading_globals)
{
	uint64_t self, globals;
	uintptr_t frame, code;

	if (!py_frames_outermost(m, l, tstate, max_frames, &frame, &code) ||
	    !runs_bootstrap(m, l, code))
		return NULL;
	if (rd64(m, frame + l->if_globals, &globals))
		*threading_globals = (uintptr_t)globals;
	if (!rd64(m, frame + l->if_localsplus, &self))
		return NULL;
	if (l->stackref_tagged)
		self &= ~(uint64_t)7;
	return thread_name(m, l, self);
}

char *py_thread_name_main(const struct py_mem *m, const struct py_object_layout *l,
                          uintptr_t threading_globals)
{
	return thread_name(m, l, dict_get(m, l, threading_globals, "_main_thread"));
}
