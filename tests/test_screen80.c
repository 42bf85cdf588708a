/* test_screen80.c - what the screen keeps at 80x24, the default ssh
 * window (issue 11 item 6): the function name before its directories,
 * F for whole names and paths, the warning that the rate is not held as
 * the last thing the health line gives up, and one word per meaning for
 * Python threads and OS threads. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/header.h"
#include "../ui/keys.h"
#include "../ui/text.h"
#include "../ui/tui_state.h"

#define LONG_DIR "/home/user/projects/etl/src/pipeline/"

/* The functions of the report: long names in a deep directory. */
static struct snapshot pipeline_snapshot(void)
{
	static const struct { const char *name, *file; int line; uint64_t own; }
	fns[] = {
		{ "generate_values", LONG_DIR "pipeline_loop.py", 26, 600 },
		{ "generate_reports", LONG_DIR "pipeline_loop.py", 40, 300 },
		{ "_call_with_frames_removed", "<frozen importlib._bootstrap>",
		  233, 100 },
	};
	struct snapshot s = sb_snapshot(4242, "python3 pipeline.py", "3.11.7",
	                                1000);
	struct snap_func *f = sb_funcs(&s, 3);
	struct snap_line *l = sb_lines(&s, 3);

	s.elapsed_s = 20;
	s.window_s = 1;
	s.rate_hz = 998;
	s.requested_hz = 1000;
	for (size_t i = 0; i < 3; i++) {
		struct snap_counts c = { .own = fns[i].own, .total = fns[i].own };

		f[i] = (struct snap_func){ .name = fns[i].name,
		                           .file = fns[i].file,
		                           .line = fns[i].line, .c = c };
		l[i] = (struct snap_line){ .name = fns[i].name,
		                           .file = fns[i].file,
		                           .line = fns[i].line + 1, .c = c };
	}
	return s;
}

/* The row of the screen whose text contains needle, or NULL. */
static const char *row_with(const char *needle)
{
	for (int y = 0; y < 24; y++)
		if (strstr(headless_row(y), needle) != NULL)
			return headless_row(y);
	return NULL;
}

TestSuite(names, .init = headless_up, .fini = headless_down);

Test(names, function_name_whole_directories_cut_first_at_80)
{
	struct tui_state st;
	struct snapshot s = pipeline_snapshot();
	const char *r;

	headless_start(&st, &s, true);
	/* Two functions of one file told apart: both names whole, with
	 * their file's base name and line. */
	/* Two functions of one file told apart: both names whole (32
	 * columns for the cell), the directories gone, then the start of
	 * the base name. */
	r = row_with("generate_values (");
	cr_assert_not_null(r, "generate_values cut:\n%s", headless_row(2));
	cr_assert_not_null(strstr(r, "generate_values (\u2026line_loop.py:26)"),
	                   "%s", r);
	cr_assert_not_null(row_with("generate_reports (\u2026ine_loop.py:40)"),
	                   "%s", headless_row(3));
	/* A name too long to keep whole beside its file keeps its start
	 * and leaves the file at least eight columns. */
	r = row_with("_call_with_fram");
	cr_assert_not_null(r, "%s", headless_row(4));
	cr_assert_not_null(strstr(r, "\u2026 (\u2026tstrap>:233)"), "%s", r);
	cr_assert_leq(text_width(r, true), 80);
	headless_stop(&st);
}

Test(names, F_shows_whole_paths_and_again_fits_them)
{
	struct tui_state st;
	struct snapshot s = pipeline_snapshot();

	headless_start(&st, &s, true);
	cr_assert_null(row_with(LONG_DIR), "the directories fit at 80 columns?");
	keys_handle(&st, 'F');
	headless_draw(&st);
	cr_assert_not_null(row_with("generate_values (" LONG_DIR
	                            "pipeline_loop.py:26)"), "%s",
	                   headless_row(2));
	/* The figure columns give way but for %Own. */
	cr_assert_not_null(strstr(headless_row(1), "%Own"), "%s", headless_row(1));
	cr_assert_null(strstr(headless_row(1), "%Total"), "%s", headless_row(1));
	keys_handle(&st, 'F');
	headless_draw(&st);
	cr_assert_null(row_with(LONG_DIR), "F again: %s", headless_row(2));
	cr_assert_not_null(strstr(headless_row(1), "%Total"), "%s", headless_row(1));
	headless_stop(&st);
}

/* ---- the health line ---------------------------------------------------- */

TestSuite(health, .init = headless_utf8_locale);

/* 10 kHz asked, 4.3 kHz got, as in the report. */
static struct snapshot slow_snapshot(void)
{
	struct snapshot s = pipeline_snapshot();

	s.samples = 97004;
	s.rate_hz = 4309;
	s.requested_hz = 10000;
	s.errors = 500; /* shown: it competes for the room */
	s.dropped = 200;
	s.threads_running = 1;
	s.threads_total = 3;
	s.gil_held_pct = 92;
	s.active_pct = 99;
	s.pytop_cpu_pct = 12.5;
	return s;
}

Test(health, rate_not_held_stays_at_80_and_100_columns)
{
	static const int widths[] = { 100, 80, 60, 40 };
	struct snapshot s = slow_snapshot();
	char l[3][HEADER_LINE_MAX], all[3 * HEADER_LINE_MAX];

	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		int n = header_health(&s, widths[i], true, l, 2);

		all[0] = '\0';
		for (int k = 0; k < n; k++) {
			cr_assert_leq(text_width(l[k], true), widths[i]);
			strcat(all, l[k]);
			strcat(all, "\n");
		}
		cr_assert_not_null(strstr(all, "rate not held"),
		                   "%d columns: %s", widths[i], all);
		cr_assert_not_null(strstr(all, "4309/s of 10000"),
		                   "%d columns: %s", widths[i], all);
	}
	/* The rate held: no warning. */
	s.rate_hz = 9990;
	header_health(&s, 80, true, l, 2);
	cr_assert_null(strstr(l[0], "not held"), "%s", l[0]);
	snapshot_free(&s);
}

Test(health, python_threads_and_os_threads_have_their_own_words)
{
	struct snapshot s = slow_snapshot();
	struct gauge_history h;
	char l[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX], all[8 * HEADER_LINE_MAX];
	int n;

	memset(&h, 0, sizeof h);
	s.rate_hz = 9990;
	s.errors = s.dropped = 0;
	s.gauges = (struct snap_gauges){ .valid = true, .threads = 7,
	                                 .cpu_user_pct = 10 };
	n = header_tui(&s, &h, 80, 24, true, l);
	all[0] = '\0';
	for (int k = 0; k < n; k++) {
		strcat(all, l[k]);
		strcat(all, "\n");
	}
	cr_assert_not_null(strstr(all, "Py threads 1/3"), "%s", all);
	cr_assert_not_null(strstr(all, "OS threads 7"), "%s", all);
	/* "threads" never stands alone for either. */
	for (const char *p = all; (p = strstr(p, "threads")) != NULL; p++)
		cr_assert(p - all >= 3 && (strncmp(p - 3, "Py ", 3) == 0 ||
		                           strncmp(p - 3, "OS ", 3) == 0),
		          "a bare \"threads\": %s", all);
	snapshot_free(&s);
}
