/* fuzz_linetable.c - libFuzzer target for the location-table decoder
 * (src/cpython/linetable.c).  CPython 3.11 to 3.15 share one co_linetable format,
 * so one target covers every supported version.
 *
 * Input: 4 bytes of firstlineno (little-endian, any int, negative and
 * INT_MAX included: both come from the target), then the table.
 *
 * Besides the sanitizers, the two decoders check each other: the decoded
 * form's binary search must give, for every code unit, the line the
 * one-shot walk gives.  A disagreement is a bug in one of them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/linetable.h"

/* Units past the table's end to check as well: they must have no line. */
#define LT_FUZZ_TAIL 16
/* Units compared per input at most: each comparison walks the table, so
 * all of a long table's units would make an input quadratic in time. */
#define LT_FUZZ_CHECKS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t firstlineno;
	const uint8_t *table;
	size_t len;
	struct linetable *lt;

	if (size < sizeof(firstlineno))
		return 0;
	memcpy(&firstlineno, data, sizeof(firstlineno));
	/* A copy of exactly len bytes, so that ASan sees any read past it. */
	len = size - sizeof(firstlineno);
	table = len > 0 ? malloc(len) : NULL;
	if (len > 0 && table == NULL)
		return 0;
	if (len > 0)
		memcpy((void *)table, data + sizeof(firstlineno), len);

	lt = linetable_decode(table, len, firstlineno);
	if (lt != NULL) {
		/* A table's bytes cover 8 units each at most. */
		size_t units = len * 8 + LT_FUZZ_TAIL;
		size_t step = units / LT_FUZZ_CHECKS + 1;

		for (size_t u = 0; u < units; u += step) {
			int one = linetable_addr2line(table, len, firstlineno, (int)u);
			int fast = linetable_line(lt, 2 * (int)u);

			if (one != fast) {
				fprintf(stderr, "unit %zu: addr2line %d, decoded %d\n",
				        u, one, fast);
				abort();
			}
		}
		if (linetable_line(lt, -2) != firstlineno ||
		    linetable_addr2line(table, len, firstlineno, -1) != firstlineno)
			abort(); /* "before the first instruction" is firstlineno */
		linetable_free(lt);
	}
	free((void *)table);
	return 0;
}
