/* elf_syms.h - the few facts pytop needs from an ELF file on disk: the
 * link-time addresses of some dynamic symbols, and where its first PT_LOAD
 * segment starts (to compute the load bias).  Uses libelf. */
#ifndef PYTOP_ELF_SYMS_H
#define PYTOP_ELF_SYMS_H

#include <stdbool.h>
#include <stdint.h>

struct elf_info {
	bool is_elf;
	uint64_t first_load_vaddr;  /* lowest PT_LOAD p_vaddr, page aligned */
	uint64_t py_runtime;        /* _PyRuntime (or the .PyRuntime section) */
	uint64_t py_runtime_size;
	uint64_t py_version;        /* Py_Version (3.11+), 0 if absent */
	uint64_t pycode_type;       /* PyCode_Type, 0 if absent */
};

/* Fill *out from the ELF file open at fd, which stays open (the
 * caller's; open it with target_files.h).  out->is_elf says whether it
 * was an ELF file. */
void elf_read_info_fd(int fd, struct elf_info *out);

#endif
