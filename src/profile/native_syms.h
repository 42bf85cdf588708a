/* native_syms.h - instruction addresses of a target process -> function,
 * module and source line, with libdw (dwfl): symbol tables, DWARF line
 * tables, separate debug files found by build-id (/usr/lib/debug), and
 * the .eh_frame ranges of functions that have no symbol.  Runs on the
 * consumer side, off the sampler's clock.
 *
 * It never touches the target's memory nor reads its /proc/PID/maps: the
 * modules are the ones the sampler announced (REC_MODULE), each read from
 * its file through the target's root or map_files (target_files.h), the
 * vDSO from pytop's own (the kernel maps the same image everywhere).  An
 * address in no announced module is "[unknown]" until its module comes.
 * Results are cached per address and per function.  Load bias (PIE,
 * shared libraries) is dwfl's business. */
#ifndef PYTOP_NATIVE_SYMS_H
#define PYTOP_NATIVE_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/record.h"

struct native_sym {
	const char *name;   /* function; "module+0xOFFSET" (its start) without a
	                       symbol; "[unknown]" outside every module */
	const char *module; /* file name of the module (no directory), "" unknown */
	const char *file;   /* source file, "" unknown */
	int line;           /* source line of the address, 0 unknown */
	int func_line;      /* source line of the function's entry, 0 unknown */
	uint32_t func;      /* this function's number, from 0, dense */
};

struct native_syms;

struct native_syms *native_syms_new(pid_t pid); /* NULL on failure */
void native_syms_free(struct native_syms *ns);

/* A module announced by the sampler: r's fixed part, path its path_len
 * bytes (validated here: hostile).  One overlapping modules known before
 * replaces them (the target unmapped them). */
void native_syms_add_module(struct native_syms *ns, const struct rec_module *r,
                            const char *path);

/* The modules (their paths as announced, at most NATIVE_SYMS_NOSYM_MAX,
 * in the order found) where a function had no name and no debug info was
 * found: debug symbols would name their functions.  *paths lives as long
 * as ns. */
#define NATIVE_SYMS_NOSYM_MAX 4
size_t native_syms_unnamed_modules(const struct native_syms *ns, const char *const **paths);

/* The symbol of address ip (a return address should be passed minus 1).
 * The strings live as long as ns.  Never fails: unknown is a result. */
struct native_sym native_syms_lookup(struct native_syms *ns, uint64_t ip);

#endif
