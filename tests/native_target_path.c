/* native_target_path.c - the path of tests/native_target. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "native_target_path.h"

#include <criterion/criterion.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

char *native_target_path(void)
{
	char *bin = strdup(h_pytop()), *path;

	cr_assert_not_null(bin);
	path = h_path(dirname(bin), "tests/native_target");
	free(bin);
	return path;
}
