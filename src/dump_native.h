/* dump_native.h - `pytop dump --native`: each thread's C frames merged
 * into its Python stack as the live view merges them
 * (profile/native_merge.h), from one unwind per thread.
 *
 * A thread is stopped only while its registers and the top of its stack
 * are copied (sampler/native_unwind.h: seize, interrupt, copy, detach),
 * one thread at a time as each stops; whatever has not stopped within
 * DUMP_NATIVE_WAIT_NS is released by native_unwind_free and listed
 * without its C frames.  Nothing stays stopped or traced. */
#ifndef PYTOP_DUMP_NATIVE_H
#define PYTOP_DUMP_NATIVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "dump.h"
#include "errors.h"

#define DUMP_NATIVE_WAIT_NS 2000000000ull

/* Unwind every thread of d (read from process pid) that has no error and
 * put its C frames among its Python frames (whose `entry` flags say where
 * each interpreter-loop invocation starts); show_all keeps the
 * interpreter's plumbing (--native-all).  0, or -1 with *err when pytop
 * may not trace the process (what --native needs). */
int dump_native_add(pid_t pid, bool show_all, struct dump *d, struct pytop_error *err);

#endif
