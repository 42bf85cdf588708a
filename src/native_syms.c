/* native_syms.c - see native_syms.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "native_syms.h"

#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hashmap.h"
#include "strtab.h"

#define REREPORT_NS 250000000ull /* at most this often: /proc/PID/maps again */

struct native_syms {
	pid_t pid;
	Dwfl *dwfl;
	struct strtab *strings;   /* owned: every string handed out */
	struct hashmap by_ip;     /* ip -> index into syms */
	struct hashmap by_start;  /* function start address -> func number */
	struct native_sym *syms;  /* owned: one per address looked up */
	size_t n, cap;
	const char **func_names;  /* func number -> name, to tell apart two
	                             functions at one address over time */
	uint32_t nfuncs, funcs_cap;
	uint64_t reported_ns;
	const char *empty, *unknown;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static void report_modules(struct native_syms *ns)
{
	dwfl_report_begin(ns->dwfl);
	dwfl_linux_proc_report(ns->dwfl, ns->pid);
	dwfl_report_end(ns->dwfl, NULL, NULL);
	ns->reported_ns = clock_now_ns();
}

struct native_syms *native_syms_new(pid_t pid)
{
	struct native_syms *ns = calloc(1, sizeof(*ns));

	if (ns == NULL)
		return NULL;
	ns->pid = pid;
	hashmap_init(&ns->by_ip);
	hashmap_init(&ns->by_start);
	ns->strings = strtab_new();
	ns->dwfl = dwfl_begin(&callbacks);
	if (ns->strings == NULL || ns->dwfl == NULL) {
		native_syms_free(ns);
		return NULL;
	}
	ns->empty = strtab_intern(ns->strings, "", 0, NULL);
	ns->unknown = strtab_intern(ns->strings, "[unknown]", 9, NULL);
	if (ns->empty == NULL || ns->unknown == NULL) {
		native_syms_free(ns);
		return NULL;
	}
	report_modules(ns);
	return ns;
}

void native_syms_free(struct native_syms *ns)
{
	if (ns == NULL)
		return;
	if (ns->dwfl != NULL)
		dwfl_end(ns->dwfl);
	hashmap_destroy(&ns->by_ip);
	hashmap_destroy(&ns->by_start);
	strtab_free(ns->strings);
	free(ns->syms);
	free(ns->func_names);
	free(ns);
}

static const char *intern(struct native_syms *ns, const char *s)
{
	const char *r = s != NULL ? strtab_intern(ns->strings, s, strlen(s), NULL) : NULL;

	return r != NULL ? r : ns->empty;
}

static const char *base_name(const char *path)
{
	const char *slash = path != NULL ? strrchr(path, '/') : NULL;

	return slash != NULL ? slash + 1 : path;
}

/* Start of the function holding ip (module bias applied) and its name,
 * from the symbol table, else from the .eh_frame entry covering it. */
static const char *function_of(struct native_syms *ns, Dwfl_Module *mod, uint64_t ip,
                               const char *modname, Dwarf_Addr low, Dwarf_Addr *start)
{
	GElf_Off off;
	GElf_Sym sym;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame;
	const char *name = dwfl_module_addrinfo(mod, ip, &off, &sym, NULL, NULL, NULL);
	char buf[512];

	if (name != NULL) {
		*start = ip - off;
		return intern(ns, name);
	}
	*start = ip;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi != NULL && dwarf_cfi_addrframe(cfi, ip - bias, &frame) == 0) {
		Dwarf_Addr s, e;

		if (dwarf_frame_info(frame, &s, &e, NULL) >= 0)
			*start = s + bias;
		free(frame);
	}
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, modname, (uint64_t)(*start - low));
	return intern(ns, buf);
}

/* libdw finds an address's compile unit through .debug_aranges, which
 * clang does not emit by default: then look through the units' own
 * address ranges. */
static Dwarf_Line *line_by_units(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL)
		if (dwarf_haspc(cu, addr - bias) > 0)
			return dwarf_getsrc_die(cu, addr - bias);
	return NULL;
}

static int source_line(Dwfl_Module *mod, uint64_t addr, const char **file)
{
	Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
	Dwarf_Line *dl;
	int line = 0;

	*file = NULL;
	if (l != NULL) {
		*file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	} else if ((dl = line_by_units(mod, addr)) != NULL) {
		*file = dwarf_linesrc(dl, NULL, NULL);
		dwarf_lineno(dl, &line);
	}
	return *file != NULL && line > 0 ? line : 0;
}

/* The dense number of the function starting at `start` named `name`. */
static uint32_t func_number(struct native_syms *ns, uint64_t start, const char *name)
{
	uint64_t v;

	if (hashmap_get(&ns->by_start, start, &v) && ns->func_names[v] == name)
		return (uint32_t)v;
	if (ns->nfuncs == ns->funcs_cap) {
		uint32_t cap = ns->funcs_cap ? ns->funcs_cap * 2 : 256;
		const char **nf = realloc(ns->func_names, cap * sizeof(*nf));

		if (nf == NULL)
			return 0;
		ns->func_names = nf;
		ns->funcs_cap = cap;
	}
	ns->func_names[ns->nfuncs] = name;
	(void)hashmap_put(&ns->by_start, start, ns->nfuncs);
	return ns->nfuncs++;
}

static bool resolve(struct native_syms *ns, uint64_t ip, struct native_sym *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(ns->dwfl, ip);
	Dwarf_Addr low, start;
	const char *modpath, *file;

	if (mod == NULL && clock_now_ns() - ns->reported_ns > REREPORT_NS) {
		report_modules(ns); /* loaded since (dlopen)? */
		mod = dwfl_addrmodule(ns->dwfl, ip);
	}
	if (mod == NULL)
		return false;
	modpath = dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
	out->module = intern(ns, base_name(modpath));
	out->name = function_of(ns, mod, ip, out->module, low, &start);
	out->line = source_line(mod, ip, &file);
	out->file = intern(ns, out->line > 0 ? file : NULL);
	out->func_line = source_line(mod, start, &file);
	out->func = func_number(ns, start, out->name);
	return true;
}

struct native_sym native_syms_lookup(struct native_syms *ns, uint64_t ip)
{
	uint64_t idx;
	struct native_sym s = { .name = ns->unknown, .module = ns->empty, .file = ns->empty };

	if (hashmap_get(&ns->by_ip, ip, &idx))
		return ns->syms[idx];
	if (!resolve(ns, ip, &s)) {
		s.func = func_number(ns, 0, ns->unknown);
		return s; /* not cached: a module may appear for it later */
	}
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 1024;
		struct native_sym *nsyms = realloc(ns->syms, cap * sizeof(*nsyms));

		if (nsyms == NULL)
			return s;
		ns->syms = nsyms;
		ns->cap = cap;
	}
	if (hashmap_put(&ns->by_ip, ip, ns->n))
		ns->syms[ns->n++] = s;
	return s;
}
