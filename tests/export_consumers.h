/* export_consumers.h - the real programs that read pytop's exports, run
 * from the tests: node with the npm packages scripts/quickstart.sh puts
 * in $PYTOP_SRCDIR/tests/.npm (speedscope, ajv, puppeteer-core), headless
 * Chromium, go tool pprof.  Each skips the calling test, saying what is
 * missing and how to get it, when its program is not installed. */
#ifndef PYTOP_TESTS_EXPORT_CONSUMERS_H
#define PYTOP_TESTS_EXPORT_CONSUMERS_H

#include <jansson.h>

#include "profile/snapshot.h"
#include "../ui/export.h"

/* Write s in format f to dir/name; owned path. */
char *ec_write(const char *dir, const char *name, enum export_format f,
               const struct snapshot *s);

/* Owned: $PYTOP_SRCDIR/tests/.npm/node_modules/<package>; skips when
 * absent. */
char *ec_npm_package(const char *package);

/* Run `node script args...` (NODE_PATH set); stdout owned, *status its exit
 * status; stderr into *err (owned) when given. */
char *ec_node(const char *script, const char *const args[], int *status,
              char **err);

/* Open url in headless Chromium (tests/scripts/browser_render.js): give
 * file to its file input when not "", press keys, evaluate the
 * JavaScript expr when not ""; the rendered page as {text, titles,
 * attrs, eval, errors}.  Skips without chromium. */
json_t *ec_browser_render(const char *url, const char *keys, const char *file,
                          const char *expr);

#endif
