/* native_vdso.c - see native_vdso.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "native_vdso.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define VDSO_MAX (64u * 1024) /* a vDSO is two or three pages */
#define EH_PE_DATAREL_SDATA4 0x3b
#define EH_PE_UDATA4 0x03

static bool find_mapping(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, "[vdso]") != NULL &&
		        sscanf(line, "%" SCNx64 "-%" SCNx64, lo, hi) == 2;
	fclose(f);
	return found && *hi > *lo && *hi - *lo <= VDSO_MAX;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* From the image's program headers: the load address of offset 0 and the
 * .eh_frame_hdr's offset in the image. */
static bool eh_frame_hdr(const uint8_t *img, size_t len, uint64_t *vaddr0, uint64_t *hdr_off)
{
	Elf64_Ehdr eh;
	bool have_load = false, have_hdr = false;

	if (len < sizeof(eh))
		return false;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > len)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, img + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			*vaddr0 = ph.p_vaddr;
			have_load = true;
		} else if (ph.p_type == PT_GNU_EH_FRAME && ph.p_offset + 12 <= len) {
			*hdr_off = ph.p_offset;
			have_hdr = true;
		}
	}
	return have_load && have_hdr;
}

bool vdso_table_load(struct vdso_table *t, pid_t pid)
{
	uint8_t *img;
	uint64_t vaddr0 = 0, hdr_off = 0, hdr;
	struct iovec local, remote;
	bool ok = false;

	if (t->loaded)
		return t->ok;
	t->loaded = true;
	if (!find_mapping(pid, &t->lo, &t->hi) || (img = malloc(t->hi - t->lo)) == NULL)
		return false;
	local = (struct iovec){ img, t->hi - t->lo };
	remote = (struct iovec){ (void *)(uintptr_t)t->lo, t->hi - t->lo };
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)(t->hi - t->lo) &&
	    eh_frame_hdr(img, t->hi - t->lo, &vaddr0, &hdr_off) &&
	    img[hdr_off] == 1 && img[hdr_off + 2] == EH_PE_UDATA4 &&
	    img[hdr_off + 3] == EH_PE_DATAREL_SDATA4 && vaddr0 == 0) {
		/* version, three encodings, eh_frame_ptr (4), fde_count (4),
		 * then fde_count (initial location, FDE) pairs of 4 bytes
		 * each, relative to the header. */
		hdr = t->lo + hdr_off;
		t->di = (unw_dyn_info_t){
			.start_ip = t->lo, .end_ip = t->hi,
			.format = UNW_INFO_FORMAT_REMOTE_TABLE,
			.u.rti = { .segbase = hdr, .table_data = hdr + 12,
			           .table_len = u32_at(img + hdr_off + 8) * 8 / sizeof(unw_word_t) },
		};
		ok = t->di.u.rti.table_len > 0;
	}
	free(img);
	t->ok = ok;
	return ok;
}
