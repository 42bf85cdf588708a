/* test_replay_bar.c - the replay's time bar row, headless: it never takes
 * more columns than it is given (80, 200, 30), the position and the
 * window's cells fall where their times are on the recording's extent,
 * the labels say the position and the window, ASCII without UTF-8
 * (TERM=vt100) and box drawing with it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "ui/replay_bar.h"
#include "ui/text.h"

static const struct snap_replay WIN = {
	.on = true, .extent_s = 40.0, .at_s = 30.0, .from_s = 10.0, .to_s = 20.0,
	.window = true, .delay_s = 1.0,
};

/* The bar's cells (between the ends '[' and ']'), ASCII. */
static void cells(const char *row, char *out, size_t size)
{
	const char *a = strchr(row, '['), *b = a != NULL ? strchr(a, ']') : NULL;

	cr_assert(a != NULL && b != NULL, "no bar in \"%s\"", row);
	cr_assert_lt((size_t)(b - a - 1), size);
	memcpy(out, a + 1, (size_t)(b - a - 1));
	out[b - a - 1] = '\0';
}

Test(replay_bar, ascii_80_columns_places_window_and_position)
{
	char row[1024], c[256];
	int n, at, from, to;

	replay_bar_format(&WIN, false, 80, false, row, sizeof row);
	cr_assert_leq(text_width(row, false), 80, "wider than 80: \"%s\"", row);
	cr_assert(strncmp(row, "|| 30.0 s ", 10) == 0, "paused at 30.0 s: \"%s\"", row);
	cr_assert(strstr(row, "window 10.0-20.0 of 40.0 s") != NULL, "the window: \"%s\"", row);
	cells(row, c, sizeof c);
	n = (int)strlen(c);
	cr_assert_geq(n, REPLAY_BAR_MIN_COLS);
	at = replay_bar_col(30.0, 40.0, n);
	from = replay_bar_col(10.0, 40.0, n);
	to = replay_bar_col(20.0, 40.0, n);
	cr_assert_eq(c[at], '|', "the position at cell %d of %d: \"%s\"", at, n, c);
	for (int k = 0; k < n; k++)
		if (k != at)
			cr_assert_eq(c[k], k >= from && k <= to ? '=' : '-', "cell %d of \"%s\"", k, c);
}

Test(replay_bar, wide_and_playing)
{
	char row[2048];

	replay_bar_format(&WIN, true, 200, false, row, sizeof row);
	cr_assert_leq(text_width(row, false), 200);
	cr_assert_geq(text_width(row, false), 190, "a wide screen gets a wide bar: \"%s\"", row);
	cr_assert(row[0] == '>', "playing: \"%s\"", row);
}

Test(replay_bar, utf8_fits_and_draws_boxes)
{
	char row[2048];

	replay_bar_format(&WIN, false, 80, true, row, sizeof row);
	cr_assert_leq(text_width(row, true), 80, "wider than 80: \"%s\"", row);
	cr_assert(strstr(row, "\u2503") != NULL && strstr(row, "\u2501") != NULL &&
	          strstr(row, "\u2500") != NULL, "no box drawing: \"%s\"", row);
}

Test(replay_bar, narrow_keeps_the_figures_without_a_bar)
{
	char row[256];

	replay_bar_format(&WIN, false, 30, false, row, sizeof row);
	cr_assert_leq(text_width(row, false), 30, "wider than 30: \"%s\"", row);
	cr_assert(strchr(row, '[') == NULL, "a bar under %d cells: \"%s\"", REPLAY_BAR_MIN_COLS,
	          row);
	cr_assert(strstr(row, "30.0 s") != NULL, "the position: \"%s\"", row);
}

Test(replay_bar, hostile_times_stay_on_the_bar)
{
	struct snap_replay r = WIN;

	r.at_s = 1e300;
	r.from_s = -5;
	r.extent_s = 0;
	cr_assert_eq(replay_bar_col(r.at_s, 40.0, 50), 49);
	cr_assert_eq(replay_bar_col(r.from_s, 40.0, 50), 0);
	cr_assert_eq(replay_bar_col(1.0, r.extent_s, 50), 0);
	cr_assert_eq(replay_bar_col(0.0 / 0.0, 40.0, 50), 0);
}
