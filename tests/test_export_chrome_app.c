/* test_export_chrome_app.c - the chrome export of a recording, loaded by
 * a real consumer: the speedscope app (its npm package, from local files,
 * in headless Chromium) imports Chrome's Trace Event Format.  A recorded
 * two-thread program (main_loop -> leaf on the main thread, worker_spin
 * on a thread named spinner) is exported with --format chrome and given
 * to the app's file input as a user would; the rendered sandwich table
 * must name the program's functions, with the main thread's self time
 * in leaf, not in the callers above it, and no import error on the page.
 * The format's own rules and the counters' truth are checked in
 * test_export_chrome. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "speedscope_page.h"

/* A recording of tests/workloads/chrome_pair.py exported as a chrome trace; its path, owned. */
static char *chrome_trace(const char *dir)
{
	char *work = h_workload("chrome_pair.py"), *file = h_path(dir, "run.pytop");
	char *trace = h_path(dir, "trace.json");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *rec[] = { h_pytop(), "record", "-o", file, "--", py, work, NULL };
	const char *exp[] = { h_pytop(), "export", file, "--format", "chrome", "-o", trace,
	                      NULL };
	struct h_proc p, e;
	cr_assert(h_run(&p, 30, rec) && p.status == 0, "pytop record: %s", p.err.data);
	cr_assert(h_run(&e, 30, exp) && e.status == 0, "pytop export: %s", e.err.data);
	h_proc_free(&p);
	h_proc_free(&e);
	free(work);
	free(file);
	return trace;
}

Test(export_chrome_app, speedscope_imports_the_trace, .timeout = 120)
{
	char *dir = h_tmpdir(), *trace;
	json_t *page;
	const char *text, *rows;

	trace = chrome_trace(dir);
	page = speedscope_sandwich(trace, &text, &rows);
	cr_expect_null(strstr(text, "Unrecognized format"), "%s", text);
	cr_expect(strstr(rows, "main_loop") != NULL || strstr(rows, "worker_spin") != NULL,
	          "neither thread's function is in the table:\n%s", rows);
	/* The table is by self time: the main thread's time is spent in leaf
	 * (its generator expression), never in <module> above it.  A caller
	 * met after its callee with the same times would be nested inside it
	 * and take its time as its own. */
	if (strstr(rows, "main_loop") != NULL)
		cr_expect(strstr(rows, "leaf") != NULL && strstr(rows, "<module>") != NULL &&
		          strstr(rows, "leaf") < strstr(rows, "<module>"),
		          "the hottest self time is not leaf's:\n%s", rows);
	json_decref(page);
	h_rmtree(dir);
	free(trace);
	free(dir);
}
