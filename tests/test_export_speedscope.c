/* test_export_speedscope.c - the speedscope export, checked by its
 * consumer: valid against the schema speedscope's npm package ships, and
 * loaded by the speedscope app itself (from local files, in headless
 * Chromium), whose rendered page names the hottest frame and reports no
 * import error; plus its structure (frames shared, one profile per
 * thread, stacks outermost first) and the time a 10k-stack export takes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_consumers.h"
#include "export_fixture.h"
#include "harness.h"
#include "speedscope_page.h"

static char *dir;

static void setup(void)
{
	dir = h_tmpdir();
}

static void teardown(void)
{
	h_rmtree(dir);
	free(dir);
}

TestSuite(speedscope, .init = setup, .fini = teardown, .timeout = 120);

Test(speedscope, one_profile_per_thread_frames_shared)
{
	struct snapshot s = fix_snapshot();
	char *path = ec_write(dir, "p.speedscope.json", EXPORT_SPEEDSCOPE, &s);
	json_t *j = h_json_file(path), *profiles, *p0, *stack;
	double sum = 0;
	size_t i;
	json_t *w;

	cr_assert_not_null(j, "not JSON");
	cr_expect_eq(json_array_size(json_object_get(json_object_get(j, "shared"),
	                                             "frames")), 4);
	profiles = json_object_get(j, "profiles");
	cr_assert_eq(json_array_size(profiles), 2, "two threads, two profiles");
	p0 = json_array_get(profiles, 0);
	cr_expect_str_eq(json_string_value(json_object_get(p0, "name")),
	                 "process 10 thread 11");
	json_array_foreach(json_object_get(p0, "weights"), i, w)
		sum += json_number_value(w);
	/* Thread 11: 50 + 10 + 3 + 10 ms. */
	cr_expect_float_eq(sum, 0.073, 1e-9, "weights %f", sum);
	cr_expect_float_eq(json_number_value(json_object_get(p0, "endValue")), 0.073, 1e-9);
	/* Its deepest stack, outermost first: main (1), work (2), leaf (3). */
	stack = NULL;
	json_array_foreach(json_object_get(p0, "samples"), i, w)
		if (json_array_size(w) == 3)
			stack = w;
	cr_assert_not_null(stack);
	cr_expect_eq(json_integer_value(json_array_get(stack, 0)), 1);
	cr_expect_eq(json_integer_value(json_array_get(stack, 2)), 3);
	json_decref(j);
	free(path);
	snapshot_free(&s);
}

Test(speedscope, valid_against_the_shipped_schema)
{
	struct snapshot s = fix_snapshot();
	char *path = ec_write(dir, "p.speedscope.json", EXPORT_SPEEDSCOPE, &s);
	char *pkg = ec_npm_package("speedscope"), *schema = h_path(pkg, "dist/release/file-format-schema.json");
	char *ajv = ec_npm_package("ajv"), *out, *err;
	const char *args[] = { path, schema, NULL };
	int status;

	out = ec_node("speedscope_validate.js", args, &status, &err);
	cr_expect_eq(status, 0, "not valid against %s:\n%s", schema, err);
	free(out);
	free(err);
	free(ajv);
	free(schema);
	free(pkg);
	free(path);
	snapshot_free(&s);
}

Test(speedscope, the_app_loads_it_and_names_the_hottest_frame)
{
	struct snapshot s = fix_snapshot();
	char *path = ec_write(dir, "p.speedscope.json", EXPORT_SPEEDSCOPE, &s);
	json_t *page;
	const char *text, *rows;

	page = speedscope_sandwich(path, &text, &rows);
	cr_expect_not_null(strstr(text, "process 10 thread 11 (1/2)"),
	                   "the threads are not its profiles:\n%s", text);
	/* Thread 11's hottest frame, leaf (50 ms own), heads the table. */
	cr_expect_not_null(strstr(rows, "50.00ms"), "%s", rows);
	cr_expect(strstr(rows, "leaf") != NULL &&
	          (strstr(rows, "main") == NULL || strstr(rows, "leaf") < strstr(rows, "main")),
	          "leaf is not the first row:\n%s", rows);
	json_decref(page);
	free(path);
	snapshot_free(&s);
}

Test(speedscope, ten_thousand_stacks_in_time)
{
	struct snapshot s = fix_many_stacks(10000);
	char *path;
	double t0 = h_now(), took;

	path = ec_write(dir, "many.speedscope.json", EXPORT_SPEEDSCOPE, &s);
	took = h_now() - t0;
	h_note("speedscope: 10000 stacks written in %.1f ms", took * 1e3);
	/* The views' thread writes it between two refreshes (1 s). */
	cr_expect_lt(took, 1.0, "%.3f s for 10000 stacks", took);
	free(path);
	snapshot_free(&s);
}
