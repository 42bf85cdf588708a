/* test_hostile_names.c - names no profiler should print raw, on the oldest
 * and the newest CPython: a function named with control characters, one
 * defined in a file whose name is not UTF-8, and one with a 10 000-
 * character name, each burning a measured share of one thread's CPU
 * (workloads/hostile_name_shares.py).
 *
 * Each must be shown, escaped (\x1b, \xe9, "…[+9000 chars]") in JSON and
 * in batch text, with its own share within SHARE_TOLERANCE_PP of the
 * workload's measure and the error share at most MAX_ERROR_PCT: the
 * samples are kept, not counted as errors.  The JSON errors_by_kind lists
 * every kind and sums to errors, here and under code churn (churn.py),
 * where some samples are really torn.
 *
 * The tolerances are test_live's: a strange name must cost no accuracy. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SHARE_TOLERANCE_PP 3.0
#define MAX_ERROR_PCT 2.0
#define ERROR_KINDS 7

static const char *const KINDS[ERROR_KINDS] = {
	"thread_state", "stack_memory", "torn_frame", "too_deep",
	"code_object", "string", "code_changed",
};

/* What pytop must show for each function of the workload. */
struct shown {
	const char *key;   /* the truth's name for it */
	char name[1100];
	char file_end[64]; /* the end of its file name */
};

static void expected_names(struct shown s[3])
{
	s[0] = (struct shown){ .key = "ctl", .name = "ctl\\x1b[2J\\x07name",
	                       .file_end = "hostile_shares_ctl.py" };
	s[1] = (struct shown){ .key = "long", .file_end = "hostile_shares_long.py" };
	s[1].name[0] = 'L';
	memset(s[1].name + 1, 'x', 999);
	snprintf(s[1].name + 1000, sizeof s[1].name - 1000, "\xe2\x80\xa6[+9000 chars]");
	s[2] = (struct shown){ .key = "latin1", .name = "in_bad_file",
	                       .file_end = "/hostile_\\xe9\\xff.py" };
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);
	return n >= m && strcmp(s + n - m, end) == 0;
}

/* The function row named `name` whose file ends with file_end. */
static json_t *row(json_t *snap, const char *name, const char *file_end)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(snap, "functions"), i, r) {
		const char *n = json_string_value(json_object_get(r, "name"));
		const char *f = json_string_value(json_object_get(r, "file"));
		if (n && f && strcmp(n, name) == 0 && ends_with(f, file_end))
			return r;
	}
	return NULL;
}

/* errors_by_kind: every kind, integers, summing to errors. */
static void check_kinds(json_t *snap, const char *what)
{
	json_t *kinds = json_object_get(snap, "errors_by_kind");
	double sum = 0;
	char list[256] = "";
	size_t pos = 0;

	cr_assert(json_is_object(kinds), "%s: no errors_by_kind object", what);
	cr_assert_eq(json_object_size(kinds), ERROR_KINDS, "%s: errors_by_kind has %zu kinds",
	             what, json_object_size(kinds));
	for (int k = 0; k < ERROR_KINDS; k++) {
		json_t *v = json_object_get(kinds, KINDS[k]);
		cr_assert(json_is_integer(v) && json_integer_value(v) >= 0,
		          "%s: errors_by_kind.%s missing or not a count", what, KINDS[k]);
		sum += (double)json_integer_value(v);
		if (json_integer_value(v) > 0 && pos < sizeof list)
			pos += (size_t)snprintf(list + pos, sizeof list - pos, " %s %lld",
			                        KINDS[k], (long long)json_integer_value(v));
	}
	h_note("%s: %.0f errors of %.0f samples:%s\n", what, h_num(snap, "errors"),
	       h_num(snap, "samples"), list);
	cr_assert_eq(sum, h_num(snap, "errors"), "%s: errors_by_kind sums to %.0f, errors %.0f",
	             what, sum, h_num(snap, "errors"));
}

/* Runs pytop on the workload in launch mode; returns the last snapshot
 * (owned by *lines) and fills *truth. */
static json_t *run_json(const char *python, const char *dir, json_t **lines, json_t **truth)
{
	char *truth_path = h_path(dir, "truth.json"), *ready = h_path(dir, "ready");
	char *wl = h_workload("hostile_name_shares.py");
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.5", "-r", "1000", "--",
	                      python, wl, "--seconds", "3", "--dir", dir,
	                      "--truth", truth_path, "--ready-file", ready, NULL};
	struct h_proc p;
	int bad = 0;

	cr_assert(h_run(&p, 40, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exit status %d: %s", p.status, p.err.data);
	/* jansson refuses a line that is not valid UTF-8. */
	*lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(*lines, "line %d of pytop's output is not JSON (or not UTF-8)", bad);
	*truth = h_json_file(truth_path);
	cr_assert_not_null(*truth, "the workload wrote no truth");
	h_proc_free(&p);
	free(truth_path);
	free(ready);
	free(wl);
	return json_array_get(*lines, json_array_size(*lines) - 1);
}

static void shares(const char *slot)
{
	char *python = h_need_python_slot(slot), *dir = h_tmpdir();
	json_t *lines, *truth, *last = run_json(python, dir, &lines, &truth);
	double samples = h_num(last, "samples"), errors = h_num(last, "errors");
	double wall = h_num(truth, "wall"), unsampled = h_unsampled_pct(last);
	struct shown want[3];
	char what[64], file_end[4200];

	snprintf(what, sizeof what, "names %s %s", slot,
	         json_string_value(json_object_get(truth, "python")));
	cr_assert_gt(samples, 0, "%s: no samples", what);
	cr_assert_gt(wall, 0, "%s: truth has no wall time", what);
	expected_names(want);
	/* The file with the non-UTF-8 name is the one in dir, whole. */
	snprintf(file_end, sizeof file_end, "%s%s", dir, want[2].file_end);
	for (int i = 0; i < 3; i++) {
		double truth_pct = 100.0 * h_num(json_object_get(json_object_get(truth,
		                   "functions"), want[i].key), "seconds") / wall;
		json_t *r = row(last, want[i].name, i == 2 ? file_end : want[i].file_end);
		double got = r ? 100.0 * h_num(r, "own") / samples : 0;

		h_note("accuracy: %s: %-6s truth %5.1f%%  pytop %5.1f%%  diff %+.1f pp "
		       "(%.1f%% of the ticks missed)\n", what, want[i].key, truth_pct, got,
		       got - truth_pct, unsampled);
		cr_expect_not_null(r, "%s: no row named %.60s%s in %s", what, want[i].name,
		                   strlen(want[i].name) > 60 ? "..." : "",
		                   i == 2 ? file_end : want[i].file_end);
		/* The truth is wall time: allow for the ticks pytop says it
		 * missed (h_unsampled_pct; a CI run: ctl 43.5 % against 47.7 %,
		 * the other two over by as much). */
		cr_expect(r == NULL || fabs(got - truth_pct) <= SHARE_TOLERANCE_PP + unsampled,
		          "%s: %s own share %.1f%%, truth %.1f%% (within %.1f pp)", what,
		          want[i].key, got, truth_pct, SHARE_TOLERANCE_PP + unsampled);
	}
	cr_expect_leq(100.0 * errors / (errors + samples), MAX_ERROR_PCT,
	              "%s: %.0f errors of %.0f samples", what, errors, errors + samples);
	check_kinds(last, what);
	json_decref(lines);
	json_decref(truth);
	h_rmtree(dir);
	free(dir);
	free(python);
}

/* Batch text prints the names escaped too, and no control byte at all. */
static void batch_text(const char *slot)
{
	char *python = h_need_python_slot(slot), *dir = h_tmpdir();
	char *wl = h_workload("hostile_name_shares.py"), *ready = h_path(dir, "ready");
	const char *argv[] = {h_pytop(), "-b", "-d", "0.7", "-r", "1000", "--", python, wl,
	                      "--seconds", "1.5", "--dir", dir, "--ready-file", ready, NULL};
	struct shown want[3];
	char needle[4300];
	struct h_proc p;

	cr_assert(h_run(&p, 40, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exit status %d: %s", p.status, p.err.data);
	expected_names(want);
	for (int i = 0; i < 3; i++) {
		snprintf(needle, sizeof needle, "%s (%s%s:", want[i].name, i == 2 ? dir : "",
		         want[i].file_end);
		cr_expect_not_null(strstr(p.out.data, needle), "%s: batch text lacks \"%.80s\"",
		                   slot, needle);
	}
	for (const unsigned char *c = (const unsigned char *)p.out.data; *c; c++)
		cr_assert(*c >= 0x20 || *c == '\n', "%s: control byte 0x%02x in batch text", slot, *c);
	h_proc_free(&p);
	h_rmtree(dir);
	free(dir);
	free(ready);
	free(wl);
	free(python);
}

/* Under code churn some samples are really torn: they are counted, and by
 * kind. */
static void churn_kinds(const char *slot)
{
	char *python = h_need_python_slot(slot), *dir = h_tmpdir();
	char *wl = h_workload("churn.py"), *ready = h_path(dir, "ready");
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.5", "-r", "1000", "--",
	                      python, wl, "--seconds", "2", "--ready-file", ready, NULL};
	struct h_proc p;
	int bad = 0;
	char what[64];

	cr_assert(h_run(&p, 40, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exit status %d: %s", p.status, p.err.data);
	json_t *lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(lines, "line %d of pytop's output is not JSON", bad);
	snprintf(what, sizeof what, "churn %s", slot);
	for (size_t i = 0; i < json_array_size(lines); i++)
		check_kinds(json_array_get(lines, i), what);
	json_decref(lines);
	h_proc_free(&p);
	h_rmtree(dir);
	free(dir);
	free(ready);
	free(wl);
	free(python);
}

#define OLDEST_AND_NEWEST(fn, name)                                              \
	Test(hostile_names, name##_py311_debian, .timeout = 90) { fn("py311_debian"); } \
	Test(hostile_names, name##_py315_sid, .timeout = 90) { fn("py315_sid"); }

OLDEST_AND_NEWEST(shares, shown_escaped_with_their_shares)
OLDEST_AND_NEWEST(batch_text, batch_text_escaped)
OLDEST_AND_NEWEST(churn_kinds, churn_errors_by_kind)

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
