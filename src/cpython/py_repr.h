/* py_repr.h - a Python object in another process's memory, shown as
 * Python's repr() would show it, without running any code there: None,
 * bool, int (any size), float (shortest round-trip form), str, bytes, and
 * list, tuple, dict, set and frozenset of those, nested.  Anything else is
 * "<TYPE object at 0xADDR>".
 *
 * The memory is the target's and may be torn (it runs on) or hostile: every
 * size is bounded, every pointer checked, cycles are shown as Python shows
 * them ([...]), and a value that does not read whole and consistent is
 * "<unreadable ...>", never a guess.  Bounds: PY_REPR_MAX_ITEMS items per
 * container (then ", ..."), PY_REPR_MAX_CHARS characters of a str or bytes
 * (then "..." after the quote), PY_REPR_MAX_DEPTH levels of containers
 * (deeper ones as [...], (...), {...}), PY_REPR_MAX_OUT bytes in all. */
#ifndef PYTOP_PY_REPR_H
#define PYTOP_PY_REPR_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/py_objects.h"

#define PY_REPR_MAX_ITEMS 100
#define PY_REPR_MAX_CHARS 256
#define PY_REPR_MAX_DEPTH 6
#define PY_REPR_MAX_OUT 8192

/* Where the bytes come from: remote_read on the target, or a fake address
 * space in the tests.  read returns 0 when all len bytes were copied. */
struct py_mem {
	int (*read)(void *ctx, uintptr_t addr, void *buf, size_t len);
	void *ctx;
};

/* The memory of process *(pid_t *)ctx, through remote_mem.h. */
int py_mem_remote(void *ctx, uintptr_t addr, void *buf, size_t len);

/* repr of the object at addr: an owned, NUL-terminated UTF-8 string (NULL
 * only when out of memory). */
char *py_repr(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr);

/* The str object at addr as UTF-8 text, at most max_chars characters, no
 * escaping (names: of variables, of threads); NULL when it is not a
 * readable str of printable characters.  Owned. */
char *py_str_text(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                  size_t max_chars);

/* The str object at addr as a name: its first max_chars characters
 * (at most PY_REPR_MAX_CHARS) escaped by py_name_text (control and
 * bidirectional characters as \xNN / \uNNNN, the rest counted); NULL
 * when it is no readable str.  Owned. */
char *py_str_name(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                  size_t max_chars);

/* The name of the type of the object at addr into buf (printable ASCII,
 * as the type's tp_name says); false when unreadable. */
int py_type_name(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                 char *buf, size_t size);

/* Python's repr of a float: the shortest decimal that reads back as v. */
void py_float_repr(double v, char *buf, size_t size);

#endif
