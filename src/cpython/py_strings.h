/* py_strings.h - a str or bytes object of the target, copied into pytop:
 * the names, file names and line tables of code objects.  Every string is
 * hostile until checked: compact only, at most PY_STR_MAX_CHARS characters,
 * no control characters, surrogates or out-of-range code points (a name
 * that has them was torn or is not a name); bytes objects at most
 * PY_BYTES_MAX long. */
#ifndef PYTOP_PY_STRINGS_H
#define PYTOP_PY_STRINGS_H

#include <stdint.h>
#include <sys/types.h>

#include "cpython/py_offsets.h"

#define PY_STR_MAX_CHARS 1024        /* longer names are torn or hostile */
#define PY_BYTES_MAX (256u << 10)    /* bigger line tables are left undecoded */

/* The str object at addr as a fresh UTF-8 string (the caller frees it), or
 * NULL when it is unreadable or fails a check. */
char *py_str_read(pid_t pid, const struct py_offsets *o, uintptr_t addr);

/* The contents of the bytes object at addr (malloc'd, *len bytes), or NULL
 * with *len = 0 when unreadable, empty or too long. */
uint8_t *py_bytes_read(pid_t pid, const struct py_offsets *o, uintptr_t addr,
                       uint32_t *len);

#endif
