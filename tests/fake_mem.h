/* fake_mem.h - a fake address space for the tests of the object and frame
 * readers (struct py_mem): regions allocated at fixed, gapped addresses,
 * filled by hand, read as the target's memory would be. */
#ifndef PYTOP_TESTS_FAKE_MEM_H
#define PYTOP_TESTS_FAKE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "cpython/py_repr.h"

extern const struct py_mem fake_mem;

void fake_reset(void);                 /* free every region */
uintptr_t fake_alloc(size_t len);      /* zeroed; an unmapped gap follows */
uint8_t *fake_at(uintptr_t addr);      /* where addr is in the fake space */
void fake_put64(uintptr_t addr, uint64_t v);
void fake_put32(uintptr_t addr, uint32_t v);

#endif
