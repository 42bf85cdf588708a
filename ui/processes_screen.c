/* processes_screen.c - the processes tree's state and rows, as a
 * screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "processes_screen.h"

#include <string.h>

#include "keys.h"
#include "tui_state.h"

/* Rows again from the snapshot with the current filter; the bar stays on
 * the same process while rows come and go. */
static void rebuild(struct processes_screen *ps)
{
	process_table_free(&ps->table);
	if (ps->snap == NULL)
		return;
	process_table_build(&ps->table, ps->snap, ps->filter, ps->utf8);
	for (size_t i = 0; i < ps->table.n; i++)
		if (process_table_row(&ps->table, i)->pid == ps->sel_pid) {
			ps->pos.sel = i;
			break;
		}
	list_pos_clamp(&ps->pos, ps->table.n);
}

const struct snap_process *pscreen_selected(const struct processes_screen *ps)
{
	if (ps->table.n == 0 || ps->pos.sel >= ps->table.n)
		return NULL;
	return process_table_row(&ps->table, ps->pos.sel);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static const char *const column_help[] = {
	"Python     version of a sampled process, else looking, not Python,",
	"           exited, or why it is not sampled (no access, unsupported)",
	"CPU% RSS   all its threads' CPU over the last refresh; resident memory",
	"Samples    its threads' samples; Top function: its most sampled leaf",
	"Enter shows only the selected process's functions and lines; a: all.",
	NULL,
};

static void op_init(struct tui_state *st, bool utf8)
{
	memset(&st->ps, 0, sizeof st->ps);
	st->ps.utf8 = utf8;
	st->ps.pos.page = 1;
}

static void op_free(struct tui_state *st)
{
	process_table_free(&st->ps.table);
	st->ps.snap = NULL;
}

static void op_sync(struct tui_state *st)
{
	if (table_view_resync(&st->ps.snap, &st->ps.synced, tui_snapshot(st),
	                      st->shown))
		rebuild(&st->ps);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	struct processes_screen *ps = &st->ps;
	struct table_body body = {
		.table = &ps->table.table, .order = ps->table.order,
		.n = ps->table.n, .sort_col = -1,
		.no_rows = "no processes yet",
		.no_match = "no process matches the filter",
		.filter = ps->filter,
	};
	char left[512];

	if (ps->snap == NULL)
		return;
	process_table_describe(ps->snap, left, sizeof left);
	table_view_draw(crt, y, h, left, status, &ps->pos, &body);
}

static struct list_pos *op_list(struct tui_state *st, size_t *nrows)
{
	*nrows = st->ps.table.n;
	return &st->ps.pos;
}

/* The bar follows the process chosen, not the row. */
static void op_moved(struct tui_state *st)
{
	const struct snap_process *p = pscreen_selected(&st->ps);

	st->ps.sel_pid = p != NULL ? p->pid : 0;
}

/* Enter on a process: its functions and lines only, if it is sampled. */
static unsigned op_select(struct tui_state *st)
{
	const struct snap_process *p = pscreen_selected(&st->ps);

	if (p == NULL)
		return REACT_NONE;
	if (p->state != PROCESS_PYTHON && p->samples == 0) {
		st->note = "[not sampled: choose a Python process]";
		return REACT_REDRAW;
	}
	tui_switch(st, &functions_screen_ops);
	return tui_filter_process(st, p->pid);
}

static const char *op_filter(const struct tui_state *st)
{
	return st->ps.filter;
}

static void op_set_filter(struct tui_state *st, const char *text)
{
	table_view_set_filter(st->ps.filter, sizeof st->ps.filter,
	                      &st->ps.pos, text);
	rebuild(&st->ps);
	op_moved(st);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	static const struct legend_item items[] = {
		{ "Enter", "Funcs" }, { "P", "Back" },
	};

	(void)st;
	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

/* The tree keeps its order: nothing to sort. */
const struct screen_ops processes_screen_ops = {
	.name = "processes",
	.init = op_init,
	.free = op_free,
	.sync = op_sync,
	.draw = op_draw,
	.list = op_list,
	.moved = op_moved,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = column_help,
};
