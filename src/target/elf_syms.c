/* elf_syms.c - dynamic symbols and the first PT_LOAD of an ELF file on
 * disk, with libelf (elf_syms.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/elf_syms.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

static void scan_program_headers(Elf *elf, struct elf_info *out)
{
	size_t n = 0;
	bool found = false;

	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (!found || ph.p_vaddr < out->first_load_vaddr)
			out->first_load_vaddr = ph.p_vaddr;
		found = true;
	}
	out->first_load_vaddr &= ~(uint64_t)0xfff;
}

static void take_symbol(const char *name, const GElf_Sym *sym, struct elf_info *out)
{
	if (sym->st_shndx == SHN_UNDEF)
		return;
	if (strcmp(name, "_PyRuntime") == 0) {
		out->py_runtime = sym->st_value;
		out->py_runtime_size = sym->st_size;
	} else if (strcmp(name, "Py_Version") == 0) {
		out->py_version = sym->st_value;
	} else if (strcmp(name, "PyCode_Type") == 0) {
		out->pycode_type = sym->st_value;
	}
}

static void scan_dynsym(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_info *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (data == NULL || sh->sh_entsize == 0)
		return;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (gelf_getsym(data, (int)i, &sym) == NULL)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (name != NULL)
			take_symbol(name, &sym, out);
	}
}

/* Section headers: .dynsym for the symbols; .PyRuntime as a fallback when
 * the symbol is missing (same address, present from 3.11 on). */
static void scan_sections(Elf *elf, struct elf_info *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	uint64_t section_runtime = 0, section_size = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type == SHT_DYNSYM) {
			scan_dynsym(elf, scn, &sh, out);
			continue;
		}
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name != NULL && strcmp(name, ".PyRuntime") == 0) {
			section_runtime = sh.sh_addr;
			section_size = sh.sh_size;
		}
	}
	if (out->py_runtime == 0 && section_runtime != 0) {
		out->py_runtime = section_runtime;
		out->py_runtime_size = section_size;
	}
}

void elf_read_info_fd(int fd, struct elf_info *out)
{
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf != NULL && elf_kind(elf) == ELF_K_ELF) {
		out->is_elf = true;
		scan_program_headers(elf, out);
		scan_sections(elf, out);
	}
	if (elf != NULL)
		elf_end(elf);
}

