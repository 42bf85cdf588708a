/* raw_fields.h - fields out of bytes copied from the target, and the first
 * check on every pointer found there.  Copies are unaligned byte buffers
 * (a field's offset comes from a table the target may have written), hence
 * memcpy. */
#ifndef PYTOP_RAW_FIELDS_H
#define PYTOP_RAW_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t rd64(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static inline uint32_t rd32(const uint8_t *p, uint32_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Aligned and inside x86-64's user half: anything else is torn or forged. */
static inline bool plausible_ptr(uint64_t p)
{
	return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
}

#endif
