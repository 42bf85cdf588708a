/* collapsed_text.c - see collapsed_text.h. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapsed_text.h"

/* The sum of a collapsed export's counts; every line checked. */
long long collapsed_sum(const char *text)
{
	long long sum = 0;

	for (const char *l = text; *l != '\0';) {
		const char *nl = strchr(l, '\n'), *sp;

		cr_assert(nl != NULL, "an unterminated line in the export");
		sp = l;
		for (const char *q = l; q < nl; q++)
			if (*q == ' ')
				sp = q;
		cr_assert(sp > l, "a line without a count: %.*s", (int)(nl - l), l);
		sum += strtoll(sp + 1, NULL, 10);
		l = nl + 1;
	}
	return sum;
}

/* Own samples of a function in a collapsed export: the lines whose leaf
 * frame is "name (file:...)". */
long long collapsed_own(const char *text, const char *name, const char *file)
{
	size_t want_len = strlen(name) + strlen(file) + 4;
	char *want = malloc(want_len);
	long long own = 0;

	snprintf(want, want_len, "%s (%s:", name, file);
	for (const char *l = text; *l != '\0';) {
		const char *nl = strchr(l, '\n'), *leaf = l, *sp = l;

		for (const char *q = l; q < nl; q++) {
			if (*q == ';')
				leaf = q + 1;
			if (*q == ' ')
				sp = q;
		}
		if ((size_t)(sp - leaf) > strlen(want) && strncmp(leaf, want, strlen(want)) == 0)
			own += strtoll(sp + 1, NULL, 10);
		l = nl + 1;
	}
	free(want);
	return own;
}
