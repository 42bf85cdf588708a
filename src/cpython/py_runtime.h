/* py_runtime.h - find the CPython runtime (_PyRuntime) in a target process
 * and identify its version: which mapped object exports it (the executable
 * for static builds, libpython for shared ones), where it was loaded, and
 * which offsets table applies. */
#ifndef PYTOP_PY_RUNTIME_H
#define PYTOP_PY_RUNTIME_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "cpython/py_offsets.h"

struct py_runtime {
	uintptr_t runtime;            /* address of _PyRuntime in the target */
	uintptr_t pycode_type;        /* address of PyCode_Type, 0 if unknown */
	uint32_t version_hex;         /* PY_VERSION_HEX */
	char version[16];             /* "3.11.2" */
	char object[PATH_MAX];        /* the file that exports _PyRuntime */
	bool debug_offsets;           /* layout read from _Py_DebugOffsets */
	bool table_unread;            /* find failed: that table did not match */
	struct py_offsets offsets;    /* the layout of this interpreter */
	const struct py_offsets *off; /* == &offsets (copies must re-point it) */
};

/* Locate the runtime of process pid.  On failure fills *err: no such
 * process, permission, not Python (naming the executable found) or an
 * unsupported version (naming it and the supported ones). */
int py_runtime_find(pid_t pid, struct py_runtime *out, struct pytop_error *err);

/* Read the main interpreter's first thread state: 0 when Python is
 * initialised far enough to be sampled. */
int py_runtime_ready(pid_t pid, const struct py_runtime *rt);

#endif
