/* tree_screen.c - the call tree screen's state, keys and rows. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tree_screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_columns.h"
#include "keys.h"
#include "tui_state.h"

#define KEY_ESCAPE 27

static void clear_callers(struct tree_screen *ts)
{
	free(ts->callers_of);
	free(ts->callers_file);
	ts->callers_of = ts->callers_file = NULL;
}

/* ---- the open nodes, by path ------------------------------------------- */

static size_t open_at(const struct tree_screen *ts, uint64_t path)
{
	size_t lo = 0, hi = ts->nopen;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ts->open[mid] < path)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_open(const struct call_node *n, const void *ctx)
{
	const struct tree_screen *ts = ctx;
	size_t i = open_at(ts, n->path);

	return i < ts->nopen && ts->open[i] == n->path;
}

static void set_open(struct tree_screen *ts, uint64_t path, bool open)
{
	size_t i = open_at(ts, path);
	bool there = i < ts->nopen && ts->open[i] == path;

	if (open == there)
		return;
	if (!open) {
		memmove(&ts->open[i], &ts->open[i + 1],
		        (ts->nopen - i - 1) * sizeof ts->open[0]);
		ts->nopen--;
		return;
	}
	if (ts->nopen == ts->capopen) {
		size_t cap = ts->capopen ? ts->capopen * 2 : 64;
		uint64_t *grown = realloc(ts->open, cap * sizeof *grown);
		if (grown == NULL)
			return; /* stays closed */
		ts->open = grown;
		ts->capopen = cap;
	}
	memmove(&ts->open[i + 1], &ts->open[i],
	        (ts->nopen - i) * sizeof ts->open[0]);
	ts->open[i] = path;
	ts->nopen++;
}

/* ---- rows -------------------------------------------------------------- */

static void rebuild_rows(struct tree_screen *ts)
{
	tree_table_free(&ts->table);
	if (ts->snap == NULL)
		return;
	tree_table_build(&ts->table, &ts->tree, is_open, ts, ts->filter,
	                 ts->sort, count_hidden(ts->snap), ts->utf8);
	for (size_t i = 0; i < ts->table.n; i++)
		if (tree_table_row(&ts->table, i)->n->path == ts->sel_path) {
			ts->pos.sel = i;
			break;
		}
	list_pos_clamp(&ts->pos, ts->table.n);
}

static uint32_t selected_node(const struct tree_screen *ts)
{
	if (ts->table.n == 0 || ts->pos.sel >= ts->table.n)
		return CALL_NONE;
	return tree_table_row(&ts->table, ts->pos.sel)->node;
}

const struct call_node *treescr_selected(const struct tree_screen *ts)
{
	uint32_t i = selected_node(ts);

	return i == CALL_NONE ? NULL : &ts->tree.nodes[i];
}

static void select_node(struct tree_screen *ts, uint32_t node)
{
	size_t row = tree_table_find(&ts->table, node);

	if (row < ts->table.n)
		ts->pos.sel = row;
	list_pos_clamp(&ts->pos, ts->table.n);
	ts->sel_path = node != CALL_NONE ? ts->tree.nodes[node].path : 0;
}

/* Open the path from node down its hottest children; select its end. */
static void open_hottest_from(struct tree_screen *ts, uint32_t node)
{
	uint32_t at = node;

	for (uint32_t c; (c = call_tree_hottest_child(&ts->tree, at)) !=
	     CALL_NONE; at = c)
		set_open(ts, ts->tree.nodes[at].path, true);
	rebuild_rows(ts);
	select_node(ts, at == 0 ? CALL_NONE : at);
}

static void rebuild_tree(struct tree_screen *ts)
{
	call_tree_free(&ts->tree);
	if (ts->callers_of != NULL)
		call_tree_build_callers(&ts->tree, ts->snap, ts->callers_of,
		                        ts->callers_file);
	else
		call_tree_build(&ts->tree, ts->snap);
	rebuild_rows(ts);
	if (!ts->opened_hot && ts->tree.n > 1) {
		ts->opened_hot = true;
		open_hottest_from(ts, 0);
	}
}

void treescr_sync(struct tree_screen *ts, const struct snapshot *s,
                  unsigned long shown)
{
	if (!table_view_resync(&ts->snap, &ts->synced, s, shown))
		return;
	if (s == NULL) {
		tree_table_free(&ts->table);
		call_tree_free(&ts->tree);
		return;
	}
	rebuild_tree(ts);
}

static void move_sel(struct tree_screen *ts, long delta)
{
	if (list_pos_move(&ts->pos, ts->table.n, delta))
		ts->sel_path = treescr_selected(ts)->path;
}

void treescr_open(struct tree_screen *ts, bool open)
{
	uint32_t i = selected_node(ts);
	const struct tree_row *r;

	if (i == CALL_NONE)
		return;
	r = tree_table_row(&ts->table, ts->pos.sel);
	if (open && r->open) {
		move_sel(ts, 1);
	} else if (open && r->has_kids) {
		set_open(ts, r->n->path, true);
		rebuild_rows(ts);
	} else if (!open && r->open) {
		set_open(ts, r->n->path, false);
		rebuild_rows(ts);
	} else if (!open && r->n->parent != 0) {
		select_node(ts, r->n->parent);
	}
}

void treescr_open_hottest(struct tree_screen *ts)
{
	uint32_t i = selected_node(ts);

	open_hottest_from(ts, i == CALL_NONE ? 0 : i);
}

void treescr_toggle_callers(struct tree_screen *ts)
{
	const struct call_node *n = treescr_selected(ts);

	if (ts->callers_of == NULL && (n == NULL || n->other))
		return;
	if (ts->callers_of != NULL) {
		clear_callers(ts);
	} else {
		ts->callers_of = strdup(n->name != NULL ? n->name : "");
		ts->callers_file = strdup(n->file != NULL ? n->file : "");
		if (ts->callers_of == NULL || ts->callers_file == NULL)
			clear_callers(ts);
	}
	ts->pos.sel = ts->pos.top = 0;
	ts->sel_path = 0;
	if (ts->snap == NULL)
		return;
	call_tree_free(&ts->tree);
	if (ts->callers_of != NULL)
		call_tree_build_callers(&ts->tree, ts->snap, ts->callers_of,
		                        ts->callers_file);
	else
		call_tree_build(&ts->tree, ts->snap);
	/* The function's callers open one level, its entries in view. */
	if (ts->callers_of != NULL && ts->tree.n > 1)
		set_open(ts, ts->tree.nodes[ts->tree.nodes[0].first_child].path,
		         true);
	rebuild_rows(ts);
}

void treescr_set_filter(struct tree_screen *ts, const char *filter)
{
	table_view_set_filter(ts->filter, sizeof ts->filter, &ts->pos, filter);
	rebuild_rows(ts);
	if (ts->table.n > 0)
		ts->sel_path = treescr_selected(ts)->path;
}

/* ---- drawing ----------------------------------------------------------- */

static void describe(const struct tree_screen *ts, bool since_reset,
                     char *buf, size_t size)
{
	const struct snapshot *s = ts->snap;
	char of[256], span[64];

	profile_percent_of(ts->tree.samples, s->idle_mode, s->thread_filter,
	                   profile_thread_name(s, s->thread_filter),
	                   s->process_filter, of, sizeof of);
	if (ts->callers_of != NULL)
		snprintf(buf, size, "Callers of %s %s, %s, by %s",
		         ts->callers_of, profile_span(s, since_reset, span, sizeof span), of,
		         profile_col_name(ts->table.sort));
	else
		snprintf(buf, size, "Call tree %s, %s, by %s",
		         profile_span(s, since_reset, span, sizeof span), of,
		         profile_col_name(ts->table.sort));
}

void treescr_draw(struct tree_screen *ts, const struct crt *crt, int y,
                  int h, const char *status, bool since_reset)
{
	struct table_body body = {
		.table = &ts->table.table, .order = ts->table.order,
		.n = ts->table.n, .sort_col = (int)ts->table.sort,
		.no_rows = "no stacks yet",
		.no_match = "no function matches the filter",
		.filter = ts->filter,
	};
	char left[1024];

	if (ts->snap == NULL)
		return;
	describe(ts, since_reset, left, sizeof left);
	table_view_draw(crt, y, h, left, status, &ts->pos, &body);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static const char *const column_help[] = {
	"%Own %Total  the node's samples: innermost here / through it; the",
	"  split, Mem+ and faults are of its own samples.  Right + open, Left -",
	"  close, e hottest path, i callers of its function (i, Esc: back)",
	"A recursive function is one node per depth: no sample counts twice.",
	NULL,
};

static void op_init(struct tui_state *st, bool utf8)
{
	memset(&st->tr, 0, sizeof st->tr);
	st->tr.utf8 = utf8;
	st->tr.sort = COUNT_TOTAL;
	st->tr.pos.page = 1;
}

static void op_free(struct tui_state *st)
{
	struct tree_screen *ts = &st->tr;

	tree_table_free(&ts->table);
	call_tree_free(&ts->tree);
	free(ts->open);
	clear_callers(ts);
	ts->open = NULL;
	ts->nopen = ts->capopen = 0;
	ts->snap = NULL;
}

static void op_sync(struct tui_state *st)
{
	/* Only while on display: a tree costs a walk of every stack. */
	if (st->view == &tree_screen_ops)
		treescr_sync(&st->tr, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	treescr_sync(&st->tr, tui_snapshot(st), st->shown);
	treescr_draw(&st->tr, crt, y, h, status, st->fs.since_reset);
}

static bool op_key(struct tui_state *st, int key, unsigned *react)
{
	struct tree_screen *ts = &st->tr;

	if (st->prompt.active)
		return false;
	treescr_sync(ts, tui_snapshot(st), st->shown);
	if (key == CRT_KEYCODE(KEY_RIGHT) || key == '+')
		treescr_open(ts, true);
	else if (key == CRT_KEYCODE(KEY_LEFT) || key == '-')
		treescr_open(ts, false);
	else if (key == 'e')
		treescr_open_hottest(ts);
	else if (key == 'i' || (key == KEY_ESCAPE && ts->callers_of != NULL))
		treescr_toggle_callers(ts);
	else
		return false;
	*react = REACT_REDRAW;
	return true;
}

static struct list_pos *op_list(struct tui_state *st, size_t *nrows)
{
	*nrows = st->tr.table.n;
	return &st->tr.pos;
}

/* The bar follows the node chosen, by its path, across refreshes. */
static void op_moved(struct tui_state *st)
{
	st->tr.sel_path = treescr_selected(&st->tr)->path;
}

static void op_sort(struct tui_state *st, int dir)
{
	struct tree_screen *ts = &st->tr;

	ts->sort = profile_col_step(ts->table.sort, dir,
	                            (ts->snap != NULL ? count_hidden(ts->snap)
	                                              : 1UL << COUNT_WAIT) |
	                            1UL << COUNT_KEPT);
	rebuild_rows(ts);
}

/* Enter: the lines of the node's function, as from the functions
 * table; Esc there comes back here. */
static unsigned op_select(struct tui_state *st)
{
	const struct call_node *n = treescr_selected(&st->tr);

	if (n == NULL || n->other ||
	    !lscreen_open(&st->ls, tui_snapshot(st), st->shown, n->name,
	                  n->file, 0))
		return REACT_NONE;
	tui_switch(st, &lines_screen_ops);
	st->lines_from = &tree_screen_ops;
	return REACT_REDRAW;
}

static const char *op_filter(const struct tui_state *st)
{
	return st->tr.filter;
}

static void op_set_filter(struct tui_state *st, const char *text)
{
	treescr_set_filter(&st->tr, text);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	struct legend_item items[] = {
		{ "Enter", "Source" },
		{ "e", "Hot" },
		{ "i", st->tr.callers_of != NULL ? "Tree" : "Callers" },
	};

	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

const struct screen_ops tree_screen_ops = {
	.name = "tree",
	.init = op_init,
	.free = op_free,
	.sync = op_sync,
	.draw = op_draw,
	.key = op_key,
	.list = op_list,
	.moved = op_moved,
	.sort = op_sort,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	.legend_reset = false,
	.column_help = column_help,
};
