/* native_syms.c - see native_syms.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/native_syms.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hashmap.h"
#include "target/proc_maps.h"
#include "profile/strtab.h"
#include "target/target_files.h"

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

/* The process whose files the callbacks below open.  libdwfl passes them
 * no context of ours, and every lookup runs on the consumer thread. */
static _Thread_local pid_t files_of;

/* A module's path as the target's maps name it, " (deleted)" dropped. */
static void module_path(const char *name, char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(name), d = sizeof(deleted) - 1;

	if (n >= d && strcmp(name + n - d, deleted) == 0)
		n -= d;
	snprintf(buf, len, "%.*s", (int)n, name);
}

/* The mapping of path that starts at base (else its first one with file
 * offset 0), opened through map_files: libdwfl's own callback opens the
 * path, which follows links and blocks on a FIFO the target planted. */
static int open_module(pid_t pid, const char *path, Dwarf_Addr base)
{
	struct proc_maps maps;
	const struct map_entry *m = NULL;
	int fd;

	if (maps_load(pid, &maps) != 0)
		return -1;
	for (size_t i = 0; i < maps.n && m == NULL; i++)
		if (maps.v[i].start == base && strcmp(maps.v[i].path, path) == 0)
			m = &maps.v[i];
	if (m == NULL)
		m = maps_first_of(&maps, path);
	fd = m != NULL ? target_object_open(pid, m->start, m->end, path)
	     : target_file_open(pid, path);
	maps_free(&maps);
	return fd;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
                    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	char path[PATH_MAX];
	int fd;

	if (name[0] != '/') /* [vdso]: read from the target's memory */
		return dwfl_linux_proc_find_elf(mod, userdata, name, base,
		                                file_name, elfp);
	module_path(name, path, sizeof(path));
	fd = open_module(files_of, path, base);
	if (fd >= 0 && (*file_name = strdup(path)) == NULL) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether the debug file open at fd was built with the object (same GNU
 * build ID; an object without one takes what it finds, as GDB does). */
static bool same_build(int fd, const unsigned char *id, int n)
{
	Elf *elf = n > 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	const void *theirs;
	bool same = n <= 0;

	if (elf != NULL) {
		same = dwelf_elf_gnu_build_id(elf, &theirs) == n &&
		       memcmp(theirs, id, (size_t)n) == 0;
		elf_end(elf);
	}
	return same;
}

/* fd of the debug file at path in the target's root, *found set; a file
 * of another build is not taken. */
static int try_debug(const char *path, const unsigned char *id, int n,
                     char **found)
{
	int fd = target_file_open(files_of, path);

	if (fd >= 0 && !same_build(fd, id, n)) {
		close(fd);
		return -1;
	}
	if (fd >= 0 && (*found = strdup(path)) == NULL) {
		close(fd);
		return -1;
	}
	return fd;
}

/* /usr/lib/debug/.build-id/ab/cdef....debug */
static int by_build_id(const unsigned char *id, int n, char **found)
{
	char path[PATH_MAX];
	size_t len = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/",
	                              id[0]);

	for (int i = 1; i < n && len + 8 < sizeof(path); i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	return try_debug(path, id, n, found);
}

/* The .gnu_debuglink name next to the file, in .debug/ there, and under
 * /usr/lib/debug. */
static int by_debuglink(const char *file_name, const char *link, const unsigned char *id,
                        int n, char **found)
{
	const char *slash = file_name != NULL ? strrchr(file_name, '/') : NULL;
	int dirlen = slash != NULL ? (int)(slash - file_name) : 0;
	char path[3][PATH_MAX];
	int fd = -1;

	if (link == NULL || slash == NULL || strchr(link, '/') != NULL)
		return -1;
	snprintf(path[0], PATH_MAX, "%.*s/%s", dirlen, file_name, link);
	snprintf(path[1], PATH_MAX, "%.*s/.debug/%s", dirlen, file_name, link);
	snprintf(path[2], PATH_MAX, "/usr/lib/debug%.*s/%s", dirlen, file_name, link);
	for (int i = 0; i < 3 && fd < 0; i++)
		if (strcmp(path[i], file_name) != 0) /* not the object itself */
			fd = try_debug(path[i], id, n, found);
	return fd;
}

/* Where GDB looks too, each inside the target's root with its rights:
 * libdwfl's standard callback would open them by our view of the path,
 * following links and blocking on a FIFO. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          Dwarf_Addr base, const char *file_name,
                          const char *debuglink, GElf_Word crc, char **found)
{
	const unsigned char *id = NULL;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr), fd = -1;

	(void)userdata, (void)modname, (void)base, (void)crc;
	if (n > 1)
		fd = by_build_id(id, n, found);
	return fd >= 0 ? fd : by_debuglink(file_name, debuglink, id, n, found);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
};

static void report_modules(struct native_syms *ns)
{
	files_of = ns->pid;
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
	Dwfl_Module *mod;
	Dwarf_Addr low, start;
	const char *modpath, *file;

	files_of = ns->pid; /* for find_elf and find_debuginfo */
	mod = dwfl_addrmodule(ns->dwfl, ip);
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
