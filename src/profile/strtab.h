/* strtab.h - string interning for the aggregator side.
 *
 * strtab_intern returns the same stable, NUL-terminated pointer for equal
 * byte strings, so names can be compared and hashed by pointer or by id.
 * Every string lives as long as the table (there is no removal); snapshots
 * borrow these pointers.  Single-threaded.
 */
#ifndef PYTOP_STRTAB_H
#define PYTOP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

struct strtab *strtab_new(void); /* NULL on OOM */
void strtab_free(struct strtab *t); /* frees every interned string */

/* Intern len bytes at s (need not be NUL-terminated; s may be NULL when len
 * is 0).  Returns the table's copy, NUL-terminated, or NULL on OOM.  When
 * id is not NULL it receives the string's id: dense, from 0, in order of
 * first appearance.  Embedded NULs are kept (the pointer then reads short
 * as a C string, but the key is the whole byte string). */
const char *strtab_intern(struct strtab *t, const char *s, size_t len,
                          uint32_t *id);

/* The string with that id, or NULL if there is none. */
const char *strtab_get(const struct strtab *t, uint32_t id);

#endif
