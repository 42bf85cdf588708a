/* speedscope_page.c - see speedscope_page.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "speedscope_page.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_consumers.h"
#include "harness.h"

json_t *speedscope_sandwich(const char *file, const char **text, const char **rows)
{
	char *pkg = ec_npm_package("speedscope"), *url = NULL;
	json_t *page, *errors;

	cr_assert(asprintf(&url, "file://%s/dist/release/index.html", pkg) > 0);
	/* "3": the sandwich view, a table of the selected thread's functions
	 * (the flame charts are drawn on a canvas, with no text to read). */
	page = ec_browser_render(url, "3", file, "");
	free(url);
	free(pkg);
	*text = json_string_value(json_object_get(page, "text"));
	errors = json_object_get(page, "errors");
	cr_assert_not_null(*text, "speedscope rendered no text for %s", file);
	h_note("speedscope rendered %s:\n%.600s", file, *text);
	cr_expect_eq(json_array_size(errors), 0, "the page reported errors: %s",
	             json_dumps(errors, 0));
	cr_expect_null(strstr(*text, "Something went wrong"), "%s", *text);
	*rows = strstr(*text, "Symbol Name");
	cr_assert_not_null(*rows, "no sandwich table: %s was not imported:\n%s", file, *text);
	return page;
}
