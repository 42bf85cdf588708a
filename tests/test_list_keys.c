/* test_list_keys.c - the table keys move every list screen the same way
 * (ui/keys.c through a screen's list and moved ops, ui/table_view.c's
 * list_pos_step): a list the keys have never heard of gets Up, Down,
 * PgUp, PgDn (a page less one row of overlap), Home and End over its
 * rows, the bar kept on the page, and is told after each move, never
 * when it has no rows to move over. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/keys.h"
#include "../ui/screen.h"
#include "../ui/table_view.h"
#include "../ui/tui_state.h"

#define K(k) CRT_KEYCODE(k)

/* The probe list: its bar over nrows rows, and how often it was told. */
static struct {
	struct list_pos pos;
	size_t nrows;
	int moved;
} probe;

static void probe_draw(struct tui_state *st, const struct crt *crt, int y,
                       int h, const char *status)
{
	(void)st, (void)crt, (void)y, (void)h, (void)status;
}

static struct list_pos *probe_list(struct tui_state *st, size_t *nrows)
{
	(void)st;
	*nrows = probe.nrows;
	return &probe.pos;
}

static void probe_moved(struct tui_state *st)
{
	(void)st;
	probe.moved++;
}

static const struct screen_ops probe_ops = {
	.name = "probe list",
	.draw = probe_draw,
	.list = probe_list,
	.moved = probe_moved,
};

/* A page of 10 rows on screen, as the last draw left it. */
static void start(struct tui_state *st, size_t nrows)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 10);

	memset(&probe, 0, sizeof probe);
	probe.nrows = nrows;
	probe.pos.page = 10;
	headless_start(st, &s, true);
	st->view = &probe_ops;
}

/* A table key, and where the bar and the page's first row are after it:
 * the screen told once more each time. */
struct step {
	int key;
	size_t sel, top;
};

static void run_steps(struct tui_state *st, const struct step *steps,
                      size_t n, size_t nrows)
{
	for (size_t i = 0; i < n; i++) {
		keys_handle(st, K(steps[i].key));
		cr_expect_eq(probe.pos.sel, steps[i].sel, "step %zu: bar on %zu, "
		             "not %zu", i, probe.pos.sel, steps[i].sel);
		cr_expect_eq(probe.pos.top, steps[i].top, "step %zu: page from "
		             "%zu, not %zu", i, probe.pos.top, steps[i].top);
		cr_expect_eq(probe.moved, nrows > 0 ? (int)i + 1 : 0,
		             "step %zu: told %d times", i, probe.moved);
	}
}

TestSuite(list_keys, .init = headless_up, .fini = headless_down);

Test(list_keys, every_table_key_moves_the_bar_over_the_rows)
{
	static const struct step steps[] = {
		{ KEY_DOWN, 1, 0 }, { KEY_DOWN, 2, 0 }, { KEY_UP, 1, 0 },
		/* 9 rows a page: one of overlap */
		{ KEY_NPAGE, 10, 1 }, { KEY_NPAGE, 19, 10 }, { KEY_PPAGE, 10, 10 },
		{ KEY_END, 29, 20 }, { KEY_DOWN, 29, 20 }, { KEY_HOME, 0, 0 },
	};
	struct tui_state st;

	start(&st, 30);
	run_steps(&st, steps, sizeof steps / sizeof steps[0], 30);
	headless_stop(&st);
}

Test(list_keys, no_rows_nothing_moves_and_nobody_is_told)
{
	static const struct step steps[] = {
		{ KEY_DOWN, 0, 0 }, { KEY_NPAGE, 0, 0 }, { KEY_END, 0, 0 },
		{ KEY_HOME, 0, 0 },
	};
	struct tui_state st;

	start(&st, 0);
	run_steps(&st, steps, sizeof steps / sizeof steps[0], 0);
	headless_stop(&st);
}
