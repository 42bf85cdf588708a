/* dump.h - `pytop dump`: every thread's current Python stack, taken once
 * from a running process without stopping it, as text or one JSON object.
 * The model below is what one look found; the printers only format it. */
#ifndef PYTOP_DUMP_H
#define PYTOP_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpython/py_locals.h"
#include "errors.h"
#include "options.h"

struct dump_frame {
	char *function; /* owned: the qualified name (native: the function's) */
	char *file;     /* owned; native: its source file, "" unknown */
	char *module;   /* owned; NULL: a Python frame; else (--native) the
	                   native function's library or program */
	bool entry;     /* Python: the outermost frame one interpreter-loop
	                   invocation runs (where --native puts C frames) */
	int line;       /* 0 when the code has no line for the instruction */
	char *source;   /* owned, escaped; NULL when the file is unreadable */
	struct py_frame_locals locals; /* --locals: arguments and locals, each
	                                  value as Python would repr it */
};

struct dump_thread {
	pid_t tid;
	char os_name[64];  /* escaped (escape.h) */
	char *name;        /* owned: threading.Thread's name; NULL unknown */
	const char *state; /* "running_gil", "running", "gil_wait", "idle" */
	bool truncated;    /* deeper than the reader's frame limit */
	const char *error; /* static text when the stack could not be read */
	const char *native_error; /* --native: static text when its C frames
	                             are missing, else NULL */
	struct dump_frame *frames; /* owned, outermost first */
	size_t nframes;
};

struct dump {
	pid_t pid;
	pid_t ppid;        /* -s: its parent (children only) */
	int depth;         /* -s: 1 for the target's children, 2 for theirs... */
	char error[512];   /* -s: why a child has no threads (escaped), or "" */
	char command[1024]; /* escaped */
	char python_version[16];
	bool locals;
	bool native;       /* --native: C frames merged in */
	struct dump_thread *threads; /* owned */
	size_t nthreads;
	struct dump *children; /* owned, -s: every descendant, parents first */
	size_t nchildren;
};

/* Attach to o->pid, read every thread's stack once (o->locals: with
 * locals) into *out; with o->subprocesses its descendants' too, into
 * out->children.  0, or -1 with *err when the target itself cannot be
 * dumped (not Python, gone, exited during the dump, permission). */
int dump_take(const struct options *o, struct dump *out, struct pytop_error *err);
void dump_free(struct dump *d);

/* Text: one block per thread, frames innermost last as in a traceback. */
void dump_print_text(const struct dump *d, FILE *out);
/* One JSON object (schema: man pytop, DUMP), with a children array when
 * `children` (-s).  0, or -1 on a write error. */
int dump_print_json(const struct dump *d, FILE *out, bool children);

#endif
