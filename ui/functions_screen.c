/* functions_screen.c - the function / line table's state and rows, as a
 * screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "functions_screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_columns.h"
#include "keys.h"
#include "tui_state.h"

static void row_id_clear(struct row_id *id)
{
	free(id->name);
	free(id->file);
	*id = (struct row_id){ NULL, NULL, 0 };
}

/* ---- selection --------------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* Remember the selected row's identity (after the user moved). */
static void remember_selection(struct functions_screen *fs)
{
	const struct profile_row *r;

	row_id_clear(&fs->sel_id);
	if (fs->table.n == 0)
		return;
	r = profile_table_row(&fs->table, fs->pos.sel);
	fs->sel_id.name = strdup(r->name != NULL ? r->name : "");
	fs->sel_id.file = strdup(r->file != NULL ? r->file : "");
	fs->sel_id.line = r->line;
}

/* Find the remembered row: exact, else the same function at another line
 * (after switching between functions and lines). */
static bool find_selection(const struct functions_screen *fs, size_t *out)
{
	const struct row_id *id = &fs->sel_id;
	bool found_fn = false;

	if (id->name == NULL)
		return false;
	for (size_t i = 0; i < fs->table.n; i++) {
		const struct profile_row *r = profile_table_row(&fs->table, i);

		if (!same_str(r->name, id->name) ||
		    !same_str(r->file, id->file))
			continue;
		if (r->line == id->line) {
			*out = i;
			return true;
		}
		if (!found_fn) {
			*out = i;
			found_fn = true;
		}
	}
	return found_fn;
}

/* Rebuild the rows from the snapshot with the current mode, filter and
 * sort, then put the selection back on the same row. */
static void rebuild(struct functions_screen *fs)
{
	size_t found = 0;

	profile_table_free(&fs->table);
	if (fs->snap == NULL)
		return;
	profile_table_build_grouped(&fs->table, fs->snap, fs->mode, fs->filter,
	                            fs->sort, fs->utf8, fs->by_library);
	profile_table_full_names(&fs->table, fs->full_names);
	if (find_selection(fs, &found))
		fs->pos.sel = found;
	list_pos_clamp(&fs->pos, fs->table.n);
	/* An exact identity keeps following; a fallback becomes the new
	 * choice only when the user moves. */
}

void fscreen_toggle_mode(struct functions_screen *fs)
{
	fs->mode = fs->mode == PROFILE_FUNCTIONS ? PROFILE_LINES
	                                         : PROFILE_FUNCTIONS;
	rebuild(fs);
}

void fscreen_toggle_full_names(struct functions_screen *fs)
{
	fs->full_names = !fs->full_names;
	rebuild(fs);
}

void fscreen_toggle_libraries(struct functions_screen *fs)
{
	fs->by_library = !fs->by_library;
	rebuild(fs);
}

/* ---- drawing ----------------------------------------------------------- */

/* The last " (" of the Function cell starts the file part. */
static size_t file_part_start(const char *line, const struct table_span *s)
{
	size_t found = s->end;

	for (size_t i = s->start; i + 1 < s->end; i++)
		if (line[i] == ' ' && line[i + 1] == '(')
			found = i + 1;
	return found;
}

/* A row with the file part of its Function cell dimmed, unless under
 * the bar. */
static void draw_row(const void *screen, const struct crt *crt, int y,
                     size_t i, bool selected)
{
	const struct functions_screen *fs = screen;
	struct table_span spans[PROFILE_NCOLS];
	char line[TABLE_VIEW_LINE];
	const struct table_span *fn = &spans[PROFILE_COL_NAME];

	table_format_row(&fs->table.table, profile_table_row(&fs->table, i),
	                 COLS, line, sizeof line, spans);
	if (selected) {
		table_view_selected(crt, y, line);
		return;
	}
	crt_put(crt, y, 0, CRT_NORMAL, line);
	table_view_span(crt, y, line, file_part_start(line, fn), fn->end,
	                CRT_FILE);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static void op_init(struct tui_state *st, bool utf8)
{
	memset(&st->fs, 0, sizeof st->fs);
	st->fs.mode = PROFILE_FUNCTIONS;
	st->fs.sort = COUNT_OWN;
	st->fs.utf8 = utf8;
	st->fs.pos.page = 1;
}

static void op_free(struct tui_state *st)
{
	profile_table_free(&st->fs.table);
	st->fs.snap = NULL;
	row_id_clear(&st->fs.sel_id);
}

static void op_sync(struct tui_state *st)
{
	if (table_view_resync(&st->fs.snap, &st->fs.synced, tui_snapshot(st),
	                      st->shown))
		rebuild(&st->fs);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	struct functions_screen *fs = &st->fs;
	struct table_body body = {
		.table = &fs->table.table, .order = fs->table.order,
		.n = fs->table.n, .sort_col = (int)fs->sort,
		.no_rows = "no samples yet",
		.no_match = "no rows match the filter", .filter = fs->filter,
		.draw_row = draw_row, .screen = fs,
	};
	char left[512];

	profile_table_describe(&fs->table, fs->since_reset, left, sizeof left);
	table_view_draw(crt, y, h, left, status, &fs->pos, &body);
}

static struct list_pos *op_list(struct tui_state *st, size_t *nrows)
{
	*nrows = st->fs.table.n;
	return &st->fs.pos;
}

static void op_moved(struct tui_state *st)
{
	remember_selection(&st->fs);
}

static void op_sort(struct tui_state *st, int dir)
{
	struct functions_screen *fs = &st->fs;

	fs->sort = profile_col_step(fs->table.sort, dir,
	                            fs->snap != NULL ? count_hidden(fs->snap)
	                                          : 1UL << COUNT_WAIT);
	rebuild(fs);
}

/* Enter on a function: its source.  On a line of the line table: the
 * source of its function, with that line selected. */
static unsigned op_select(struct tui_state *st)
{
	const struct profile_row *r;

	if (st->fs.table.n == 0)
		return REACT_NONE;
	r = profile_table_row(&st->fs.table, st->fs.pos.sel);
	if (!lscreen_open(&st->ls, tui_snapshot(st), st->shown, r->name,
	                  r->file, st->fs.mode == PROFILE_LINES ? r->line : 0))
		return REACT_NONE;
	tui_switch(st, &lines_screen_ops);
	return REACT_REDRAW;
}

static const char *op_filter(const struct tui_state *st)
{
	return st->fs.filter;
}

/* The bar goes to the first row; it becomes the choice only when the
 * user moves. */
static void op_set_filter(struct tui_state *st, const char *text)
{
	table_view_set_filter(st->fs.filter, sizeof st->fs.filter,
	                      &st->fs.pos, text);
	rebuild(&st->fs);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	struct legend_item items[] = {
		{ "Enter", "Source" },
		{ "l", st->fs.mode == PROFILE_LINES ? "Funcs" : "Lines" },
		/* 80 columns hold one of the two; with -s the family is
		 * what was asked for. */
		tui_following(st) ? (struct legend_item){ "P", "Procs" }
		                  : (struct legend_item){ "t", "Threads" },
	};

	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

const struct screen_ops functions_screen_ops = {
	.name = "functions",
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
	/* 80 columns leave no room for Reset beside Enter's Source. */
	.legend_reset = false,
	.column_help = count_column_help,
};
