/* py_thread_names.h - the names programs give their threads
 * (threading.Thread(name=...), kept in the Thread object's _name), read
 * from the target's memory on every supported version.  The OS name is no
 * substitute: CPython sets it only from 3.14, cut to 15 bytes.
 *
 * A thread that threading started runs Thread._bootstrap(self) as its
 * outermost frame: `self` is its Thread object, and that frame's globals
 * are the threading module's, whose _main_thread names the main thread. */
#ifndef PYTOP_PY_THREAD_NAMES_H
#define PYTOP_PY_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/py_objects.h"
#include "cpython/py_repr.h"

/* Characters of a name kept; the rest is counted in a "…[+N chars]"
 * marker.  Names are escaped as code names are (py_name_text.h). */
#define PY_THREAD_NAME_MAX 256

/* The name of the thread of thread state tstate when threading started it
 * (its outermost frame runs Thread._bootstrap); *threading_globals then
 * gets the threading module's globals dict.  Owned UTF-8, NULL when not
 * such a thread or unreadable. */
char *py_thread_name(const struct py_mem *m, const struct py_object_layout *l,
                     uintptr_t tstate, uintptr_t *threading_globals);

/* The same, giving up (NULL) on a stack deeper than max_frames: the walk
 * to the outermost frame reads one frame at a time. */
char *py_thread_name_within(const struct py_mem *m, const struct py_object_layout *l,
                            uintptr_t tstate, size_t max_frames, uintptr_t *threading_globals);

/* The main thread's name from the threading module's globals. */
char *py_thread_name_main(const struct py_mem *m, const struct py_object_layout *l,
                          uintptr_t threading_globals);

#endif
