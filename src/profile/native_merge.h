/* native_merge.h - (--native) puts each thread sample's native stack and
 * its Python stack together, on the consumer side: every interpreter-loop
 * frame (_PyEval_EvalFrameDefault) of the native stack is replaced by the
 * Python frames that invocation runs, so one stack reads
 * main.py:main -> app.py:work -> zlib.compress -> deflate -> ...
 *
 * By default the interpreter's own plumbing is hidden: frames of the
 * module that holds the interpreter loop (the python binary or libpython)
 * between Python frames or on the way into native code (call machinery
 * such as _PyObject_Vectorcall, cfunction_call), and everything outside
 * the outermost interpreter loop (main, Py_RunMain, thread start).
 * native_merge_show_all() keeps them, and the loop frames too.
 *
 * Where the two stacks disagree (the thread ran on between the Python read
 * and its stop) they are aligned from the outermost frame: the innermost
 * loop frame takes any Python frames left over, loop frames beyond the
 * Python ones take none.  A native stack without any loop frame (a
 * non-Python target, or an unwind that did not get that far) is put
 * inside the Python frames.
 *
 * Native functions reach the aggregator as code ids from
 * NATIVE_CODE_BASE up (aggregator_define_native), each frame's
 * instr_offset being its source line.
 */
#ifndef PYTOP_NATIVE_MERGE_H
#define PYTOP_NATIVE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "profile/aggregator.h"
#include "transport/record.h"

#define NATIVE_CODE_BASE 0x80000000u
/* The most frames one merged stack has. */
#define NATIVE_MERGE_MAX_FRAMES (REC_MAX_PY_FRAMES + REC_MAX_NATIVE_FRAMES)

struct native_merge;

/* Feeds agg (borrowed; must outlive the merge).  NULL on failure. */
struct native_merge *native_merge_new(pid_t pid, struct aggregator *agg, bool show_all);

/* Names native function id (NATIVE_CODE_BASE + its number) the first
 * time a merged stack holds it; false: not kept, asked again next time.
 * The strings live as long as the merge. */
typedef bool native_define_fn(void *ctx, uint32_t id, const char *name, const char *file,
                              int line, const char *module);

/* Without an aggregator (pytop dump): stacks are merged by
 * native_merge_stack and each native function named through define. */
struct native_merge *native_merge_new_to(pid_t pid, native_define_fn *define, void *ctx,
                                         bool show_all);

/* A module for the symbolizer (what a REC_MODULE carries). */
void native_merge_add_module(struct native_merge *m, const struct rec_module *r,
                             const char *path);

/* One thread's native stack (nips IPs, leaf first) and its Python frames
 * py (npy, leaf first; groups as in struct rec_native) merged into out
 * (room for NATIVE_MERGE_MAX_FRAMES), leaf first: Python frames keep
 * their code ids, native ones get NATIVE_CODE_BASE + function number
 * with the source line as instr_offset.  The number of frames. */
size_t native_merge_stack(struct native_merge *m, const uint64_t *ips, size_t nips,
                          const uint16_t *groups, size_t ngroups,
                          const struct rec_frame *py, size_t npy, struct rec_frame *out);
void native_merge_free(struct native_merge *m);

/* Hide (false) or show the interpreter's plumbing in later samples. */
void native_merge_show_all(struct native_merge *m, bool show_all);

/* native_syms_unnamed_modules of its symbolizer. */
size_t native_merge_unnamed_modules(const struct native_merge *m, const char *const **paths);

/* Consume one record from the ring: a REC_NATIVE is held until the
 * REC_SAMPLE it belongs to, which goes to the aggregator merged with it;
 * a REC_MODULE goes to the symbolizer; every other record goes to the
 * aggregator as it is. */
void native_merge_ingest(struct native_merge *m, const void *rec, size_t len);

#endif
