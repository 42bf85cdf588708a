/* test_export_pprof.c - the pprof export, read by its consumer: go tool
 * pprof (Debian golang-go) decodes the gzipped profile.proto, and its
 * -top -lines table, its totals per sample type (samples, cpu, the split)
 * and its thread / process tags are the fixed snapshot's. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_consumers.h"
#include "export_fixture.h"
#include "harness.h"

static char *dir, *profile;

static void setup(void)
{
	struct snapshot s = fix_snapshot();

	dir = h_tmpdir();
	profile = ec_write(dir, "p.pb.gz", EXPORT_PPROF, &s);
	snapshot_free(&s);
}

static void teardown(void)
{
	h_rmtree(dir);
	free(dir);
	free(profile);
}

TestSuite(pprof, .init = setup, .fini = teardown, .timeout = 120);

/* Owned: go tool pprof's stdout for these options on the profile. */
static char *pprof(const char *opt1, const char *opt2)
{
	const char *argv[] = { "go", "tool", "pprof", opt1, opt2, profile, NULL };
	struct h_proc p;
	char *out;

	h_need_program("go");
	if (opt2 == NULL) {
		argv[4] = profile;
		argv[5] = NULL;
	}
	cr_assert(h_run(&p, 90, argv), "go tool pprof did not finish");
	cr_assert_eq(p.status, 0, "go tool pprof cannot read the export: %s", p.err.data);
	out = strdup(p.out.data ? p.out.data : "");
	h_proc_free(&p);
	return out;
}

/* The flat value of the -top row whose entry is `entry`, -1 if none. */
static double flat_of(const char *top, const char *entry)
{
	char *copy = strdup(top), *save = NULL;
	double v = -1;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		double flat, cum;
		char e[256];

		if (sscanf(l, " %lf %*f%% %*f%% %lf %*f%% %255[^\n]", &flat, &cum, e) == 3 &&
		    strcmp(e, entry) == 0)
			v = flat;
	}
	free(copy);
	return v;
}

Test(pprof, top_lines_are_the_snapshots)
{
	char *top = pprof("-top", "-lines");

	h_note("go tool pprof -top -lines:\n%s", top);
	cr_expect_not_null(strstr(top, "Type: samples"), "%s", top);
	cr_expect_not_null(strstr(top, "of 110 total"), "%s", top);
	cr_expect_eq(flat_of(top, "leaf lib.py:5"), 87, "%s", top);
	cr_expect_eq(flat_of(top, "main app.py:10"), 10, "%s", top);
	cr_expect_eq(flat_of(top, "[other stacks]"), 3, "%s", top);
	free(top);
}

Test(pprof, cpu_time_and_its_split)
{
	char *cpu = pprof("-top", "-sample_index=cpu");
	char *py = pprof("-top", "-sample_index=python");
	char *nat = pprof("-top", "-sample_index=native");

	cr_expect_not_null(strstr(cpu, "of 110ms total"), "%s", cpu);
	/* Thread 11's deep stack: 40 of its 50 samples Python, 10 native. */
	cr_expect_not_null(strstr(py, "of 40ms total"), "%s", py);
	cr_expect_not_null(strstr(nat, "of 10ms total"), "%s", nat);
	free(cpu);
	free(py);
	free(nat);
}

Test(pprof, thread_and_process_labels)
{
	char *tags = pprof("-tags", NULL);

	h_note("go tool pprof -tags:\n%s", tags);
	/* thread 11: 50 + 10 + 3 + 10; thread 21: 30 + 7. */
	cr_expect_not_null(strstr(tags, "thread"), "%s", tags);
	cr_expect_not_null(strstr(tags, "process"), "%s", tags);
	cr_expect_not_null(strstr(tags, "73.0 (66.36%): 11"), "%s", tags);
	cr_expect_not_null(strstr(tags, "37.0 (33.64%): 21"), "%s", tags);
	free(tags);
}

Test(pprof, ten_thousand_stacks_in_time)
{
	struct snapshot s = fix_many_stacks(10000);
	double t0 = h_now(), took;
	char *path = ec_write(dir, "many.pb.gz", EXPORT_PPROF, &s);

	took = h_now() - t0;
	h_note("pprof: 10000 stacks written in %.1f ms", took * 1e3);
	cr_expect_lt(took, 1.0, "%.3f s for 10000 stacks", took);
	free(path);
	snapshot_free(&s);
}
