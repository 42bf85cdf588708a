/* linetable.h - CPython 3.11+ location tables (co_linetable): instruction
 * offset -> source line.  Decoded once per code object on the aggregator
 * side, looked up per sample with a binary search. */
#ifndef PYTOP_LINETABLE_H
#define PYTOP_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* One-shot decode: line for code-unit index `unit` (byte offset / 2).
 * Returns firstlineno for unit < 0, -1 when the table has no line for it
 * (no-location entry or beyond the table). */
int linetable_addr2line(const uint8_t *table, size_t len, int firstlineno,
                        int unit);

/* Decoded form: sorted ranges of code units with their line. */
struct linetable;
struct linetable *linetable_decode(const uint8_t *table, size_t len,
                                   int firstlineno);
void linetable_free(struct linetable *lt);
/* Same contract as linetable_addr2line, but O(log n). byte_offset is the
 * instruction's byte offset from co_code_adaptive. */
int linetable_line(const struct linetable *lt, int byte_offset);

#endif
