/* py_locals.h - the arguments and local variables of a thread's Python
 * frames, read from the target's memory without running code in it, each
 * value shown as py_repr.h shows it.  The frames are walked again from the
 * thread state and checked against the code objects of the stack the
 * reader saw, so locals are never shown under a frame they do not belong
 * to. */
#ifndef PYTOP_PY_LOCALS_H
#define PYTOP_PY_LOCALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/py_objects.h"
#include "cpython/py_repr.h"

struct py_local {
	char *name;     /* owned */
	char *repr;     /* owned */
	bool argument;  /* an argument (positional, keyword-only, *args, **kw) */
};

struct py_frame_locals {
	struct py_local *vars; /* owned, in the code's order; unbound ones left out */
	size_t nvars;
	const char *error;     /* static text when this frame's could not be read */
};

/* For the frames of thread state `tstate`: codes[0..n) are the code
 * objects of the stack as the reader saw it, innermost first.  Fills
 * out[0..n) (innermost first).  0, or -1 when the walk finds other frames
 * (the thread ran on) or none. */
int py_locals_read(const struct py_mem *m, const struct py_object_layout *l,
                   uintptr_t tstate, const uintptr_t *codes, size_t n,
                   struct py_frame_locals *out);

/* The addresses of those n frames (innermost first) into frames[]: false
 * when the walk finds other frames. */
bool py_frames_walk(const struct py_mem *m, const struct py_object_layout *l, uintptr_t tstate,
                    const uintptr_t *codes, size_t n, uintptr_t *frames);

/* The outermost Python frame of thread state tstate and its code object,
 * following at most max_frames links (a cycle is caught): false when the
 * chain does not end within them or does not read. */
bool py_frames_outermost(const struct py_mem *m, const struct py_object_layout *l,
                         uintptr_t tstate, size_t max_frames, uintptr_t *frame,
                         uintptr_t *code);

void py_frame_locals_free(struct py_frame_locals *f);

#endif
