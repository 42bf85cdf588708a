/* fuzz_reader.h - the input format of fuzz_reader, shared with the seed
 * generator (fuzz/make_reader_seeds.c).
 *
 * An input is this header, the bytes of a fake target's memory, which the
 * fuzzer serves at [base, base + image length) (every other address is
 * unmapped), and patch_len bytes of patch: from the second tick on, the
 * patch is written over the image at offset patch_at, the way a running
 * interpreter changes its memory between two samples (a frame pushed or
 * popped, a code object freed and another allocated at its address). */
#ifndef PYTOP_FUZZ_READER_H
#define PYTOP_FUZZ_READER_H

#include <stdint.h>

enum fuzz_reader_flags {
	FZR_IDLE = 1u << 0,        /* sample threads off CPU too */
	FZR_NO_CALLS = 1u << 1,    /* py_reader_want_calls(false) */
	FZR_TICKS_SHIFT = 2,       /* bits 2-3: extra ticks over the same image */
	FZR_DEBUG_OFFSETS = 1u << 4, /* 3.13+: offsets from the _Py_DebugOffsets
	                                table at the runtime address, as an
	                                attach to a real 3.13+ does */
};

struct fuzz_reader_header {
	uint8_t version;     /* index for py_offsets_at(), modulo their count */
	uint8_t flags;       /* enum fuzz_reader_flags */
	uint8_t pad[2];
	uint16_t patch_len;  /* the input's last patch_len bytes */
	uint32_t patch_at;   /* image offset they are written to */
	uint64_t base;       /* target address of the image's first byte */
	uint64_t runtime;    /* _PyRuntime */
	uint64_t pycode_type;
};

#endif
