/* threads_screen.c - the threads table's state and rows, as a screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "threads_screen.h"

#include <string.h>

#include "keys.h"
#include "tui_state.h"

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

pid_t tscreen_selected(const struct threads_screen *ts)
{
	if (ts->table.n == 0 || ts->pos.sel >= ts->table.n)
		return 0;
	return thread_table_row(&ts->table, ts->pos.sel)->tid;
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
	memset(&st->ts, 0, sizeof st->ts);
	st->ts.sort = THREAD_COL_CPU;
	st->ts.utf8 = utf8;
	st->ts.pos.page = 1;
}

static void op_free(struct tui_state *st)
{
	thread_table_free(&st->ts.table);
	st->ts.snap = NULL;
}

static void op_sync(struct tui_state *st)
{
	if (table_view_resync(&st->ts.snap, &st->ts.synced, tui_snapshot(st),
	                      st->shown))
		rebuild(&st->ts);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	struct threads_screen *ts = &st->ts;
	struct table_body body = {
		.table = &ts->table.table, .order = ts->table.order,
		.n = ts->table.n, .sort_col = (int)ts->sort,
		.no_rows = "no threads yet",
		.no_match = "no thread matches the filter", .filter = ts->filter,
	};
	char left[512];

	if (ts->snap == NULL)
		return;
	thread_table_describe(&ts->table, ts->snap, left, sizeof left);
	table_view_draw(crt, y, h, left, status, &ts->pos, &body);
}

static struct list_pos *op_list(struct tui_state *st, size_t *nrows)
{
	*nrows = st->ts.table.n;
	return &st->ts.pos;
}

/* The bar follows the thread chosen, not the row. */
static void op_moved(struct tui_state *st)
{
	st->ts.sel_tid = tscreen_selected(&st->ts);
}

static void op_sort(struct tui_state *st, int dir)
{
	st->ts.sort = thread_col_step(st->ts.sort, dir);
	rebuild(&st->ts);
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
	table_view_set_filter(st->ts.filter, sizeof st->ts.filter,
	                      &st->ts.pos, text);
	rebuild(&st->ts);
	op_moved(st);
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
	.list = op_list,
	.moved = op_moved,
	.sort = op_sort,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = column_help,
};
