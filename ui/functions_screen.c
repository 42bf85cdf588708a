/* functions_screen.c - state and drawing of the function / line table. */
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

void fscreen_init(struct functions_screen *fs, bool utf8)
{
	memset(fs, 0, sizeof *fs);
	fs->mode = PROFILE_FUNCTIONS;
	fs->sort = COUNT_OWN;
	fs->utf8 = utf8;
	fs->pos.page = 1;
}

static void row_id_clear(struct row_id *id)
{
	free(id->name);
	free(id->file);
	*id = (struct row_id){ NULL, NULL, 0 };
}

void fscreen_free(struct functions_screen *fs)
{
	profile_table_free(&fs->table);
	fs->snap = NULL;
	row_id_clear(&fs->sel_id);
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

void fscreen_sync(struct functions_screen *fs, const struct snapshot *s,
                  unsigned long shown)
{
	if (s == fs->snap && shown == fs->synced)
		return;
	fs->snap = s;
	fs->synced = shown;
	rebuild(fs);
}

void fscreen_move(struct functions_screen *fs, long delta)
{
	if (list_pos_move(&fs->pos, fs->table.n, delta))
		remember_selection(fs);
}

void fscreen_page(struct functions_screen *fs, int dir)
{
	fscreen_move(fs, dir * list_pos_page_rows(&fs->pos));
}

void fscreen_home(struct functions_screen *fs)
{
	fscreen_move(fs, -(long)fs->table.n);
}

void fscreen_end(struct functions_screen *fs)
{
	fscreen_move(fs, (long)fs->table.n);
}

void fscreen_cycle_sort(struct functions_screen *fs, int dir)
{
	fs->sort = profile_col_step(fs->table.sort, dir,
	                            fs->snap != NULL ? count_hidden(fs->snap)
	                                          : 1UL << COUNT_WAIT);
	rebuild(fs);
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

void fscreen_set_filter(struct functions_screen *fs, const char *filter)
{
	snprintf(fs->filter, sizeof fs->filter, "%s",
	         filter != NULL ? filter : "");
	fs->pos.sel = fs->pos.top = 0;
	rebuild(fs);
}

/* ---- drawing ----------------------------------------------------------- */

static void draw_description(const struct functions_screen *fs,
                             const struct crt *crt, int y,
                             const char *status)
{
	char left[512];

	profile_table_describe(&fs->table, fs->since_reset, left, sizeof left);
	table_view_filtered_description(crt, y, left, fs->filter, status);
}

/* The last " (" of the Function cell starts the file part. */
static size_t file_part_start(const char *line, const struct table_span *s)
{
	size_t found = s->end;

	for (size_t i = s->start; i + 1 < s->end; i++)
		if (line[i] == ' ' && line[i + 1] == '(')
			found = i + 1;
	return found;
}

static void draw_row(const struct functions_screen *fs,
                     const struct crt *crt, int y, size_t i)
{
	struct table_span spans[PROFILE_NCOLS];
	char line[TABLE_VIEW_LINE];
	const struct table_span *fn = &spans[PROFILE_COL_NAME];

	table_format_row(&fs->table.table, profile_table_row(&fs->table, i),
	                 COLS, line, sizeof line, spans);
	if (i == fs->pos.sel) {
		table_view_selected(crt, y, line);
		return;
	}
	crt_put(crt, y, 0, CRT_NORMAL, line);
	table_view_span(crt, y, line, file_part_start(line, fn), fn->end,
	                CRT_FILE);
}

static void draw_empty(const struct functions_screen *fs,
                       const struct crt *crt, int y)
{
	const char *why = "  (no samples yet)";

	if (fs->filter[0] != '\0')
		why = "  (no rows match the filter; / then Enter on an empty "
		      "line clears it)";
	crt_put(crt, y, 0, CRT_NORMAL, why);
}

void fscreen_draw(struct functions_screen *fs, const struct crt *crt,
                  int y, int h, const char *status)
{
	if (h <= 0)
		return;
	draw_description(fs, crt, y, status);
	if (h <= 1)
		return;
	table_view_titles(crt, y + 1, &fs->table.table, (int)fs->sort);
	fs->pos.page = h - 2 > 0 ? h - 2 : 1;
	list_pos_clamp(&fs->pos, fs->table.n);
	if (fs->table.n == 0 && h > 2)
		draw_empty(fs, crt, y + 2);
	for (int r = 0; r < h - 2 && fs->pos.top + (size_t)r < fs->table.n;
	     r++)
		draw_row(fs, crt, y + 2 + r, fs->pos.top + (size_t)r);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static void op_init(struct tui_state *st, bool utf8)
{
	fscreen_init(&st->fs, utf8);
}

static void op_free(struct tui_state *st)
{
	fscreen_free(&st->fs);
}

static void op_sync(struct tui_state *st)
{
	fscreen_sync(&st->fs, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	fscreen_draw(&st->fs, crt, y, h, status);
}

static void op_move(struct tui_state *st, long delta)
{
	fscreen_move(&st->fs, delta);
}

static void op_page(struct tui_state *st, int dir)
{
	fscreen_page(&st->fs, dir);
}

static void op_home(struct tui_state *st)
{
	fscreen_home(&st->fs);
}

static void op_end(struct tui_state *st)
{
	fscreen_end(&st->fs);
}

static void op_sort(struct tui_state *st, int dir)
{
	fscreen_cycle_sort(&st->fs, dir);
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

static void op_set_filter(struct tui_state *st, const char *text)
{
	fscreen_set_filter(&st->fs, text);
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
	.move_by = op_move,
	.page = op_page,
	.home = op_home,
	.end = op_end,
	.sort = op_sort,
	.select = op_select,
	.filter = op_filter,
	.set_filter = op_set_filter,
	.legend = op_legend,
	/* 80 columns leave no room for Reset beside Enter's Source. */
	.legend_reset = false,
	.column_help = count_column_help,
};
