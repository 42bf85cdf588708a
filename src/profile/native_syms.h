/* native_syms.h - instruction addresses of a target process -> function,
 * module and source line, with libdw (dwfl): symbol tables, DWARF line
 * tables, separate debug files found by build-id (/usr/lib/debug), and
 * the .eh_frame ranges of functions that have no symbol.  Runs on the
 * consumer side, off the sampler's clock.
 *
 * Results are cached per address and per function; modules are reported
 * from /proc/PID/maps at start and again (at most every few hundred ms)
 * when an address falls in none, so libraries loaded later (dlopen) are
 * found.  Load bias (PIE, shared libraries) is dwfl's business. */
#ifndef PYTOP_NATIVE_SYMS_H
#define PYTOP_NATIVE_SYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

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

/* The symbol of address ip (a return address should be passed minus 1).
 * The strings live as long as ns.  Never fails: unknown is a result. */
struct native_sym native_syms_lookup(struct native_syms *ns, uint64_t ip);

#endif
