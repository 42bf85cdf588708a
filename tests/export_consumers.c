/* export_consumers.c - see export_consumers.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_consumers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define NPM_FIX "run scripts/quickstart.sh test (it installs it with npm into tests/.npm)"

static const char *srcdir(void)
{
	const char *d = getenv("PYTOP_SRCDIR");

	return d != NULL ? d : PYTOP_SRCDIR;
}

char *ec_write(const char *dir, const char *name, enum export_format f,
               const struct snapshot *s)
{
	char *path = h_path(dir, name);
	FILE *out = fopen(path, "w");
	struct export_meta m;

	cr_assert_not_null(out, "cannot create %s", path);
	export_meta_of(s, &m);
	cr_assert_eq(export_write(out, f, s, &m), 0, "export %s failed",
	             export_format_name(f));
	cr_assert_eq(fclose(out), 0);
	return path;
}

char *ec_npm_package(const char *package)
{
	char *path = NULL;

	if (asprintf(&path, "%s/tests/.npm/node_modules/%s", srcdir(), package) < 0)
		cr_assert_fail("out of memory");
	if (access(path, R_OK) != 0)
		cr_skip_test("the npm package %s is not installed in %s/tests/.npm; %s",
		             package, srcdir(), NPM_FIX);
	return path;
}

char *ec_node(const char *script, const char *const args[], int *status,
              char **err)
{
	const char *argv[16];
	char *script_path = NULL, *modules = NULL, *out;
	struct h_proc p;
	size_t n = 0;

	h_need_program("node");
	if (asprintf(&script_path, "%s/tests/scripts/%s", srcdir(), script) < 0 ||
	    asprintf(&modules, "%s/tests/.npm/node_modules", srcdir()) < 0)
		cr_assert_fail("out of memory");
	setenv("NODE_PATH", modules, 1);
	argv[n++] = "node";
	argv[n++] = script_path;
	for (size_t i = 0; args[i] != NULL && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert(h_run(&p, 90, argv), "node %s did not finish in time: %s",
	          script, p.err.data ? p.err.data : "");
	*status = p.status;
	out = strdup(p.out.data ? p.out.data : "");
	if (err != NULL)
		*err = strdup(p.err.data ? p.err.data : "");
	h_proc_free(&p);
	free(script_path);
	free(modules);
	return out;
}

json_t *ec_browser_render(const char *url, const char *keys, const char *file,
                          const char *expr)
{
	const char *args[] = { url, keys, file, expr, NULL };
	char *pkg, *out, *err;
	json_t *j;
	int status;

	h_need_program("chromium");
	pkg = ec_npm_package("puppeteer-core");
	free(pkg);
	out = ec_node("browser_render.js", args, &status, &err);
	cr_assert_eq(status, 0, "headless Chromium could not render %s: %s", url, err);
	j = json_loads(out, 0, NULL);
	cr_assert_not_null(j, "browser_render.js printed no JSON: %s", out);
	free(out);
	free(err);
	return j;
}
