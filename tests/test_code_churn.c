/* test_code_churn.c - bounded tables and output under code churn, end to
 * end: pytop -b --json at 1 kHz launches tests/workloads/code_churn.py,
 * which compiles about a thousand functions a second, each with a name
 * and a file name never seen before, runs each for under a millisecond
 * and drops it.  Within CHURN_S seconds that is several thousand sampled
 * functions, more than the aggregator keeps (2048 function rows), so
 * idle ones must be folded into "[other]".
 *
 * Every JSON line must stay under 256 KB with at most 520 functions and
 * 270 lines plus one "[other]" entry, own must still add up to samples
 * (the folded share is in "[other]"), and by the end the aggregator must
 * have folded rows (functions_folded, lines_folded), all counted in
 * "[other]".
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define CHURN_S "12"        /* pytop's --duration */
#define MAX_LINE_BYTES (256 * 1024)
/* JSON_MAX_FUNCS, JSON_MAX_LINES, each plus at most 20 by total and
 * one "[other]" */
#define MAX_FUNCS (500 + 20 + 1)
#define MAX_LINES (250 + 20 + 1)
#define TIMEOUT_S 40.0

/* The "[other]" entry of rows, or NULL. */
static json_t *other_entry(json_t *rows)
{
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
		if (strcmp(json_string_value(json_object_get(r, "name")), "[other]") == 0 &&
		    strcmp(json_string_value(json_object_get(r, "kind")), "other") == 0)
			return r;
	return NULL;
}

static double own_sum(json_t *rows)
{
	size_t i;
	json_t *r;
	double sum = 0;
	json_array_foreach(rows, i, r)
		sum += h_num(r, "own");
	return sum;
}

/* Every line: bounded size and rows, own adding up to samples, "[other]"
 * within samples. */
static void check_line(const char *line, size_t len, json_t *snap, int n)
{
	const char *kinds[] = { "functions", "lines" };
	const size_t max[] = { MAX_FUNCS, MAX_LINES };
	double samples = h_num(snap, "samples");
	cr_expect_lt(len, MAX_LINE_BYTES, "line %d: %zu bytes", n, len);
	(void)line;
	for (int k = 0; k < 2; k++) {
		json_t *rows = json_object_get(snap, kinds[k]);
		cr_assert(json_is_array(rows), "line %d: no %s", n, kinds[k]);
		cr_expect_leq(json_array_size(rows), max[k], "line %d: %zu %s",
		              n, json_array_size(rows), kinds[k]);
		cr_expect_eq(own_sum(rows), samples, "line %d: %s own %.0f of %.0f samples",
		             n, kinds[k], own_sum(rows), samples);
		json_t *o = other_entry(rows);
		if (o != NULL)
			cr_expect_leq(h_num(o, "total"), samples, "line %d: %s [other]", n,
			              kinds[k]);
	}
}

Test(code_churn, tables_and_json_stay_bounded, .timeout = 60)
{
	const char *python = h_need_python(H_PY_DEBIAN);
	char *workload = h_workload("code_churn.py");
	const char *argv[] = { h_pytop(), "-b", "--json", "-r", "1000", "-d", "1",
	                       "--duration", CHURN_S, "--", python, "-S", "-B",
	                       workload, "--rate", "1000", "--work-ms", "0.8",
	                       NULL };
	struct h_proc p;
	h_run(&p, TIMEOUT_S, argv);
	cr_assert(p.exited && !p.timed_out, "pytop did not finish: %s", p.err.data);
	/* A sanitizer build reports there, and pytop prints nothing else
	 * but its own one-line errors ("pytop: ..."). */
	cr_expect(p.err.data == NULL || (strstr(p.err.data, "Sanitizer") == NULL &&
	                                 strstr(p.err.data, "runtime error") == NULL &&
	                                 strstr(p.err.data, "pytop:") == NULL),
	          "stderr: %s", p.err.data);
	int bad = 0;
	json_t *snaps = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(snaps, "JSON line %d unreadable; stderr: %s", bad, p.err.data);
	cr_assert_geq(json_array_size(snaps), 8, "%zu snapshots", json_array_size(snaps));

	const char *line = p.out.data;
	size_t i;
	json_t *snap;
	json_array_foreach(snaps, i, snap) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		check_line(line, len, snap, (int)i + 1);
		line = end ? end + 1 : line + len;
	}

	json_t *last = json_array_get(snaps, json_array_size(snaps) - 1);
	double ff = h_num(last, "functions_folded"), lf = h_num(last, "lines_folded");
	json_t *of = other_entry(json_object_get(last, "functions"));
	json_t *ol = other_entry(json_object_get(last, "lines"));
	h_note("code churn: %.0f samples, %.0f errors, %.0f functions and %.0f lines "
	       "folded; [other] own %.0f of functions, %.0f of lines",
	       h_num(last, "samples"), h_num(last, "errors"), ff, lf,
	       of ? h_num(of, "own") : -1, ol ? h_num(ol, "own") : -1);
	cr_expect_gt(ff, 0, "no function row folded");
	cr_expect_gt(lf, 0, "no line row folded");
	cr_assert_not_null(of, "no [other] function");
	cr_assert_not_null(ol, "no [other] line");
	cr_expect_gt(h_num(of, "own"), 0, "[other] function carries no samples");
	cr_expect_gt(h_num(ol, "own"), 0, "[other] line carries no samples");
	cr_expect_geq(h_num(of, "rows"), ff, "[other] holds fewer functions than folded");
	cr_expect_geq(h_num(ol, "rows"), lf, "[other] holds fewer lines than folded");
	json_decref(snaps);
	h_proc_free(&p);
	free(workload);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
