/* test_screen_ops.c - the TUI's one screen interface (ui/screen.h): the
 * table keys and the frame reach the screen on display only through its
 * operations, so a screen the keys have never heard of gets them all;
 * every screen is listed once in tui_screens and has what the loop needs;
 * the TUI state owns the snapshot and every screen borrows it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/help_screen.h"
#include "../ui/keys.h"
#include "../ui/screen.h"
#include "../ui/tui_draw.h"
#include "../ui/tui_state.h"

/* ---- a screen nobody else knows ----------------------------------------- */

/* What the probe screen's operations were asked. */
static struct {
	long moved;          /* sum of move_by deltas */
	int pages, homes, ends, sorts, selects, draws;
	char filter[64];
	int draw_y, draw_h;
	char status[64];
} probe;

static void probe_move(struct tui_state *st, long delta)
{
	(void)st;
	probe.moved += delta;
}

static void probe_page(struct tui_state *st, int dir)
{
	(void)st;
	probe.pages += dir;
}

static void probe_home(struct tui_state *st)
{
	(void)st;
	probe.homes++;
}

static void probe_end(struct tui_state *st)
{
	(void)st;
	probe.ends++;
}

static void probe_sort(struct tui_state *st, int dir)
{
	(void)st;
	probe.sorts += dir > 0 ? 10 : 1; /* next counts in tens */
}

static unsigned probe_select(struct tui_state *st)
{
	(void)st;
	probe.selects++;
	return REACT_REDRAW | REACT_REFRESH;
}

static const char *probe_filter(const struct tui_state *st)
{
	(void)st;
	return probe.filter;
}

static void probe_set_filter(struct tui_state *st, const char *text)
{
	(void)st;
	snprintf(probe.filter, sizeof probe.filter, "%s", text);
}

static void probe_draw(struct tui_state *st, const struct crt *crt, int y,
                       int h, const char *status)
{
	(void)st;
	probe.draws++;
	probe.draw_y = y;
	probe.draw_h = h;
	snprintf(probe.status, sizeof probe.status, "%s", status);
	crt_put(crt, y, 0, CRT_NORMAL, "probe screen");
}

static size_t probe_legend(const struct tui_state *st,
                           struct legend_item *out, size_t max)
{
	static const struct legend_item mine[] = { { "x", "Probe" } };

	(void)st;
	return legend_copy(out, max, mine, 1);
}

static const char *const probe_help[] = { "Probe  a column", NULL };

static const struct screen_ops probe_ops = {
	.name = "probe",
	.draw = probe_draw,
	.move_by = probe_move,
	.page = probe_page,
	.home = probe_home,
	.end = probe_end,
	.sort = probe_sort,
	.select = probe_select,
	.filter = probe_filter,
	.set_filter = probe_set_filter,
	.legend = probe_legend,
	.legend_reset = true,
	.column_help = probe_help,
};

static void start(struct tui_state *st)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 10);

	memset(&probe, 0, sizeof probe);
	headless_start(st, &s, true);
	st->view = &probe_ops;
}

static void feed(struct tui_state *st, const char *keys)
{
	for (; *keys != '\0'; keys++)
		keys_handle(st, (unsigned char)*keys);
}

TestSuite(screen_ops, .init = headless_up, .fini = headless_down);

Test(screen_ops, a_new_screen_gets_every_table_key_through_its_ops)
{
	struct tui_state st;

	start(&st);
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	keys_handle(&st, CRT_KEYCODE(KEY_DOWN));
	keys_handle(&st, CRT_KEYCODE(KEY_UP));
	cr_assert_eq(probe.moved, 1);
	keys_handle(&st, CRT_KEYCODE(KEY_NPAGE));
	keys_handle(&st, CRT_KEYCODE(KEY_NPAGE));
	keys_handle(&st, CRT_KEYCODE(KEY_PPAGE));
	cr_assert_eq(probe.pages, 1);
	keys_handle(&st, CRT_KEYCODE(KEY_HOME));
	keys_handle(&st, CRT_KEYCODE(KEY_END));
	keys_handle(&st, CRT_KEYCODE(KEY_END));
	cr_assert_eq(probe.homes, 1);
	cr_assert_eq(probe.ends, 2);
	feed(&st, "><<");
	cr_assert_eq(probe.sorts, 12);
	cr_assert_eq(keys_handle(&st, '\r'), REACT_REDRAW | REACT_REFRESH);
	cr_assert_eq(probe.selects, 1);
	feed(&st, "/io\r");
	cr_assert_str_eq(probe.filter, "io");
	/* The prompt starts from the screen's own filter. */
	keys_handle(&st, '/');
	cr_assert_str_eq(st.prompt.text, "io");
	keys_handle(&st, 27);
	/* None of it reached the functions screen. */
	cr_assert_str_eq(st.fs.filter, "");
	cr_assert_eq(st.fs.pos.sel, 0);
	headless_stop(&st);
}

Test(screen_ops, the_frame_and_the_legend_come_from_the_screen)
{
	struct tui_state st;
	struct legend_item legend[16];
	size_t n;
	bool filter = false, sort = false, own = false, reset = false;

	start(&st);
	st.paused = true;
	headless_draw(&st);
	cr_assert_eq(probe.draws, 1);
	cr_assert_eq(probe.draw_y, 0);
	cr_assert_eq(probe.draw_h, LINES - 1);
	cr_assert_str_eq(probe.status, "[paused]");
	cr_assert_str_eq(headless_row(0), "probe screen");
	n = keys_legend(&st, legend, 16);
	for (size_t i = 0; i < n; i++) {
		filter |= strcmp(legend[i].label, "Filter") == 0;
		sort |= strcmp(legend[i].label, "Sort") == 0;
		own |= strcmp(legend[i].label, "Probe") == 0;
		reset |= strcmp(legend[i].label, "Reset") == 0;
	}
	cr_assert(filter && sort && own && reset);
	/* Help covers it with its column help, and any key gives it back. */
	keys_handle(&st, 'h');
	cr_assert_eq(st.view, &help_screen_ops);
	headless_draw(&st);
	cr_assert_eq(probe.draws, 1);
	cr_assert_str_eq(headless_row(18), "  Probe  a column");
	cr_assert_eq(keys_handle(&st, 'x'), REACT_REDRAW);
	cr_assert_eq(st.view, &probe_ops);
	headless_stop(&st);
}

/* ---- the screens pytop has ---------------------------------------------- */

Test(screen_ops, every_screen_is_listed_once_with_what_the_loop_needs)
{
	const struct screen_ops *const known[] = {
		&functions_screen_ops, &threads_screen_ops, &lines_screen_ops,
		&processes_screen_ops, &help_screen_ops, &tree_screen_ops,
		&flame_screen_ops,
	};

	cr_assert_eq(tui_nscreens, sizeof known / sizeof known[0]);
	for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
		size_t found = 0;

		for (size_t i = 0; i < tui_nscreens; i++)
			found += tui_screens[i] == known[k];
		cr_assert_eq(found, 1, "%s", known[k]->name);
	}
	for (size_t i = 0; i < tui_nscreens; i++) {
		const struct screen_ops *s = tui_screens[i];

		cr_assert_not_null(s->name);
		cr_assert_not_null(s->draw, "%s", s->name);
		if (s->full_screen) {
			cr_assert_not_null(s->key, "%s: nothing closes it",
			                   s->name);
			continue;
		}
		cr_assert(s->init != NULL && s->free != NULL && s->sync != NULL,
		          "%s", s->name);
		/* A list the keys move, or a selection it moves itself. */
		cr_assert(s->list != NULL ||
		          (s->move_by != NULL && s->page != NULL &&
		           s->home != NULL && s->end != NULL), "%s", s->name);
		cr_assert((s->filter == NULL) == (s->set_filter == NULL),
		          "%s", s->name);
		cr_assert_not_null(s->legend, "%s", s->name);
		cr_assert_not_null(s->column_help, "%s", s->name);
	}
}

Test(screen_ops, the_state_owns_the_snapshot_and_every_screen_borrows_it)
{
	struct tui_state st;
	struct snapshot s;
	static const struct snap_thread two[] = {
		{ .tid = 1, .name = "a", .samples = 5 },
		{ .tid = 2, .name = "b", .samples = 3 },
	};

	s = sb_snapshot(4242, "python3 app.py", "3.12.1", 10);
	sb_set_threads(&s, two, 1);
	headless_start(&st, &s, true);
	cr_assert_null(s.threads, "the state took the snapshot's arrays");
	cr_assert_eq(tui_snapshot(&st), &st.snap);
	cr_assert_eq(st.fs.snap, &st.snap);
	cr_assert_eq(st.ts.snap, &st.snap);
	cr_assert_eq(st.ps.snap, &st.snap);
	cr_assert_eq(st.ts.table.n, 1);
	/* A new snapshot: every screen's rows are rebuilt from it before
	 * any key or draw reads them. */
	s = sb_snapshot(4242, "python3 app.py", "3.12.1", 20);
	sb_set_threads(&s, two, 2);
	tui_show(&st, &s);
	cr_assert_eq(st.shown, 2);
	cr_assert_eq(st.ts.table.n, 2);
	cr_assert_eq(st.fs.synced, 2);
	cr_assert_eq(st.ts.synced, 2);
	cr_assert_eq(st.ps.synced, 2);
	headless_stop(&st);
}
