/* test_export_flamegraph.c - the flame graph SVG, opened by headless
 * Chromium: well-formed (no parse error page), its script runs without
 * errors, every frame's title names the function, file:line, samples and
 * share of the fixed snapshot, a hostile name is escaped, clicking a frame
 * zooms to it and the search box highlights matches. */
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

static char *dir, *svg, *url;

static void setup(void)
{
	struct snapshot s = fix_snapshot();

	dir = h_tmpdir();
	svg = ec_write(dir, "p.svg", EXPORT_FLAMEGRAPH, &s);
	cr_assert(asprintf(&url, "file://%s", svg) > 0);
	snapshot_free(&s);
}

static void teardown(void)
{
	h_rmtree(dir);
	free(dir);
	free(svg);
	free(url);
}

TestSuite(flamegraph, .init = setup, .fini = teardown, .timeout = 120);

static bool has_title(json_t *page, const char *title)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(page, "titles"), i, t)
		if (strcmp(json_string_value(t), title) == 0)
			return true;
	return false;
}

static void note_json(const char *what, json_t *j)
{
	char *text = json_dumps(j, 0);

	h_note("%s: %s", what, text);
	free(text);
}

static void expect_clean(json_t *page)
{
	json_t *errors = json_object_get(page, "errors");
	const char *text = json_string_value(json_object_get(page, "text"));

	cr_expect_eq(json_array_size(errors), 0, "the page reported errors: %s",
	             json_dumps(errors, 0));
	cr_expect(text == NULL || strstr(text, "error on line") == NULL,
	          "Chromium could not parse the SVG: %s", text);
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(page, "attrs"),
	                                                   "data-pytop-ready")), "1",
	                 "the script did not run to its end");
}

Test(flamegraph, titles_carry_the_counts)
{
	json_t *page = ec_browser_render(url, "", "", "");

	expect_clean(page);
	note_json("titles", json_object_get(page, "titles"));
	cr_expect(has_title(page, "all\n110 samples (100.00%)"));
	cr_expect(has_title(page, "main (app.py:10)\n107 samples (97.27%)"));
	cr_expect(has_title(page, "work;er\\x0ax<&\"> (app.py:20)\n90 samples (81.82%)"),
	          "the hostile name is not escaped as expected");
	cr_expect(has_title(page, "leaf (lib.py:5)\n80 samples (72.73%)"));
	cr_expect(has_title(page, "leaf (lib.py:5)\n7 samples (6.36%)"));
	cr_expect(has_title(page, "[other stacks]\n3 samples (2.73%)"));
	json_decref(page);
}

/* The search box highlights the frames that match and says their share;
 * then, after a click on the work frame, the frame spans the whole width
 * and its callers below it too; the leaf it did not call is hidden.  (One
 * browser for both: each start costs seconds.) */
Test(flamegraph, search_highlights_and_click_zooms)
{
	static const char expr[] =
		"(function () {"
		"  var box = document.getElementById('search');"
		"  box.value = 'leaf';"
		"  box.dispatchEvent(new Event('input'));"
		"  var found = { matched: document.getElementById('matched').textContent,"
		"                hits: document.querySelectorAll('g.f.match').length };"
		"  var gs = Array.from(document.querySelectorAll('g.f'));"
		"  var by = function (s) { return gs.filter(function (g) {"
		"    return g.querySelector('title').textContent.indexOf(s) === 0; }); };"
		"  by('work')[0].dispatchEvent(new MouseEvent('click'));"
		"  var w = function (g) { return +g.querySelector('rect').getAttribute('width'); };"
		"  return { search: found, work: w(by('work')[0]), main: w(by('main')[0]),"
		"           deepLeaf: w(by('leaf (lib.py:5)\\n80')[0]),"
		"           shallowLeaf: by('leaf (lib.py:5)\\n7')[0].style.display };"
		"})()";
	json_t *page = ec_browser_render(url, "", "", expr), *r, *found;

	expect_clean(page);
	r = json_object_get(page, "eval");
	found = json_object_get(r, "search");
	note_json("search, then the click", r);
	cr_expect_eq(json_integer_value(json_object_get(found, "hits")), 2);
	/* 87 of 110 samples ran leaf. */
	cr_expect_str_eq(json_string_value(json_object_get(found, "matched")),
	                 "Matched: 79.09%");
	cr_expect_gt(json_number_value(json_object_get(r, "work")), 1170);
	cr_expect_gt(json_number_value(json_object_get(r, "main")), 1170);
	/* 80 of work's 90 samples. */
	cr_expect_float_eq(json_number_value(json_object_get(r, "deepLeaf")),
	                   1180.0 * 80 / 90 - 0.5, 0.01);
	cr_expect_str_eq(json_string_value(json_object_get(r, "shallowLeaf")), "none");
	json_decref(page);
}

Test(flamegraph, ten_thousand_stacks_in_time)
{
	struct snapshot s = fix_many_stacks(10000);
	double t0 = h_now(), took;
	char *path = ec_write(dir, "many.svg", EXPORT_FLAMEGRAPH, &s);

	took = h_now() - t0;
	h_note("flamegraph: 10000 stacks written in %.1f ms", took * 1e3);
	cr_expect_lt(took, 1.0, "%.3f s for 10000 stacks", took);
	free(path);
	snapshot_free(&s);
}

/* A stack table whose node 2 (main) claims a later node as its parent (a
 * cycle 2 -> 4 -> 3 -> 2, as a corrupt file could hold): the frames on it
 * are left out, the rest written, and the writer ends. */
Test(flamegraph, a_node_out_of_order_is_left_out)
{
	struct snapshot s = fix_snapshot();
	char *path, *text;

	s.stack_nodes[2].parent = 4;
	path = ec_write(dir, "cycle.svg", EXPORT_FLAMEGRAPH, &s);
	text = h_read_file(path);
	cr_assert_not_null(text);
	cr_expect_null(strstr(text, "<title>main"), "a frame of the cycle was drawn");
	cr_expect_not_null(strstr(text, "<title>[other stacks]\n3 samples (100.00%)"),
	                   "%.2000s", text);
	cr_expect_not_null(strstr(text, "</svg>"));
	free(text);
	free(path);
	snapshot_free(&s);
}
