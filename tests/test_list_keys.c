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

static void expect_at(size_t sel, size_t top, int moved)
{
	cr_expect_eq(probe.pos.sel, sel, "bar on %zu, not %zu", probe.pos.sel,
	             sel);
	cr_expect_eq(probe.pos.top, top, "page from %zu, not %zu",
	             probe.pos.top, top);
	cr_expect_eq(probe.moved, moved, "told %d times, not %d", probe.moved,
	             moved);
}

TestSuite(list_keys, .init = headless_up, .fini = headless_down);

Test(list_keys, every_table_key_moves_the_bar_over_the_rows)
{
	struct tui_state st;

	start(&st, 30);
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_UP));
	expect_at(1, 0, 3);
	keys_handle(&st, K(KEY_NPAGE));
	expect_at(10, 1, 4); /* 9 rows: one of overlap */
	keys_handle(&st, K(KEY_NPAGE));
	expect_at(19, 10, 5);
	keys_handle(&st, K(KEY_PPAGE));
	expect_at(10, 10, 6);
	keys_handle(&st, K(KEY_END));
	expect_at(29, 20, 7);
	keys_handle(&st, K(KEY_DOWN)); /* the last row already */
	expect_at(29, 20, 8);
	keys_handle(&st, K(KEY_HOME));
	expect_at(0, 0, 9);
	headless_stop(&st);
}

Test(list_keys, no_rows_nothing_moves_and_nobody_is_told)
{
	struct tui_state st;

	start(&st, 0);
	keys_handle(&st, K(KEY_DOWN));
	keys_handle(&st, K(KEY_NPAGE));
	keys_handle(&st, K(KEY_END));
	keys_handle(&st, K(KEY_HOME));
	expect_at(0, 0, 0);
	headless_stop(&st);
}
