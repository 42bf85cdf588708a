/* threads_screen.c - state and drawing of the threads table. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "threads_screen.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "tui_state.h"

void tscreen_init(struct threads_screen *ts, bool utf8)
{
	memset(ts, 0, sizeof *ts);
	ts->sort = THREAD_COL_CPU;
	ts->utf8 = utf8;
	ts->pos.page = 1;
}

void tscreen_free(struct threads_screen *ts)
{
	thread_table_free(&ts->table);
	ts->snap = NULL;
}

/* Rows again from the snapshot with the current filter and sort; the bar
 * stays on the same thread while rows move. */
static void rebuild(struct threads_screen *ts)
{
	thread_table_free(&ts->table);
	if (ts->snap == NULL)
		return;
	thread_table_build(&ts->table, ts->snap, ts->filter, ts->sort,
	                   ts->utf8);
	for (size_t i = 0; i < ts->table.n; i++)
		if (thread_table_row(&ts->table, i)->tid == ts->sel_tid) {
			ts->pos.sel = i;
			break;
		}
	list_pos_clamp(&ts->pos, ts->table.n);
}

void tscreen_sync(struct threads_screen *ts, const struct snapshot *s,
                  unsigned long shown)
{
	if (s == ts->snap && shown == ts->synced)
		return;
	ts->snap = s;
	ts->synced = shown;
	rebuild(ts);
}

static void remember_selection(struct threads_screen *ts)
{
	ts->sel_tid = tscreen_selected(ts);
}

void tscreen_move(struct threads_screen *ts, long delta)
{
	if (list_pos_move(&ts->pos, ts->table.n, delta))
		remember_selection(ts);
}

void tscreen_page(struct threads_screen *ts, int dir)
{
	tscreen_move(ts, dir * list_pos_page_rows(&ts->pos));
}

void tscreen_home(struct threads_screen *ts)
{
	tscreen_move(ts, -(long)ts->table.n);
}

void tscreen_end(struct threads_screen *ts)
{
	tscreen_move(ts, (long)ts->table.n);
}

void tscreen_cycle_sort(struct threads_screen *ts, int dir)
{
	ts->sort = thread_col_step(ts->sort, dir);
	rebuild(ts);
}

void tscreen_set_filter(struct threads_screen *ts, const char *filter)
{
	snprintf(ts->filter, sizeof ts->filter, "%s",
	         filter != NULL ? filter : "");
	ts->pos.sel = ts->pos.top = 0;
	rebuild(ts);
	remember_selection(ts);
}

pid_t tscreen_selected(const struct threads_screen *ts)
{
	if (ts->table.n == 0 || ts->pos.sel >= ts->table.n)
		return 0;
	return thread_table_row(&ts->table, ts->pos.sel)->tid;
}

/* ---- drawing ----------------------------------------------------------- */

static void draw_description(const struct threads_screen *ts,
                             const struct crt *crt, int y,
                             const char *status)
{
	char left[512];

	thread_table_describe(&ts->table, ts->snap, left, sizeof left);
	table_view_filtered_description(crt, y, left, ts->filter, status);
}

void tscreen_draw(struct threads_screen *ts, const struct crt *crt, int y,
                  int h, const char *status)
{
	if (h <= 0 || ts->snap == NULL)
		return;
	draw_description(ts, crt, y, status);
	if (h <= 1)
		return;
	table_view_titles(crt, y + 1, &ts->table.table, (int)ts->sort);
	ts->pos.page = h - 2 > 0 ? h - 2 : 1;
	list_pos_clamp(&ts->pos, ts->table.n);
	if (ts->table.n == 0 && h > 2)
		crt_put(crt, y + 2, 0, CRT_NORMAL,
		        ts->filter[0] != '\0'
		        ? "  (no thread matches the filter; / then Enter on "
		          "an empty line clears it)"
		        : "  (no threads yet)");
	for (int r = 0; r < h - 2 && ts->pos.top + (size_t)r < ts->table.n;
	     r++)
		table_view_row(crt, y + 2 + r, &ts->table.table,
		               ts->table.order[ts->pos.top + (size_t)r],
		               ts->pos.top + (size_t)r == ts->pos.sel);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static const char *const column_help[] = {
	"State      run+GIL: on a CPU running Python; run: on a CPU without",
	"           the GIL (native code); GIL wait; idle; gone",
	"CPU%       user + system CPU over the last refresh, % of one CPU",
	"GIL%       share of the thread reports (10 a second) holding the GIL",
	"Enter shows only the selected thread's functions and lines; a: all.",
	NULL,
};

static void op_init(struct tui_state *st, bool utf8)
{
	tscreen_init(&st->ts, utf8);
}

static void op_free(struct tui_state *st)
{
	tscreen_free(&st->ts);
}

static void op_sync(struct tui_state *st)
{
	tscreen_sync(&st->ts, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	tscreen_draw(&st->ts, crt, y, h, status);
}

static void op_move(struct tui_state *st, long delta)
{
	tscreen_move(&st->ts, delta);
}

static void op_page(struct tui_state *st, int dir)
{
	tscreen_page(&st->ts, dir);
}

static void op_home(struct tui_state *st)
{
	tscreen_home(&st->ts);
}

static void op_end(struct tui_state *st)
{
	tscreen_end(&st->ts);
}

static void op_sort(struct tui_state *st, int dir)
{
	tscreen_cycle_sort(&st->ts, dir);
}

/* Enter on a thread: its functions and lines only. */
static unsigned op_select(struct tui_state *st)
{
	pid_t tid = tscreen_selected(&st->ts);

	if (tid == 0)
		return REACT_NONE;
	tui_switch(st, &functions_screen_ops);
	return tui_filter_thread(st, tid);
}

static const char *op_filter(const struct tui_state *st)
{
	return st->ts.filter;
}

static void op_set_filter(struct tui_state *st, const char *text)
{
	tscreen_set_filter(&st->ts, text);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	static const struct legend_item items[] = {
		{ "Enter", "Funcs" }, { "t", "Back" },
	};

	(void)st;
	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

const struct screen_ops threads_screen_ops = {
	.name = "threads",
	.init = op_init,
	.free = op_free,
	.sync = op_sync,
	.draw = op_draw,
	.move_by = op_move,
	.page = op_page,
	.home = op_home,
	.end = op_end,
	.sort = op_sort,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = column_help,
};
