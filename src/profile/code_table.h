/* code_table.h - what the aggregator knows about each code object:
 * code_id -> qualname, filename, first line, decoded line table.
 *
 * Filled from REC_CODE_DEF records (record.h).  Names are interned in a
 * string table the caller owns (the code table borrows it, and it must
 * outlive the code table, or be swapped with code_table_rehome).
 *
 * Code ids are not reused within a session, so a definition can go once
 * the sampler will not use its id again: the sampler forgets a code not
 * seen on any stack for PY_READER_CODE_IDLE_S seconds (py_reader.h) and, if
 * it comes back, defines it afresh under a new id.  code_table_age drops
 * Python codes unused for longer than that (native ones stay: their
 * definer never sends them twice), which bounds the table under code
 * churn.  A function code (code_table_function) stands for the codes of
 * one function that went, as long as the aggregator uses it.
 */
#ifndef PYTOP_CODE_TABLE_H
#define PYTOP_CODE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/linetable.h"
#include "profile/strtab.h"

struct code_info {
	uint32_t code_id;
	const char *qualname;  /* interned, borrowed from the strtab */
	const char *filename;  /* interned, borrowed from the strtab */
	uint32_t qualname_sid; /* their strtab ids: cheap keys */
	uint32_t filename_sid;
	int firstlineno;
	struct linetable *lt;  /* owned; never NULL */
	bool native;           /* a native function (--native), not a code */
	bool marker;           /* "[N more frames]": frames a deep stack left
	                          out (code_table_more_frames); no line */
	const char *module;    /* native: its module's file name, interned;
	                          "" for Python codes */
	uint32_t used_epoch;   /* the table's epoch at its last use */
	bool function;         /* stands for the codes of one function that
	                          went (code_table_function); no line table */
};

enum code_table_add {
	CODE_ADDED,
	CODE_DUPLICATE, /* id already defined: the first definition is kept */
	CODE_MALFORMED, /* sizes inconsistent with the record's size */
	CODE_NOMEM,
};

struct code_table *code_table_new(struct strtab *strings); /* NULL on OOM */
void code_table_free(struct code_table *ct);

/* Parse one REC_CODE_DEF record of `size` bytes (the caller has checked
 * the header's type and that size bytes are readable).  rec need not be
 * aligned. */
enum code_table_add code_table_add_record(struct code_table *ct,
                                          const void *rec, size_t size);

/* A native function (--native) under code id `code_id` (the caller keeps
 * native ids apart from the sampler's): name, source file ("" unknown:
 * the module then stands in), the line of its entry (0 unknown), module.
 * Frames of it carry the source line of their address as instr_offset
 * (0 unknown). */
enum code_table_add code_table_add_native(struct code_table *ct, uint32_t code_id,
                                          const char *name, const char *file,
                                          int line, const char *module);

/* The row of a REC_MORE_FRAMES marker frame counting n left-out frames
 * (record.h), defined on first use and marked used.  Its name is
 * "[N more frames]", N exact below 100 and else rounded down to two
 * significant digits with a '+' ("[2900+ more frames]"): a recursion whose
 * depth varies gets a few rows, not one per depth.  NULL on OOM or n < 1. */
const struct code_info *code_table_more_frames(struct code_table *ct, int32_t n);

/* NULL when code_id was never defined.  The pointer stays valid until the
 * next add or code_table_free. */
const struct code_info *code_table_get(const struct code_table *ct,
                                       uint32_t code_id);

/* code_table_get, and mark the code as used in the current epoch. */
const struct code_info *code_table_use(struct code_table *ct, uint32_t code_id);

/* Start a new epoch, and drop the Python codes not used in the last
 * `idle_epochs` ones (a code is used when defined or looked up with
 * code_table_use).  Returns how many went.  Pointers from
 * code_table_get are invalid afterwards. */
size_t code_table_age(struct code_table *ct, uint32_t idle_epochs);

/* Will the next code_table_age(ct, idle_epochs) drop code_id? */
bool code_table_goes(const struct code_table *ct, uint32_t code_id, uint32_t idle_epochs);

/* The function of Python code code_id as a code of its own: its name and
 * file, the smallest first line of the codes it stands for, no line
 * table (function = true); made on first use, shared by every code of
 * that function, marked used.  What the stack table's frames of a code
 * about to go become while its function's rows live (the frames keep
 * their lines).  NULL on OOM, when the ids ran out, or for a native
 * code, a marker or a function code. */
const struct code_info *code_table_function(struct code_table *ct, uint32_t code_id);

/* Intern every code's strings in `to` and use `to` from now on (the old
 * table may then be freed).  false on OOM: some codes may already point
 * into `to`, so both tables must then be kept. */
bool code_table_rehome(struct code_table *ct, struct strtab *to);

/* Line of a byte offset in that code: the line table's answer, or the
 * function's first line when the table has none.  Native functions: the
 * frame's own line (instr_offset), 0 when unknown. */
int code_info_line(const struct code_info *ci, int32_t instr_offset);

size_t code_table_count(const struct code_table *ct);

#endif
