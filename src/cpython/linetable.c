/* linetable.c - decoder for CPython 3.11+ location tables (co_linetable).
 *
 * Format (see the design notes, section 4): a sequence of entries, each
 * covering 1..8 code units.  First byte: bit 7 set, bits 3-6 the entry's
 * code, bits 0-2 its length - 1.  Codes 0-9 carry one byte of column data,
 * 10-12 two bytes and a line delta of code - 10, 13 a signed varint line
 * delta, 14 a signed varint line delta plus three unsigned varints, 15 no
 * location at all.  The running line starts at firstlineno.
 *
 * The table comes from another process, so it is hostile input: every read
 * is bounds-checked, varints are length-limited, and the first malformed
 * entry ends the table (its units and all later ones have no line).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/linetable.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

enum {
	LT_CODE_ONE_LINE0 = 10,
	LT_CODE_NO_COLUMNS = 13,
	LT_CODE_LONG = 14,
	LT_CODE_NONE = 15,
	LT_VARINT_MAX_BYTES = 6, /* 36 bits: more than any real delta */
};

/* Walks a table entry by entry. */
struct lt_iter {
	const uint8_t *p, *end;
	int64_t line;   /* running line, before the "no location" rule */
	uint64_t start; /* first code unit of the next entry */
};

/* One decoded entry: units [start, start + n) are on `line` (-1 = none). */
struct lt_entry {
	uint64_t start;
	unsigned n;
	int line;
};

static bool lt_uvarint(struct lt_iter *it, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < LT_VARINT_MAX_BYTES; i++) {
		if (it->p >= it->end)
			return false;
		uint8_t b = *it->p++;
		v |= (uint64_t)(b & 63) << (6 * i);
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool lt_svarint(struct lt_iter *it, int64_t *out)
{
	uint64_t u;
	if (!lt_uvarint(it, &u))
		return false;
	*out = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

static bool lt_skip(struct lt_iter *it, size_t nbytes)
{
	if ((size_t)(it->end - it->p) < nbytes)
		return false;
	it->p += nbytes;
	return true;
}

/* The line delta of the entry whose first byte was just read; false when
 * the entry is truncated or malformed. */
static bool lt_delta(struct lt_iter *it, unsigned code, int64_t *delta)
{
	uint64_t ignored;

	*delta = 0;
	switch (code) {
	case LT_CODE_NONE:
		return true;
	case LT_CODE_LONG:
		return lt_svarint(it, delta) && lt_uvarint(it, &ignored) &&
		       lt_uvarint(it, &ignored) && lt_uvarint(it, &ignored);
	case LT_CODE_NO_COLUMNS:
		return lt_svarint(it, delta);
	case LT_CODE_ONE_LINE0:
	case LT_CODE_ONE_LINE0 + 1:
	case LT_CODE_ONE_LINE0 + 2:
		*delta = code - LT_CODE_ONE_LINE0;
		return lt_skip(it, 2);
	default: /* short forms 0-9: same line, one byte of columns */
		return lt_skip(it, 1);
	}
}

static void lt_iter_init(struct lt_iter *it, const uint8_t *table, size_t len,
                         int firstlineno)
{
	it->p = table;
	it->end = table != NULL ? table + len : table;
	it->line = firstlineno;
	it->start = 0;
}

/* Next entry, or false at the end of the table or at the first malformed
 * entry. */
static bool lt_next(struct lt_iter *it, struct lt_entry *e)
{
	if (it->p >= it->end)
		return false;
	uint8_t first = *it->p++;
	if (!(first & 0x80))
		return false; /* not at an entry boundary: corrupt */
	unsigned code = (first >> 3) & 15;
	int64_t delta;
	if (!lt_delta(it, code, &delta))
		return false;
	/* Real deltas are tiny; a running line outside int is garbage. */
	it->line += delta;
	if (it->line < INT_MIN || it->line > INT_MAX)
		return false;
	e->start = it->start;
	e->n = (first & 7) + 1;
	/* CPython reports a negative line as "no line" too (co_lines gives
	 * None for it). */
	e->line = (code == LT_CODE_NONE || it->line < 0) ? -1 : (int)it->line;
	it->start += e->n;
	return true;
}

int linetable_addr2line(const uint8_t *table, size_t len, int firstlineno,
                        int unit)
{
	if (unit < 0)
		return firstlineno;
	struct lt_iter it;
	struct lt_entry e;
	lt_iter_init(&it, table, len, firstlineno);
	while (lt_next(&it, &e)) {
		if ((uint64_t)unit < e.start + e.n)
			return e.line;
	}
	return -1;
}

/* ---- decoded form ------------------------------------------------------ */

/* Units from `start` up to the next range's start are on `line`. */
struct lt_range {
	uint32_t start;
	int32_t line;
};

struct linetable {
	int firstlineno;
	uint32_t end;        /* units >= end have no line */
	size_t n;
	struct lt_range r[]; /* sorted by start, neighbours differ in line */
};

/* Walk the table, merging neighbours on the same line.  With out == NULL
 * only count.  Returns the number of ranges; *end gets the unit count. */
static size_t lt_collect(const uint8_t *table, size_t len, int firstlineno,
                         struct lt_range *out, uint32_t *end)
{
	struct lt_iter it;
	struct lt_entry e;
	size_t n = 0;
	int prev_line = 0;

	lt_iter_init(&it, table, len, firstlineno);
	*end = 0;
	while (lt_next(&it, &e)) {
		/* 8 units per byte at most, so this only trips on tables far
		 * larger than any code object. */
		if (e.start + e.n > UINT32_MAX)
			break;
		if (n == 0 || e.line != prev_line) {
			if (out != NULL)
				out[n] = (struct lt_range){
					.start = (uint32_t)e.start,
					.line = e.line,
				};
			n++;
			prev_line = e.line;
		}
		*end = (uint32_t)(e.start + e.n);
	}
	return n;
}

struct linetable *linetable_decode(const uint8_t *table, size_t len,
                                   int firstlineno)
{
	uint32_t end;
	size_t n = lt_collect(table, len, firstlineno, NULL, &end);
	struct linetable *lt = malloc(sizeof *lt + n * sizeof lt->r[0]);
	if (lt == NULL)
		return NULL;
	lt->firstlineno = firstlineno;
	lt->n = lt_collect(table, len, firstlineno, lt->r, &lt->end);
	return lt;
}

void linetable_free(struct linetable *lt)
{
	free(lt);
}

int linetable_line(const struct linetable *lt, int byte_offset)
{
	if (lt == NULL)
		return -1;
	if (byte_offset < 0)
		return lt->firstlineno;
	uint32_t unit = (uint32_t)byte_offset / 2;
	if (unit >= lt->end)
		return -1;
	/* Last range whose start <= unit; r[0].start is 0 and unit < end
	 * implies n > 0. */
	size_t lo = 0, hi = lt->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (lt->r[mid].start <= unit)
			lo = mid;
		else
			hi = mid;
	}
	return lt->r[lo].line;
}
