/* tui_draw.c - one frame of the TUI (see tui_draw.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tui_draw.h"

#include "function_bar.h"
#include "header.h"
#include "keys.h"
#include "replay_bar.h"

#define LEGEND_MAX 16

static int draw_header(const struct tui_state *st, const struct crt *crt)
{
	const struct snapshot *s = tui_snapshot(st);
	char lines[HEADER_TUI_MAX_LINES][HEADER_LINE_MAX];
	int n;

	if (s == NULL)
		return 0;
	n = header_tui(s, &st->gauges, COLS, LINES, crt->utf8, lines);
	for (int i = 0; i < n; i++)
		crt_put(crt, i, 0, i == 0 ? CRT_HEADER : CRT_NORMAL, lines[i]);
	/* pytop replay: the time bar, while a table still fits below. */
	if (s->replay.on && n > 0 && LINES - n > HEADER_TABLE_MIN_ROWS - 3) {
		replay_bar_format(&s->replay, st->playing, COLS, crt->utf8, lines[0],
		                  HEADER_LINE_MAX);
		crt_put(crt, n++, 0, CRT_NORMAL, lines[0]);
	}
	return n;
}

void tui_draw_below(struct tui_state *st, const struct crt *crt, int y)
{
	char status[192];
	struct legend_item legend[LEGEND_MAX];

	if (st->view->full_screen) {
		st->view->draw(st, crt, 0, LINES, "");
		return;
	}
	keys_status(st, status, sizeof status);
	tui_sync(st);
	st->view->draw(st, crt, y, LINES - 1 - y, status);
	if (st->prompt.active)
		prompt_draw(&st->prompt, crt, LINES - 1);
	else
		function_bar_draw(crt, LINES - 1, legend,
		                  keys_legend(st, legend, LEGEND_MAX));
}

void tui_draw(struct tui_state *st, const struct crt *crt, bool repaint)
{
	if (repaint)
		clear();
	else
		erase();
	tui_draw_below(st, crt, st->view->full_screen ? 0
	                                              : draw_header(st, crt));
	refresh();
}
