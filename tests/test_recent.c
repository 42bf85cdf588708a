/* test_recent.c - the "last N seconds" view (profile/recent.h, the w key):
 * its counts are exactly the difference of the cumulative counts at the
 * window's two ends, it starts again when the counts do, it holds at most
 * a minute of history, and the table's title says which view it is. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "headless.h"
#include "profile/recent.h"
#include "snapshot_builder.h"
#include "../ui/keys.h"
#include "../ui/tui_state.h"

/* Function "old" ran 100 samples a second for the first 30 s, then
 * stopped; "new" ran 100 a second from 30 s on.  Cumulative counts at t. */
static struct snapshot history_at(double t)
{
	double old_s = t < 30 ? t : 30, new_s = t > 30 ? t - 30 : 0;
	uint64_t old_n = (uint64_t)(100 * old_s), new_n = (uint64_t)(100 * new_s);
	struct snapshot s = sb_snapshot(7, "python3 svc.py", "3.11.7",
	                                old_n + new_n);
	struct snap_func *f = sb_funcs(&s, 2);
	struct snap_line *l = sb_lines(&s, 2);

	s.elapsed_s = t;
	f[0] = (struct snap_func){ .name = "old", .file = "/srv/svc.py", .line = 3,
	        .c = { .own = old_n, .total = old_n, .own_s = old_s,
	               .split = { .python = (double)old_n } } };
	f[1] = (struct snap_func){ .name = "new", .file = "/srv/svc.py", .line = 9,
	        .c = { .own = new_n, .total = new_n, .own_s = new_s,
	               .split = { .python = (double)new_n } } };
	l[0] = (struct snap_line){ .name = "old", .file = "/srv/svc.py", .line = 4,
	                           .c = f[0].c };
	l[1] = (struct snap_line){ .name = "new", .file = "/srv/svc.py", .line = 10,
	                           .c = f[1].c };
	s.split.python = (double)(old_n + new_n);
	return s;
}

Test(recent, last_n_seconds_are_exact_differences)
{
	struct recent *r = recent_new();
	struct snapshot s;
	double span;

	cr_assert_not_null(r);
	/* Refreshes every second (-d 1), one a little early. */
	for (double t = 1; t < 40; t += 1) {
		s = history_at(t == 20 ? 19.95 : t);
		cr_assert(recent_push(r, &s));
		snapshot_free(&s);
	}
	s = history_at(40);
	cr_assert(recent_push(r, &s));
	span = recent_window(r, &s, 10);
	cr_assert_float_eq(span, 10.0, 1e-9);
	/* The last 10 s: "new" only, 1000 samples; "old" none.  The
	 * health line's sample count stays since start. */
	cr_assert_eq(s.recent_samples, 1000);
	cr_assert_eq(s.samples, 4000);
	cr_assert_eq(s.funcs[0].c.own, 0, "old: %lu", (unsigned long)s.funcs[0].c.own);
	cr_assert_eq(s.funcs[1].c.own, 1000);
	cr_assert_eq(s.funcs[1].c.total, 1000);
	cr_assert_float_eq(s.funcs[1].c.own_s, 10.0, 1e-9);
	cr_assert_float_eq(s.funcs[1].c.split.python, 1000.0, 1e-9);
	cr_assert_eq(s.lines[1].c.own, 1000);
	cr_assert_eq(s.lines[0].c.own, 0);
	cr_assert_float_eq(s.split.python, 1000.0, 1e-9);
	snapshot_free(&s);
	/* The last 30 s: 20 s of "old", 10 of "new". */
	s = history_at(40);
	span = recent_window(r, &s, 30);
	cr_assert_float_eq(span, 30.0, 1e-9);
	cr_assert_eq(s.funcs[0].c.own, 2000);
	cr_assert_eq(s.funcs[1].c.own, 1000);
	snapshot_free(&s);
	recent_free(r);
}

Test(recent, shorter_history_says_its_span_and_counts_start_again)
{
	struct recent *r = recent_new();
	struct snapshot s;
	double span;

	s = history_at(2);
	recent_push(r, &s);
	/* The snapshot pushed first has nothing before it. */
	span = recent_window(r, &s, 10); /* once: it changes s */
	cr_assert_float_eq(span, 0.0, 1e-9);
	cr_assert_eq(s.samples, 200);
	snapshot_free(&s);
	s = history_at(6);
	recent_push(r, &s);
	span = recent_window(r, &s, 10); /* once: it changes s */
	cr_assert_float_eq(span, 4.0, 1e-9);
	cr_assert_eq(s.funcs[0].c.own, 400, "%lu", (unsigned long)s.funcs[0].c.own);
	snapshot_free(&s);
	/* r: the counts start again at 6.5 s (fewer samples than before);
	 * nothing from before the reset is subtracted. */
	s = history_at(6.5);
	s.samples = 50;
	s.funcs[0].c.own = 50;
	recent_push(r, &s);
	span = recent_window(r, &s, 10); /* once: it changes s */
	cr_assert_float_eq(span, 0.0, 1e-9);
	cr_assert_eq(s.funcs[0].c.own, 50);
	snapshot_free(&s);
	/* A thread filter starts the counts again too. */
	s = history_at(8);
	s.thread_filter = 77;
	recent_push(r, &s);
	span = recent_window(r, &s, 10); /* once: it changes s */
	cr_assert_float_eq(span, 0.0, 1e-9);
	snapshot_free(&s);
	recent_free(r);
}

Test(recent, at_most_a_minute_of_history)
{
	struct recent *r = recent_new();
	struct snapshot s;

	/* An hour of refreshes every 0.25 s. */
	for (double t = 0.25; t <= 3600; t += 0.25) {
		s = history_at(t);
		recent_push(r, &s);
		snapshot_free(&s);
	}
	/* Asked for more than a minute: the oldest kept frame is a minute
	 * (and less than one step more) old. */
	s = history_at(3600.25);
	recent_push(r, &s);
	double span = recent_window(r, &s, 3600);

	cr_assert_geq(span, RECENT_MAX_S, "%f", span);
	cr_assert_lt(span, RECENT_MAX_S + 2 * RECENT_STEP_S, "%f", span);
	snapshot_free(&s);
	recent_free(r);
}

/* ---- on screen ----------------------------------------------------------- */

TestSuite(recent_view, .init = headless_up, .fini = headless_down);

Test(recent_view, title_says_since_start_or_the_window)
{
	struct tui_state st;
	struct snapshot s = history_at(40);

	headless_start(&st, &s, true);
	cr_assert(strncmp(headless_row(0), "Functions since start, % of 4,000 ", 34) == 0,
	          "%s", headless_row(0));
	/* w asks the source for the last 10 s. */
	cr_assert(keys_handle(&st, 'w') & REACT_WINDOW);
	cr_assert_float_eq(st.window_s, 10.0, 1e-9);
	s = history_at(40);
	s.recent_asked = 10;
	s.recent_s = 10;
	s.recent_samples = 1000;
	s.funcs[0].c = (struct snap_counts){ 0 }; /* "old": none in the window */
	s.funcs[1].c.own = s.funcs[1].c.total = 1000;
	tui_show(&st, &s);
	headless_draw(&st);
	/* 100 % is the window's samples; a row without any is left out. */
	cr_assert(strncmp(headless_row(2), "100.0 ", 6) == 0, "%s", headless_row(2));
	cr_assert_eq(st.fs.table.n, 1);
	cr_assert(strncmp(headless_row(0), "Functions over the last 10 s, % of 1,000 ",
	                  41) == 0, "%s", headless_row(0));
	s = history_at(4);
	s.recent_asked = 10;
	s.recent_s = 3;
	tui_show(&st, &s);
	headless_draw(&st);
	cr_assert(strncmp(headless_row(0), "Functions over the last 3 s (of 10)", 35) == 0,
	          "%s", headless_row(0));
	/* w again: 30, 60, then since start. */
	keys_handle(&st, 'w');
	keys_handle(&st, 'w');
	cr_assert_float_eq(st.window_s, 60.0, 1e-9);
	keys_handle(&st, 'w');
	cr_assert_float_eq(st.window_s, 0.0, 1e-9);
	headless_stop(&st);
}
