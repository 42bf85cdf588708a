/* test_deep_stacks.c - a stack deeper than the frame limit (2048 frames a
 * sample, REC_MAX_PY_FRAMES) on the oldest and the newest CPython: a
 * 5000-frame recursion spinning at its bottom (tests/workloads/
 * hostile_deep.py).
 *
 *   - profile: the outermost functions (<module>, outermost) keep a Total
 *     of at least 90 % over the steady part of the run (the snapshots
 *     after the stack got deep: start-up imports have other stacks), and
 *     a "[N more frames]" row stands for the frames left out, with N no
 *     larger than the true count and no smaller than 90 % of it (rows
 *     round N down to two significant digits); deep_stacks_cut counts
 *     the samples.  Before the marker, the stack was cut at its 2048
 *     innermost frames and <module>'s Total was about 0.1 %.
 *   - pytop dump: the thread's frames shown plus the marker's exact N add
 *     up to the stack's true depth, and its outermost frame is <module>.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define DEPTH 5000
/* Python frames of the workload at its bottom: <module>, outermost,
 * recurse DEPTH - 2 times, spin. */
#define TRUE_FRAMES (DEPTH + 1)
#define FRAME_LIMIT 2048 /* REC_MAX_PY_FRAMES: frames one sample carries */
#define MIN_TOTAL_PCT 90.0

/* The marker row of snap (the one with most total samples), its N in *n. */
static json_t *marker_row(json_t *snap, long *n)
{
	json_t *best = NULL, *r;
	size_t i;
	json_array_foreach(json_object_get(snap, "functions"), i, r) {
		const char *name = json_string_value(json_object_get(r, "name"));
		long v;
		char tail[32];
		if (name == NULL || sscanf(name, "[%ld%31[^]]", &v, tail) != 2 ||
		    (strcmp(tail, " more frames") != 0 && strcmp(tail, "+ more frames") != 0))
			continue;
		if (best == NULL || h_num(r, "total") > h_num(best, "total")) {
			best = r;
			*n = v;
		}
	}
	return best;
}

/* (total at b - total at a) / (samples at b - samples at a), in %. */
static double window_total_pct(json_t *a, json_t *b, json_t *ra, json_t *rb)
{
	double ds = h_num(b, "samples") - h_num(a, "samples");
	double dt = (rb ? h_num(rb, "total") : 0) - (ra ? h_num(ra, "total") : 0);
	return ds > 0 ? 100.0 * dt / ds : 0;
}

static void deep_profile(const char *slot)
{
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("hostile_deep.py");
	char depth[16];
	struct h_proc p;
	snprintf(depth, sizeof depth, "%d", DEPTH);
	const char *argv[] = {h_pytop(), "-b", "--json", "-d", "0.5", "--duration", "4",
	                      "--", python, wl, "60", depth, NULL};
	cr_assert(h_run(&p, 40, argv), "pytop did not end: %s", p.err.data);
	int bad = 0;
	json_t *snaps = h_json_lines(p.out.data ? p.out.data : "", &bad);
	cr_assert_not_null(snaps, "line %d is not JSON", bad);
	size_t n = json_array_size(snaps), first = n;
	for (size_t i = 0; i < n && first == n; i++)
		if (h_num(json_array_get(snaps, i), "deep_stacks_cut") > 0 ||
		    h_func_in(json_array_get(snaps, i), "spin", wl) != NULL)
			first = i;
	cr_assert_lt(first + 1, n, "no two snapshots with the deep stack (of %zu)", n);
	json_t *a = json_array_get(snaps, first), *b = json_array_get(snaps, n - 1);
	double window = h_num(b, "samples") - h_num(a, "samples");
	cr_assert_gt(window, 100, "only %.0f samples after the stack got deep", window);

	const char *outer[] = {"<module>", "outermost"};
	for (size_t i = 0; i < 2; i++) {
		double pct = window_total_pct(a, b, h_func_in(a, outer[i], wl),
		                              h_func_in(b, outer[i], wl));
		h_note("deep %s: %s total %.1f%% over %.0f samples", slot, outer[i], pct, window);
		cr_expect_geq(pct, MIN_TOTAL_PCT, "%s: %s total %.1f%%", slot, outer[i], pct);
	}
	long na = 0, nb = 0;
	json_t *ma = marker_row(a, &na), *mb = marker_row(b, &nb);
	cr_assert_not_null(mb, "%s: no \"[N more frames]\" row", slot);
	double mpct = window_total_pct(a, b, ma && na == nb ? ma : NULL, mb);
	long truth = TRUE_FRAMES - (FRAME_LIMIT - 1); /* one of the 2048 is the marker */
	h_note("deep %s: \"%s\" total %.1f%%, true count %ld; deep_stacks_cut %.0f of %.0f "
	       "samples; sample_work_us %.1f", slot,
	       json_string_value(json_object_get(mb, "name")), mpct, truth,
	       h_num(b, "deep_stacks_cut"), h_num(b, "samples"), h_num(b, "sample_work_us"));
	cr_expect_geq(mpct, MIN_TOTAL_PCT, "%s: the marker's total %.1f%%", slot, mpct);
	cr_expect(nb <= truth && nb >= 0.9 * truth, "%s: marker N %ld, true %ld", slot, nb,
	          truth);
	double cut = h_num(b, "deep_stacks_cut") - h_num(a, "deep_stacks_cut");
	cr_expect_geq(cut, MIN_TOTAL_PCT / 100 * window, "%s: deep_stacks_cut grew by %.0f "
	              "of %.0f samples", slot, cut, window);
	json_decref(snaps);
	h_proc_free(&p);
	free(wl);
	free(python);
}

/* The lines of `text` starting with four blanks and a non-blank: the
 * frames of pytop dump's text (sources and locals are indented more). */
static int dump_frames(const char *text, const char **outermost)
{
	int n = 0;
	for (const char *l = text; l != NULL && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, "    ", 4) == 0 && l[4] != ' ' && l[4] != '\n') {
			if (n++ == 0)
				*outermost = l + 4;
		}
	return n;
}

static void deep_dump(const char *slot)
{
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("hostile_deep.py");
	char depth[16], pid[16];
	struct h_proc target, d = {0};
	snprintf(depth, sizeof depth, "%d", DEPTH);
	const char *targv[] = {python, wl, "30", depth, NULL};
	cr_assert(h_proc_start(&target, targv));
	snprintf(pid, sizeof pid, "%d", (int)target.pid);
	const char *dargv[] = {h_pytop(), "dump", "-p", pid, NULL};
	/* Until the recursion reached its bottom. */
	bool deep = false;
	for (double end = h_now() + 15; !deep && h_now() < end; h_sleep(0.2)) {
		h_proc_free(&d);
		cr_assert(h_run(&d, 20, dargv), "pytop dump did not end");
		deep = d.status == 0 && strstr(d.out.data ? d.out.data : "", "spin (") != NULL;
	}
	cr_assert(deep, "%s: never dumped the stack at its bottom: %s%s", slot,
	          d.out.data ? d.out.data : "", d.err.data ? d.err.data : "");
	const char *out = d.out.data, *marker = strstr(out, "    ["), *outermost = "";
	long n = 0;
	cr_assert_not_null(marker, "%s: no marker frame in the dump:\n%.2000s", slot, out);
	cr_assert_eq(sscanf(marker, "    [%ld more frames]", &n), 1, "%.80s", marker);
	int shown = dump_frames(out, &outermost) - 1; /* the marker is no frame */
	h_note("deep dump %s: %d frames shown + [%ld more frames] = %ld, true %d", slot, shown,
	       n, shown + n, TRUE_FRAMES);
	cr_expect_eq(shown + n, TRUE_FRAMES, "%s: %d shown + %ld left out", slot, shown, n);
	cr_expect_eq(strncmp(outermost, "<module> (", 10), 0, "%s: outermost frame %.60s",
	             slot, outermost);
	cr_expect_not_null(strstr(out, "middle frames left out"), "%s: no word of the cut",
	                   slot);
	h_proc_free(&d);
	h_proc_free(&target);
	free(wl);
	free(python);
}

#define BOTH_PYTHONS(fn, name)                                                 \
	Test(deep_stacks, name##_py311_debian, .timeout = 90) { fn("py311_debian"); } \
	Test(deep_stacks, name##_py315_sid, .timeout = 90) { fn("py315_sid"); }

BOTH_PYTHONS(deep_profile, outermost_total_and_marker)
BOTH_PYTHONS(deep_dump, dump_marker_counts_the_rest)

/* One case at a time: each spins a CPU, and sample_work_us is noted. */
int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
