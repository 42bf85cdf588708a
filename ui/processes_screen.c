/* processes_screen.c - state and drawing of the processes tree. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "processes_screen.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "tui_state.h"

void pscreen_init(struct processes_screen *ps, bool utf8)
{
	memset(ps, 0, sizeof *ps);
	ps->utf8 = utf8;
	ps->pos.page = 1;
}

void pscreen_free(struct processes_screen *ps)
{
	process_table_free(&ps->table);
	ps->snap = NULL;
}

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

void pscreen_sync(struct processes_screen *ps, const struct snapshot *s,
                  unsigned long shown)
{
	if (s == ps->snap && shown == ps->synced)
		return;
	ps->snap = s;
	ps->synced = shown;
	rebuild(ps);
}

static void remember_selection(struct processes_screen *ps)
{
	const struct snap_process *p = pscreen_selected(ps);

	ps->sel_pid = p != NULL ? p->pid : 0;
}

void pscreen_move(struct processes_screen *ps, long delta)
{
	if (list_pos_move(&ps->pos, ps->table.n, delta))
		remember_selection(ps);
}

void pscreen_page(struct processes_screen *ps, int dir)
{
	pscreen_move(ps, dir * list_pos_page_rows(&ps->pos));
}

void pscreen_home(struct processes_screen *ps)
{
	pscreen_move(ps, -(long)ps->table.n);
}

void pscreen_end(struct processes_screen *ps)
{
	pscreen_move(ps, (long)ps->table.n);
}

void pscreen_set_filter(struct processes_screen *ps, const char *filter)
{
	snprintf(ps->filter, sizeof ps->filter, "%s",
	         filter != NULL ? filter : "");
	ps->pos.sel = ps->pos.top = 0;
	rebuild(ps);
	remember_selection(ps);
}

const struct snap_process *pscreen_selected(const struct processes_screen *ps)
{
	if (ps->table.n == 0 || ps->pos.sel >= ps->table.n)
		return NULL;
	return process_table_row(&ps->table, ps->pos.sel);
}

/* ---- drawing ----------------------------------------------------------- */

static void draw_description(const struct processes_screen *ps,
                             const struct crt *crt, int y,
                             const char *status)
{
	char left[512];

	process_table_describe(ps->snap, left, sizeof left);
	table_view_filtered_description(crt, y, left, ps->filter, status);
}

void pscreen_draw(struct processes_screen *ps, const struct crt *crt, int y,
                  int h, const char *status)
{
	if (h <= 0 || ps->snap == NULL)
		return;
	draw_description(ps, crt, y, status);
	if (h <= 1)
		return;
	table_view_titles(crt, y + 1, &ps->table.table, -1);
	ps->pos.page = h - 2 > 0 ? h - 2 : 1;
	list_pos_clamp(&ps->pos, ps->table.n);
	if (ps->table.n == 0 && h > 2)
		crt_put(crt, y + 2, 0, CRT_NORMAL,
		        ps->filter[0] != '\0'
		        ? "  (no process matches the filter; / then Enter on "
		          "an empty line clears it)"
		        : "  (no processes yet)");
	for (int r = 0; r < h - 2 && ps->pos.top + (size_t)r < ps->table.n;
	     r++)
		table_view_row(crt, y + 2 + r, &ps->table.table,
		               ps->table.order[ps->pos.top + (size_t)r],
		               ps->pos.top + (size_t)r == ps->pos.sel);
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
	pscreen_init(&st->ps, utf8);
}

static void op_free(struct tui_state *st)
{
	pscreen_free(&st->ps);
}

static void op_sync(struct tui_state *st)
{
	pscreen_sync(&st->ps, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	pscreen_draw(&st->ps, crt, y, h, status);
}

static void op_move(struct tui_state *st, long delta)
{
	pscreen_move(&st->ps, delta);
}

static void op_page(struct tui_state *st, int dir)
{
	pscreen_page(&st->ps, dir);
}

static void op_home(struct tui_state *st)
{
	pscreen_home(&st->ps);
}

static void op_end(struct tui_state *st)
{
	pscreen_end(&st->ps);
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
	pscreen_set_filter(&st->ps, text);
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
	.move_by = op_move,
	.page = op_page,
	.home = op_home,
	.end = op_end,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = column_help,
};
