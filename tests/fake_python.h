/* fake_python.h - a synthetic CPython address space for reader tests.
 *
 * A fake_image lays out _PyRuntime, an interpreter, thread states, data-stack
 * chunks, frames, code, str and bytes objects in one private mapping, using
 * the field offsets of one struct py_offsets table.  A fake_child is a fork
 * of the test process: it inherits the image at the same addresses, so the
 * reader under test samples it through process_vm_readv exactly as it would
 * a real interpreter.  After the fork the child changes its copy only when
 * asked over a pipe (fake_child_sync and friends), the way a running
 * interpreter changes its own memory between two samples.
 *
 * Every address is the same in both processes, so the builder hands out
 * uintptr_t addresses and writes through them directly.
 */
#ifndef PYTOP_TESTS_FAKE_PYTHON_H
#define PYTOP_TESTS_FAKE_PYTHON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpython/py_offsets.h"
#include "cpython/py_runtime.h"

#define FAKE_CHUNK_SIZE (16u << 10) /* CPython's DATA_STACK_CHUNK_SIZE */
#define FAKE_FRAME_SIZE 96u         /* header plus a few locals */
#define FAKE_CODE_UNITS 64u         /* default code size, in 2-byte units */

/* PyASCIIObject.state bits */
#define FAKE_STR_KIND(k) ((uint32_t)(k) << 2)
#define FAKE_STR_COMPACT (1u << 5)
#define FAKE_STR_ASCII (1u << 6)

struct fake_image {
	const struct py_offsets *o; /* borrowed, static */
	uint8_t *base;              /* owns the mapping */
	size_t cap, used;
	uintptr_t guard;            /* a PROT_NONE page: unmapped for reads */
	uintptr_t runtime, interp;
	uintptr_t pycode_type;      /* what every fake code's ob_type points to */
	uintptr_t other_type;       /* the type of every other fake object */
	uintptr_t none;             /* a non-code object (3.13+ shim executable) */
	uintptr_t threads_tail;     /* last thread state in the interp's list */
};

/* One fake thread's data stack, as the builder sees it. */
struct fake_thread {
	uintptr_t tstate;
	uintptr_t cframe;  /* 3.11/3.12: the _PyCFrame; 0 on 3.13+ */
	uintptr_t chunk;   /* current data-stack chunk */
	uintptr_t top;     /* datastack_top */
	uintptr_t current; /* innermost frame, 0 = none */
};

void fake_image_init(struct fake_image *im, const struct py_offsets *o);
void fake_image_free(struct fake_image *im);

/* Zeroed, 16-byte aligned bytes inside the image; aborts when full. */
uintptr_t fake_alloc(struct fake_image *im, size_t len);

void fake_w64(uintptr_t addr, uint64_t v);
void fake_w32(uintptr_t addr, uint32_t v);
void fake_w8(uintptr_t addr, uint8_t v);
uint64_t fake_r64(uintptr_t addr);

/* A compact str holding the UTF-8 text s, with the narrowest kind CPython
 * would choose (ASCII, Latin-1, UCS-2 or UCS-4). */
uintptr_t fake_str(struct fake_image *im, const char *s);
/* A str object with any header: `state` and `length` as given, then
 * data_len bytes of `data` where CPython would put them for that state. */
uintptr_t fake_str_raw(struct fake_image *im, uint32_t state, uint64_t length,
                       const void *data, size_t data_len);
uintptr_t fake_bytes(struct fake_image *im, const void *data, size_t len);

/* A code object of `units` 2-byte code units (0: FAKE_CODE_UNITS) named
 * qualname, in filename, starting at firstlineno, with a small line table. */
uintptr_t fake_code(struct fake_image *im, const char *qualname,
                    const char *filename, int firstlineno, uint32_t units);

/* A thread state bound to OS thread tid, appended to the interpreter's
 * thread list, with an empty root data-stack chunk. */
void fake_thread_new(struct fake_image *im, struct fake_thread *t, long tid);

/* Push a Python frame running `code` at byte offset instr_offset of its
 * bytecode onto t's data stack (a new chunk when the current one is full,
 * as CPython does); returns the frame's address. */
uintptr_t fake_push(struct fake_image *im, struct fake_thread *t,
                    uintptr_t code, int instr_offset);
/* Start a new chunk of `size` bytes (0: FAKE_CHUNK_SIZE) for later pushes. */
uintptr_t fake_new_chunk(struct fake_image *im, struct fake_thread *t, size_t size);
/* A frame outside every chunk (a generator's, or a C-stack shim), linked
 * as the new innermost frame; `owner` is its if_owner byte. */
uintptr_t fake_push_heap(struct fake_image *im, struct fake_thread *t,
                         uintptr_t code, int instr_offset, uint8_t owner);
/* Make `frame` the innermost frame (ts_current_frame or the cframe's). */
void fake_set_current(struct fake_image *im, struct fake_thread *t, uintptr_t frame);
/* Store t->chunk and t->top into the thread state (after a test moved
 * them, e.g. to pop frames). */
void fake_store_stack(const struct fake_image *im, const struct fake_thread *t);

/* The struct py_runtime a real attach would produce for this image. */
void fake_runtime(const struct fake_image *im, struct py_runtime *rt);

struct fake_child {
	pid_t pid;
	int cmd_fd; /* owns: commands to the child */
	int ack_fd; /* owns: its answers */
};

/* Fork a child holding a copy of the image; it serves commands until
 * stopped or until the test process dies (then it exits by itself). */
void fake_child_start(struct fake_child *c);
/* Copy the parent's bytes [addr, addr + len) into the child's memory. */
void fake_child_sync(struct fake_child *c, uintptr_t addr, size_t len);
/* Make [addr, addr + len) (page aligned) unreadable in the child. */
void fake_child_protect(struct fake_child *c, uintptr_t addr, size_t len);
/* Map fresh zero pages over [addr, addr + len) (page aligned) in the child,
 * as CPython frees a data-stack chunk and maps a new one at the same
 * address: the child's next write there is a page fault. */
void fake_child_remap(struct fake_child *c, uintptr_t addr, size_t len);
/* Start a sleeping OS thread in the child that stores its TID as a
 * 64-bit value at tid_addr (in the child's memory and in ours); returns it. */
pid_t fake_child_thread(struct fake_child *c, uintptr_t tid_addr);
/* SIGKILL and reap. */
void fake_child_stop(struct fake_child *c);

#endif
