/* speedscope_page.h - a profile file opened in the speedscope app (its npm
 * package, from local files, in headless Chromium; export_consumers.h),
 * as a user would, and its sandwich view read back: the checks every
 * test of an export loaded into the app makes (text rendered, no error
 * on the page, the table present).  Linked into test_export_speedscope
 * and test_export_chrome_app. */
#ifndef PYTOP_TESTS_SPEEDSCOPE_PAGE_H
#define PYTOP_TESTS_SPEEDSCOPE_PAGE_H

#include <jansson.h>

/* The rendered page (owned; *text and *rows point into it): *text its
 * whole text, *rows from its sandwich table's heading on.  Fails the
 * calling test when the page shows no text, reports an error or has no
 * table; skips it without node, the package or Chromium. */
json_t *speedscope_sandwich(const char *file, const char **text, const char **rows);

#endif
