/* test_final_figures.c - a launched program's final figures are the
 * kernel's, not those of pytop's last refresh.
 *
 * The program (workloads/ramp_exit.py) writes 600 MiB, one MiB at a time,
 * until just before pytop's second refresh, tells what the kernel says of
 * it (its own ru_maxrss, VmHWM, page faults) and exits.  pytop's last
 * refresh saw about half of that; its final snapshot must carry the peak
 * (within 3 % of the program's own high-water mark) and every page fault
 * the program counted, in every one of five runs (the exit's timing
 * against the refresh varies; a figure right by luck must not pass).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#define RUNS 5
#define RAMP_MIB "600"
#define EXIT_AT_S "0.95" /* refreshes every 0.5 s: just before the second */
#define PEAK_TOLERANCE 0.03
/* Faults the program takes after its own count: writing its report and
 * exiting (a few pages, not the thousands of a late refresh). */
#define FAULT_SLACK 200

static json_t *last_snapshot(const char *out)
{
	int bad = 0;
	json_t *lines = h_json_lines(out, &bad);

	cr_assert_not_null(lines, "pytop's JSON line %d does not parse", bad);
	cr_assert_gt(json_array_size(lines), 0, "no snapshot printed");
	json_t *last = json_incref(json_array_get(lines, json_array_size(lines) - 1));

	json_decref(lines);
	return last;
}

static void one_run(const char *py, const char *dir, int run)
{
	char *report = h_path(dir, "report.json");
	char *script = h_workload("ramp_exit.py");
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "0.5", "--", py, script,
	                       report, RAMP_MIB, EXIT_AT_S, NULL };
	struct h_proc p;

	remove(report);
	cr_assert(h_run(&p, 30, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit %d: %s", p.status, p.err.data);
	json_t *own = h_json_file(report);
	cr_assert_not_null(own, "the program wrote no report: %s", p.err.data);
	json_t *snap = last_snapshot(p.out.data), *g = json_object_get(snap, "gauges");
	double hwm = h_num(own, "vm_hwm") > h_num(own, "ru_maxrss") ? h_num(own, "vm_hwm")
	                                                             : h_num(own, "ru_maxrss");
	double peak = h_num(g, "rss_peak"), minflt = h_num(g, "minflt");

	h_note("run %d: peak %.1f MiB of the program's %.1f MiB; minflt %.0f of its %.0f",
	       run, peak / 1048576, hwm / 1048576, minflt, h_num(own, "minflt"));
	cr_expect_geq(peak, hwm * (1 - PEAK_TOLERANCE), "run %d: peak %.0f B, the program "
	              "reached %.0f B", run, peak, hwm);
	cr_expect_leq(peak, hwm * (1 + PEAK_TOLERANCE), "run %d: peak %.0f B, the program "
	              "reached only %.0f B", run, peak, hwm);
	cr_expect_geq(minflt, h_num(own, "minflt"), "run %d: %.0f minor faults, the program "
	              "counted %.0f", run, minflt, h_num(own, "minflt"));
	cr_expect_leq(minflt, h_num(own, "minflt") + FAULT_SLACK, "run %d: %.0f minor faults, "
	              "the program counted only %.0f", run, minflt, h_num(own, "minflt"));
	cr_expect_geq(h_num(g, "majflt"), h_num(own, "majflt"), "run %d: major faults", run);
	json_decref(snap);
	json_decref(own);
	h_proc_free(&p);
	free(script);
	free(report);
}

Test(final_figures, launch_peak_and_faults_py311_system)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *dir = h_tmpdir();

	for (int run = 1; run <= RUNS; run++)
		one_run(py, dir, run);
	h_rmtree(dir);
	free(dir);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
