/* native_ehframe.c - (--native) each module's .eh_frame_hdr table found
 * and read in the target's memory, cached per module (native_ehframe.h).
 *
 * Everything here is read from the target and is hostile: the ELF and
 * program headers are checked against the mapping they were read from, the
 * table must be in the form linkers and the kernel build (version 1, a
 * udata4 count, a datarel sdata4 binary search table), and anything else
 * leaves the module without a table rather than guessing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/native_ehframe.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "target/remote_mem.h"

#define PAGE_MASK (~(uint64_t)4095)
#define MAX_PHDRS 64
#define MAX_MODULE (1ull << 40)       /* a larger extent is garbage */
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b
#define EH_HDR_LEN 12                 /* version, 3 encodings, 2 x 4 bytes */

void ehframe_init(struct ehframe_tables *t, pid_t pid)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
}

void ehframe_free(struct ehframe_tables *t)
{
	if (t->have_maps)
		maps_free(&t->maps);
	for (size_t i = 0; i < t->n; i++)
		free(t->mods[i].path);
	free(t->mods);
	memset(t, 0, sizeof(*t));
}

/* The snapshot's mapping containing ip, or NULL. */
static const struct map_entry *mapping_of(const struct proc_maps *m, uint64_t ip)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip < m->v[mid].start)
			hi = mid;
		else if (ip >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

/* The index of the first module with hi > ip (ip is in it if lo <= ip). */
static size_t module_slot(const struct ehframe_tables *t, uint64_t ip)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->mods[mid].hi <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A hole the loader reserved between an object's segments: anonymous and
 * inaccessible where it padded a segment to a large alignment. */
static bool is_hole(const struct map_entry *e)
{
	return e->path[0] == '\0' && strcmp(e->perms, "---p") == 0;
}

/* Where the object mapped at e starts: the nearest mapping at or below it
 * of the same file with offset 0 (the ELF header), or 0. */
static uint64_t object_base(const struct proc_maps *m, const struct map_entry *e)
{
	const struct map_entry *b = e;

	for (;;) {
		if (!is_hole(b) && b->offset == 0)
			return b->start;
		if (b == m->v)
			return 0;
		b--;
		if (!is_hole(b) && strcmp(b->path, e->path) != 0)
			return 0;
	}
}

/* The module at base from its ELF and program headers in the target:
 * its extent, and its table when it has a usable one. */
static bool read_module(pid_t pid, uint64_t base, struct ehframe_module *mod)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[MAX_PHDRS];
	uint64_t bias = 0, lo = UINT64_MAX, hi = 0, hdr_vaddr = 0;
	bool have_bias = false, have_hdr = false;
	uint8_t hdr[EH_HDR_LEN];
	uint32_t count;

	if (remote_read(pid, base, &eh, sizeof(eh)) != 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > MAX_PHDRS ||
	    eh.e_phoff > MAX_MODULE ||
	    remote_read(pid, base + eh.e_phoff, ph, eh.e_phnum * sizeof(ph[0])) != 0)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_EH_FRAME) {
			hdr_vaddr = ph[i].p_vaddr;
			have_hdr = true;
		}
		if (ph[i].p_type != PT_LOAD || ph[i].p_memsz > MAX_MODULE ||
		    ph[i].p_vaddr > MAX_MODULE)
			continue;
		if (ph[i].p_offset == 0 && !have_bias) {
			/* The segment holding the ELF header is the one at base. */
			bias = base - (ph[i].p_vaddr & PAGE_MASK);
			have_bias = true;
		}
		if ((ph[i].p_vaddr & PAGE_MASK) < lo)
			lo = ph[i].p_vaddr & PAGE_MASK;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	if (!have_bias || hi <= lo)
		return false;
	mod->lo = bias + lo;
	mod->hi = bias + hi;
	if (mod->hi <= mod->lo || !have_hdr || hdr_vaddr < lo || hdr_vaddr + EH_HDR_LEN > hi ||
	    remote_read(pid, bias + hdr_vaddr, hdr, sizeof(hdr)) != 0)
		return true; /* a module, without a table */
	memcpy(&count, hdr + 8, sizeof(count));
	if (hdr[0] != 1 || hdr[2] != EH_PE_UDATA4 || hdr[3] != EH_PE_DATAREL_SDATA4 ||
	    count == 0 || hdr_vaddr + EH_HDR_LEN + (uint64_t)count * 8 > hi)
		return true;
	/* The table is fde_count (initial location, FDE) pairs of sdata4,
	 * relative to the header; libunwind reads it through access_mem. */
	mod->di = (unw_dyn_info_t){
		.start_ip = mod->lo, .end_ip = mod->hi,
		.format = UNW_INFO_FORMAT_REMOTE_TABLE,
		.u.rti = { .segbase = bias + hdr_vaddr,
		           .table_data = bias + hdr_vaddr + EH_HDR_LEN,
		           .table_len = (uint64_t)count * 8 / sizeof(unw_word_t) },
	};
	mod->ok = true;
	return true;
}

/* Takes mod->path, kept or freed. */
static struct ehframe_module *insert_module(struct ehframe_tables *t,
                                            struct ehframe_module *mod)
{
	size_t at = module_slot(t, mod->lo);

	if (at < t->n && t->mods[at].lo < mod->hi) {
		free(mod->path);
		return NULL; /* overlaps one already known: headers lie */
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct ehframe_module *v = realloc(t->mods, cap * sizeof(*v));

		if (v == NULL) {
			free(mod->path);
			return NULL;
		}
		t->mods = v;
		t->cap = cap;
	}
	memmove(t->mods + at + 1, t->mods + at, (t->n - at) * sizeof(*t->mods));
	t->mods[at] = *mod;
	t->n++;
	return &t->mods[at];
}

/* Keep only the modules whose first mapping still starts where it did:
 * where it does not, the object was unloaded (and the range may hold
 * another one now). */
static void drop_unmapped(struct ehframe_tables *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct map_entry *e = mapping_of(&t->maps, t->mods[i].lo);

		if (e != NULL && e->start == t->mods[i].lo)
			t->mods[kept++] = t->mods[i];
		else
			free(t->mods[i].path);
	}
	t->n = kept;
}

/* Read /proc/PID/maps again. */
static bool reload_maps(struct ehframe_tables *t)
{
	struct proc_maps m;

	t->maps_at_ns = clock_now_ns();
	if (maps_load(t->pid, &m) != 0)
		return false;
	if (t->have_maps)
		maps_free(&t->maps);
	t->maps = m;
	t->have_maps = true;
	drop_unmapped(t);
	return true;
}

/* The mapping of ip in a snapshot recent enough to know it, or NULL. */
static const struct map_entry *current_mapping(struct ehframe_tables *t, uint64_t ip)
{
	const struct map_entry *e = t->have_maps ? mapping_of(&t->maps, ip) : NULL;

	if (e == NULL && (!t->have_maps ||
	                  clock_now_ns() - t->maps_at_ns >= EHFRAME_MAPS_INTERVAL_NS) &&
	    reload_maps(t))
		e = mapping_of(&t->maps, ip);
	return e;
}

/* The mapping the consumer opens the module's file through: the one at
 * its ELF header, else e itself.  No path (out of memory): never
 * announced, and the consumer leaves its addresses unknown. */
static void name_module(const struct proc_maps *m, const struct map_entry *e, uint64_t base,
                        struct ehframe_module *mod)
{
	const struct map_entry *at = base != 0 ? mapping_of(m, base) : NULL;

	if (at == NULL || strcmp(at->path, e->path) != 0)
		at = e;
	mod->map_start = at->start;
	mod->map_end = at->end;
	mod->offset = at->offset;
	mod->path = strdup(e->path);
	mod->announced = mod->path == NULL;
}

void ehframe_announce(struct ehframe_tables *t, ehframe_announce_fn *fn, void *ctx)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->mods[i].announced)
			t->mods[i].announced = fn(ctx, &t->mods[i]);
}

const unw_dyn_info_t *ehframe_find(struct ehframe_tables *t, uint64_t ip)
{
	size_t at = module_slot(t, ip);
	const struct map_entry *e;
	struct ehframe_module mod = {0}, *got;
	uint64_t base;

	if (at < t->n && t->mods[at].lo <= ip)
		return t->mods[at].ok ? &t->mods[at].di : NULL;
	e = current_mapping(t, ip);
	/* Anonymous memory (JIT code, a garbage address) and the kernel's
	 * other pseudo-files ([stack], [heap]) hold no ELF object. */
	if (e == NULL || e->path[0] == '\0' || (e->path[0] == '[' && strcmp(e->path, "[vdso]") != 0))
		return NULL;
	base = object_base(&t->maps, e);
	if (base == 0 || !read_module(t->pid, base, &mod) || ip < mod.lo || ip >= mod.hi)
		mod = (struct ehframe_module){ .lo = e->start, .hi = e->end, .ok = false };
	name_module(&t->maps, e, base, &mod);
	got = insert_module(t, &mod);
	return got != NULL && got->ok ? &got->di : NULL;
}
