/* py_runtime_wait.h - find the Python runtime of the target, waiting for
 * it in launch mode.  Lives above target/ (it needs both the target and
 * the runtime lookup), so target/ stays free of CPython knowledge. */
#ifndef PYTOP_PY_RUNTIME_WAIT_H
#define PYTOP_PY_RUNTIME_WAIT_H

#include "errors.h"
#include "cpython/py_runtime.h"
#include "target/target.h"

/* Find the Python runtime.  In launch mode, wait (polling every few hundred
 * microseconds) until the program has exec'd into a Python and created its
 * first thread state, so sampling starts with its first bytecode. */
int py_runtime_wait(struct target *t, struct py_runtime *rt, struct pytop_error *err);

#endif
