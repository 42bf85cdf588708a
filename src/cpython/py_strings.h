/* py_strings.h - a str or bytes object of the target, copied into pytop:
 * the names, file names and line tables of code objects.  Every string is
 * hostile until checked: compact only, of a plausible length, its first
 * PY_NAME_KEEP_CHARS characters read and escaped (py_name_text.h: control
 * characters, bytes that were not UTF-8, over-long names are shown, not
 * refused); bytes objects at most PY_BYTES_MAX long. */
#ifndef PYTOP_PY_STRINGS_H
#define PYTOP_PY_STRINGS_H

#include <stdint.h>
#include <sys/types.h>

#include "cpython/py_offsets.h"

/* A str longer than this is no name a program made: the header is torn or
 * not a str's (2^24 characters is 16 MiB of name). */
#define PY_STR_LENGTH_MAX (1ull << 24)
#define PY_BYTES_MAX (256u << 10)    /* bigger line tables are left undecoded */

/* The str object at addr as fresh, escaped UTF-8 text (the caller frees
 * it), or NULL when it is unreadable or not a str. */
char *py_str_read(pid_t pid, const struct py_offsets *o, uintptr_t addr);

/* The contents of the bytes object at addr (malloc'd, *len bytes), or NULL
 * with *len = 0 when unreadable, empty or too long. */
uint8_t *py_bytes_read(pid_t pid, const struct py_offsets *o, uintptr_t addr,
                       uint32_t *len);

#endif
