/* native_syms.c - (--native) address -> function, module, file:line with
 * libdw, from the files of the modules the sampler announced
 * (native_syms.h). */
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
#include <sys/auxv.h>
#include <unistd.h>

#include "hashmap.h"
#include "profile/strtab.h"
#include "target/target_files.h"

/* A module as the sampler announced it (REC_MODULE). */
struct module {
	char *path;                  /* owned */
	uint64_t lo, hi;
	uint64_t map_start, map_end;
};

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
	struct module *mods;      /* owned, disjoint */
	size_t nmods, mods_cap;
	char *vdso;               /* owned: pytop's own vDSO image, once needed */
	const char *nosym[NATIVE_SYMS_NOSYM_MAX]; /* interned: modules with
	                             unnamed functions and no debug info */
	size_t nnosym;
	const char *empty, *unknown;
};

/* The symbolizer the callbacks below serve.  libdwfl passes them no
 * context of ours, and every lookup runs on the consumer thread. */
static _Thread_local struct native_syms *current;

static const struct module *module_at(const struct native_syms *ns, const char *path,
                                      Dwarf_Addr lo)
{
	for (size_t i = 0; i < ns->nmods; i++)
		if (ns->mods[i].lo == lo && strcmp(ns->mods[i].path, path) == 0)
			return &ns->mods[i];
	return NULL;
}

/* The kernel maps one vDSO image into every process: pytop's own copy is
 * the target's, so it is symbolized without reading the target. */
static Elf *own_vdso(struct native_syms *ns)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	size_t len;

	if (eh == NULL || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	len = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (ns->vdso == NULL && (ns->vdso = malloc(len)) != NULL)
		memcpy(ns->vdso, eh, len);
	return ns->vdso != NULL ? elf_memory(ns->vdso, len) : NULL;
}

/* A module's file, opened through the mapping the sampler named
 * (map_files), or by path inside the target's root: libdwfl's own
 * callback opens the path as pytop sees it, which follows links and
 * blocks on a FIFO the target planted. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name,
                    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct module *m = module_at(current, name, base);
	int fd;

	(void)mod, (void)userdata;
	if (m == NULL)
		return -1;
	if (strcmp(name, "[vdso]") == 0) {
		*elfp = own_vdso(current);
		return -1;
	}
	fd = target_object_open(current->pid, m->map_start, m->map_end, m->path);
	if (fd >= 0 && (*file_name = strdup(m->path)) == NULL) {
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
	int fd = target_file_open(current->pid, path);

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

/* dwfl keeps what it loaded of a module reported again unchanged. */
static void report_modules(struct native_syms *ns)
{
	current = ns;
	dwfl_report_begin(ns->dwfl);
	for (size_t i = 0; i < ns->nmods; i++)
		dwfl_report_module(ns->dwfl, ns->mods[i].path, ns->mods[i].lo, ns->mods[i].hi);
	dwfl_report_end(ns->dwfl, NULL, NULL);
}

/* A path the maps could show: absolute, or the vDSO; no NUL inside. */
static bool plausible_path(const char *path, size_t len)
{
	if (len == 0 || memchr(path, '\0', len) != NULL)
		return false;
	return path[0] == '/' || (len == 6 && memcmp(path, "[vdso]", 6) == 0);
}

/* Forget the modules [lo, hi) overlaps: the target unmapped them. */
static void drop_overlapping(struct native_syms *ns, uint64_t lo, uint64_t hi)
{
	size_t kept = 0;

	for (size_t i = 0; i < ns->nmods; i++) {
		if (ns->mods[i].lo < hi && lo < ns->mods[i].hi)
			free(ns->mods[i].path);
		else
			ns->mods[kept++] = ns->mods[i];
	}
	ns->nmods = kept;
}

void native_syms_add_module(struct native_syms *ns, const struct rec_module *r,
                            const char *path)
{
	struct module m = { .lo = r->lo, .hi = r->hi,
	                    .map_start = r->map_start, .map_end = r->map_end };

	if (r->lo >= r->hi || r->map_start >= r->map_end || !plausible_path(path, r->path_len))
		return;
	for (size_t i = 0; i < ns->nmods; i++)
		if (ns->mods[i].lo == r->lo && ns->mods[i].hi == r->hi &&
		    strlen(ns->mods[i].path) == r->path_len &&
		    memcmp(ns->mods[i].path, path, r->path_len) == 0)
			return; /* announced again, unchanged */
	if (ns->nmods == ns->mods_cap) {
		size_t cap = ns->mods_cap ? ns->mods_cap * 2 : 32;
		struct module *v = realloc(ns->mods, cap * sizeof(*v));

		if (v == NULL)
			return;
		ns->mods = v;
		ns->mods_cap = cap;
	}
	if ((m.path = strndup(path, r->path_len)) == NULL)
		return;
	drop_overlapping(ns, m.lo, m.hi);
	ns->mods[ns->nmods++] = m;
	report_modules(ns);
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
	return ns;
}

void native_syms_free(struct native_syms *ns)
{
	if (ns == NULL)
		return;
	if (ns->dwfl != NULL)
		dwfl_end(ns->dwfl);
	for (size_t i = 0; i < ns->nmods; i++)
		free(ns->mods[i].path);
	free(ns->mods);
	free(ns->vdso);
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

/* Start of the function holding ip (module bias applied) and its name
 * from the symbol table; else NULL, the start from the .eh_frame entry
 * covering it and "module+0xOFFSET" in buf. */
static const char *function_of(struct native_syms *ns, Dwfl_Module *mod, uint64_t ip,
                               const char *modname, Dwarf_Addr low, Dwarf_Addr *start,
                               char buf[512])
{
	GElf_Off off;
	GElf_Sym sym;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame;
	const char *name = dwfl_module_addrinfo(mod, ip, &off, &sym, NULL, NULL, NULL);

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
	snprintf(buf, 512, "%s+0x%" PRIx64, modname, (uint64_t)(*start - low));
	return NULL;
}

/* A function without a name in a module without debug info: debug
 * symbols would name it (the header says which package has them). */
static void note_nosym(struct native_syms *ns, Dwfl_Module *mod, const char *path)
{
	Dwarf_Addr bias;
	const char *p;

	if (ns->nnosym == NATIVE_SYMS_NOSYM_MAX || dwfl_module_getdwarf(mod, &bias) != NULL)
		return;
	p = intern(ns, path);
	for (size_t i = 0; i < ns->nnosym; i++)
		if (ns->nosym[i] == p)
			return;
	ns->nosym[ns->nnosym++] = p;
}

size_t native_syms_unnamed_modules(const struct native_syms *ns, const char *const **paths)
{
	*paths = ns->nosym;
	return ns->nnosym;
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
	char name[512];

	current = ns; /* for find_elf and find_debuginfo */
	mod = dwfl_addrmodule(ns->dwfl, ip);
	if (mod == NULL)
		return false;
	modpath = dwfl_module_info(mod, NULL, &low, NULL, NULL, NULL, NULL, NULL);
	out->module = intern(ns, base_name(modpath));
	out->name = function_of(ns, mod, ip, out->module, low, &start, name);
	if (out->name == NULL) {
		out->name = intern(ns, name);
		note_nosym(ns, mod, modpath);
	}
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
