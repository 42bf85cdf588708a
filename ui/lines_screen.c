/* lines_screen.c - state and drawing of the lines view. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lines_screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count_columns.h"
#include "keys.h"
#include "profile_table.h"
#include "text.h"
#include "tui_state.h"

/* ---- cells ------------------------------------------------------------- */

static const struct lines_row *row_of(const void *row)
{
	return row;
}

static const struct snap_counts *row_counts(const void *row)
{
	return row_of(row)->c;
}

static void fmt_line(const void *row, const void *ctx, int width, bool utf8,
                     char *buf, size_t size)
{
	(void)ctx, (void)width, (void)utf8;
	if (row_of(row)->callee)
		buf[0] = '\0';
	else
		snprintf(buf, size, "%d", row_of(row)->line);
}

/* Eighth blocks from one eighth (U+258F) to seven (U+2589). */
static const char *const eighths[8] = {
	"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a",
	"\u2589",
};

/* A bar of LINES_HEAT_COLS columns: eighth blocks with UTF-8, else '#'
 * per column and '+' for a half.  Any heat shows at least a sliver. */
static void heat_bar(double heat, bool utf8, char *buf, size_t size)
{
	int steps = utf8 ? 8 : 2, n;
	size_t pos = 0;

	if (!(heat > 0)) {
		buf[0] = '\0';
		return;
	}
	n = (int)(heat * LINES_HEAT_COLS * steps + 0.5);
	if (n < 1)
		n = 1;
	if (n > LINES_HEAT_COLS * steps)
		n = LINES_HEAT_COLS * steps;
	buf[0] = '\0';
	for (int full = n / steps; full > 0 && pos + 4 < size; full--)
		pos += (size_t)snprintf(buf + pos, size - pos, "%s",
		                        utf8 ? "\u2588" : "#");
	if (n % steps != 0 && pos + 4 < size)
		snprintf(buf + pos, size - pos, "%s",
		         utf8 ? eighths[n % steps] : "+");
}

static void fmt_heat(const void *row, const void *ctx, int width, bool utf8,
                     char *buf, size_t size)
{
	(void)ctx, (void)width;
	heat_bar(row_of(row)->heat, utf8, buf, size);
}

/* The text from its n-th character on (UTF-8 continuation bytes belong
 * to the character before). */
static const char *skip_chars(const char *t, int n)
{
	for (; *t != '\0' && n > 0; n--)
		while (*++t != '\0' && ((unsigned char)*t & 0xC0) == 0x80)
			;
	return t;
}

static void fmt_source(const void *row, const void *ctx, int width,
                       bool utf8, char *buf, size_t size)
{
	const struct lines_screen *ls = ctx;

	(void)width, (void)utf8;
	snprintf(buf, size, "%s", skip_chars(row_of(row)->text,
	                                     ls != NULL ? ls->hscroll : 0));
}

_Static_assert(LINES_NCOLS <= TABLE_MAX_COLS, "table.hidden has a bit per column");

/* The figure columns the view never shows (bits of table.hidden). */
#define LINES_HIDDEN                                                       \
	(1UL << (LINES_COL_FIGURES + COUNT_OWN_TIME) |                     \
	 1UL << (LINES_COL_FIGURES + COUNT_TOTAL_TIME))

/* Here the source needs the room: MajFlt, Faults, Net, Mem+ (Kept says
 * what stays) and %Total (the heat bar shows it) go first; then as in the
 * function table. */
static int drop_rank(enum count_col c)
{
	switch (c) {
	case COUNT_MAJFLT:
		return 15;
	case COUNT_FAULTS:
		return 14;
	case COUNT_NET:
		return 13;
	case COUNT_MEM:
		return 12;
	case COUNT_TOTAL:
		return 11;
	default:
		return count_column(c).drop;
	}
}

/* "Source", or where the sideways scroll starts it. */
static void source_title(struct lines_screen *ls)
{
	if (ls->hscroll > 0)
		snprintf(ls->source_title, sizeof ls->source_title,
		         "Source from column %d", ls->hscroll + 1);
	else
		snprintf(ls->source_title, sizeof ls->source_title, "Source");
}

static void init_columns(struct lines_screen *ls)
{
	ls->cols[LINES_COL_LINE] = (struct table_column){
		.title = "Line", .width = 5, .right_align = true,
		.format = fmt_line,
	};
	for (int i = 0; i < COUNT_NCOLS; i++) {
		struct table_column *c = &ls->cols[LINES_COL_FIGURES + i];

		*c = count_column((enum count_col)i);
		c->drop = drop_rank((enum count_col)i);
	}
	ls->cols[LINES_COL_FIGURES].gap = 1;
	ls->cols[LINES_COL_HEAT] = (struct table_column){
		.title = "Heat", .width = LINES_HEAT_COLS, .gap = 1,
		.format = fmt_heat, .drop = 5,
	};
	source_title(ls);
	ls->cols[LINES_COL_SOURCE] = (struct table_column){
		.title = ls->source_title, .gap = 1, .format = fmt_source,
	};
	ls->table = (struct table){
		.cols = ls->cols, .ncols = LINES_NCOLS, .ctx = ls,
		.utf8 = ls->utf8, .sort_col = -1, .hidden = LINES_HIDDEN,
		.stretch_min = LINES_SOURCE_MIN_COLS,
	};
}

/* ---- state ------------------------------------------------------------- */

void lscreen_init(struct lines_screen *ls, bool utf8)
{
	memset(ls, 0, sizeof *ls);
	ls->utf8 = utf8;
	ls->cc.counts = row_counts;
	ls->pos.page = 1;
	init_columns(ls);
}

static void free_rows(struct lines_screen *ls)
{
	free(ls->rows);
	free(ls->order);
	free(ls->callees);
	ls->rows = NULL;
	ls->order = NULL;
	ls->callees = NULL;
	ls->nrows = 0;
}

void lscreen_close(struct lines_screen *ls)
{
	free_rows(ls);
	source_file_free(&ls->src);
	free(ls->name);
	free(ls->file);
	ls->name = ls->file = NULL;
	ls->open = false;
	ls->snap = NULL;
	ls->note[0] = '\0';
}

void lscreen_free(struct lines_screen *ls)
{
	lscreen_close(ls);
}

static bool same(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static const struct snap_func *find_func(const struct snapshot *s,
                                         const char *name, const char *file)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (same(s->funcs[i].name, name) &&
		    same(s->funcs[i].file, file))
			return &s->funcs[i];
	return NULL;
}

static bool is_module(const char *name)
{
	return same(name, "<module>");
}

/* The function's lines from its source: the whole file for module code,
 * else the indented block from its first line. */
static void find_extent(struct lines_screen *ls)
{
	if (!ls->src.loaded || ls->src.nlines == 0) {
		ls->last = 0; /* no extent: the sampled lines only */
		return;
	}
	if (is_module(ls->name)) {
		ls->first = 1;
		ls->last = (int)ls->src.nlines;
		return;
	}
	ls->last = source_file_block_end(&ls->src, ls->first);
}

bool lscreen_open(struct lines_screen *ls, const struct snapshot *s,
                  unsigned long shown, const char *name, const char *file,
                  int line)
{
	const struct snap_func *f = s != NULL ? find_func(s, name, file) : NULL;

	if (f == NULL)
		return false;
	lscreen_close(ls);
	ls->name = strdup(name != NULL ? name : "");
	ls->file = strdup(file != NULL ? file : "");
	if (ls->name == NULL || ls->file == NULL) {
		lscreen_close(ls);
		return false;
	}
	ls->open = true;
	ls->first = f->line;
	/* A replay's PID may be another process's by now: its source is
	 * read as the user replaying it sees it. */
	source_file_load_pid(&ls->src, s->replay.on ? 0 : s->pid, ls->file);
	ls->started = s->target_started;
	ls->stale = f->native ? SOURCE_CURRENT
	            : source_stale(&ls->src, ls->started, ls->name, ls->first);
	find_extent(ls);
	ls->sel_line = line;
	ls->follow_hottest = line <= 0;
	ls->hscroll = 0;
	source_title(ls);
	ls->pos = (struct list_pos){ .page = ls->pos.page, .center = true };
	ls->synced = shown - 1; /* anything but shown */
	lscreen_sync(ls, s, shown);
	return true;
}

/* ---- rows -------------------------------------------------------------- */

static int by_line(const void *a, const void *b)
{
	const struct lines_row *x = a, *y = b;

	return (x->line > y->line) - (x->line < y->line);
}

/* Lines in the function's extent (0 when its first line is unknown). */
static size_t extent_len(const struct lines_screen *ls)
{
	return ls->first > 0 && ls->last >= ls->first
	       ? (size_t)(ls->last - ls->first + 1) : 0;
}

static const char *text_at(const struct lines_screen *ls, int line)
{
	const char *t = source_file_line(&ls->src, line);

	return t != NULL ? t : "";
}

/* The row of line among the n filled so far (the first span of them are
 * the extent, by line), or NULL. */
static struct lines_row *row_at(struct lines_screen *ls, size_t span,
                                size_t n, int line)
{
	if (span > 0 && line >= ls->first && line <= ls->last)
		return &ls->rows[line - ls->first];
	for (size_t i = span; i < n; i++)
		if (ls->rows[i].line == line)
			return &ls->rows[i];
	return NULL;
}

/* Every line of the extent, then every sampled line of the function
 * (also those outside it: the file may have changed). */
static size_t fill_rows(struct lines_screen *ls, const struct snapshot *s)
{
	size_t n = 0, span = extent_len(ls);

	for (size_t i = 0; i < span; i++)
		ls->rows[n++] = (struct lines_row){ .line = ls->first + (int)i,
			.text = text_at(ls, ls->first + (int)i) };
	for (size_t i = 0; i < s->nlines; i++) {
		const struct snap_line *l = &s->lines[i];
		struct lines_row *r;

		if (!same(l->name, ls->name) || !same(l->file, ls->file))
			continue;
		r = row_at(ls, span, n, l->line);
		if (r == NULL) {
			r = &ls->rows[n++];
			*r = (struct lines_row){ .line = l->line,
			                         .text = text_at(ls, l->line) };
		}
		r->c = &l->c;
	}
	return n;
}

/* The rows the callees of each line take, inserted below it (rows are in
 * line order).  Without memory for them the lines show alone. */
static void add_callees(struct lines_screen *ls, const struct snapshot *s,
                        bool utf8)
{
	size_t extra = 0, n = ls->nrows, k;

	for (size_t i = 0; i < n; i++)
		extra += lines_callees_count(s, ls->file, ls->rows[i].line);
	if (extra == 0)
		return;
	struct lines_row *rows = realloc(ls->rows, (n + extra) * sizeof *rows);
	if (rows != NULL)
		ls->rows = rows;
	const void **order = realloc(ls->order, (n + extra) * sizeof *order);
	if (order != NULL)
		ls->order = order;
	ls->callees = calloc(extra, sizeof *ls->callees);
	if (rows == NULL || order == NULL || ls->callees == NULL)
		return;
	/* From the end, so that each row moves once. */
	k = extra;
	for (size_t i = n; i-- > 0;) {
		const struct lines_row line = rows[i];
		size_t m = lines_callees_count(s, ls->file, line.line);

		k -= m;
		lines_callees_fill(s, ls->file, line.line, line.text, utf8,
		                   &ls->callees[k]);
		for (size_t j = m; j-- > 0;)
			rows[i + k + 1 + j] = (struct lines_row){
				.line = line.line, .text = ls->callees[k + j].text,
				.c = &ls->callees[k + j].c, .callee = true };
		rows[i + k] = line;
	}
	ls->nrows = n + extra;
}

/* A native function without source lines (no debug info): list the
 * Python lines its samples came from instead, so that Enter on it still
 * answers "called from where?".  Without memory the view stays empty. */
static void add_callers(struct lines_screen *ls, const struct snapshot *s,
                        bool utf8)
{
	size_t n = lines_callers_count(s, ls->name, ls->file);

	if (n == 0)
		return;
	struct lines_row *rows = realloc(ls->rows, n * sizeof *rows);
	if (rows != NULL)
		ls->rows = rows;
	const void **order = realloc(ls->order, n * sizeof *order);
	if (order != NULL)
		ls->order = order;
	ls->callees = calloc(n, sizeof *ls->callees);
	if (rows == NULL || order == NULL || ls->callees == NULL)
		return;
	lines_callers_fill(s, ls->name, ls->file, utf8, ls->callees);
	for (size_t i = 0; i < n; i++)
		rows[i] = (struct lines_row){ .text = ls->callees[i].text,
		                              .c = &ls->callees[i].c,
		                              .callee = true };
	ls->nrows = n;
	ls->callers = true;
}

/* The hottest source line: most %Total, then most %Own, then the first. */
static size_t hottest(const struct lines_screen *ls)
{
	size_t best = 0;

	for (size_t i = 1; i < ls->nrows; i++) {
		const struct snap_counts *a = ls->rows[i].c,
		                         *b = ls->rows[best].c;
		if (a == NULL || ls->rows[i].callee)
			continue;
		if (b == NULL || a->total > b->total ||
		    (a->total == b->total && a->own > b->own))
			best = i;
	}
	return best;
}

static void set_heat(struct lines_screen *ls)
{
	uint64_t max = 0;

	for (size_t i = 0; i < ls->nrows; i++)
		if (ls->rows[i].c != NULL &&
		    (!ls->rows[i].callee || ls->callers) &&
		    ls->rows[i].c->total > max)
			max = ls->rows[i].c->total;
	for (size_t i = 0; i < ls->nrows; i++)
		ls->rows[i].heat = ls->rows[i].c != NULL && max > 0
		        ? (double)ls->rows[i].c->total / (double)max : 0;
}

/* Say when the source cannot be shown, or does not match the samples. */
static void set_note(struct lines_screen *ls)
{
	int past = 0;

	ls->note[0] = '\0';
	if (ls->callers) {
		snprintf(ls->note, sizeof ls->note, "no source lines (no debug "
		         "info); below, the Python lines that called it");
		return;
	}
	if (!ls->src.loaded) {
		snprintf(ls->note, sizeof ls->note, "source not available: %s",
		         ls->src.reason);
		return;
	}
	for (size_t i = 0; i < ls->nrows; i++)
		if (ls->rows[i].c != NULL &&
		    (size_t)ls->rows[i].line > ls->src.nlines)
			past = ls->rows[i].line;
	if (past > 0)
		snprintf(ls->note, sizeof ls->note, "source changed? line %d "
		         "is past the end of the file (%zu lines)", past,
		         ls->src.nlines);
	else
		source_stale_reason(ls->stale, &ls->src, ls->started, ls->name,
		                    ls->first, ls->note, sizeof ls->note);
}

/* Put the bar on the hottest line (until the user moves), else back on
 * the line it was on. */
static void place_selection(struct lines_screen *ls)
{
	size_t sel = ls->pos.sel;

	if (ls->follow_hottest && ls->nrows > 0) {
		sel = hottest(ls);
	} else {
		for (size_t i = ls->nrows; i-- > 0;)
			if (ls->rows[i].line == ls->sel_line &&
			    !ls->rows[i].callee)
				sel = i;
	}
	ls->pos.sel = sel;
	list_pos_clamp(&ls->pos, ls->nrows);
	if (ls->nrows > 0)
		ls->sel_line = ls->rows[ls->pos.sel].line;
}

static void rebuild(struct lines_screen *ls, const struct snapshot *s)
{
	size_t cap = extent_len(ls) + s->nlines;

	free_rows(ls);
	ls->cc.samples = s->recent_s > 0 ? s->recent_samples : s->samples;
	ls->idle_mode = s->idle_mode;
	ls->thread = s->thread_filter;
	ls->process = s->process_filter;
	ls->table.hidden = count_hidden(s) << LINES_COL_FIGURES | LINES_HIDDEN;
	if (cap > 0) {
		ls->rows = calloc(cap, sizeof ls->rows[0]);
		ls->order = calloc(cap, sizeof ls->order[0]);
	}
	if (cap > 0 && (ls->rows == NULL || ls->order == NULL)) {
		free_rows(ls);
		return;
	}
	ls->nrows = cap > 0 ? fill_rows(ls, s) : 0;
	if (ls->nrows > 0) /* rows is NULL without any: qsort must not see it */
		qsort(ls->rows, ls->nrows, sizeof ls->rows[0], by_line);
	add_callees(ls, s, ls->utf8);
	ls->callers = false;
	if (ls->nrows == 0)
		add_callers(ls, s, ls->utf8);
	for (size_t i = 0; i < ls->nrows; i++)
		ls->order[i] = &ls->rows[i];
	set_heat(ls);
	set_note(ls);
	place_selection(ls);
}

void lscreen_sync(struct lines_screen *ls, const struct snapshot *s,
                  unsigned long shown)
{
	if (!ls->open || (s == ls->snap && shown == ls->synced))
		return;
	ls->snap = s;
	ls->synced = shown;
	if (s == NULL) {
		free_rows(ls);
		return;
	}
	rebuild(ls, s);
}

const struct lines_row *lscreen_selected(const struct lines_screen *ls)
{
	return ls->nrows > 0 ? &ls->rows[ls->pos.sel] : NULL;
}

/* ---- drawing ----------------------------------------------------------- */

void lscreen_describe(const struct lines_screen *ls, int width, char *buf,
                      size_t size)
{
	char of[256], where[64], file[TABLE_VIEW_LINE];
	const char *flag = ls->stale != SOURCE_CURRENT
	                   ? " [source changed since start: line numbers may not match]" : "";
	const char *tname = ls->snap != NULL
	                    ? profile_thread_name(ls->snap, ls->thread) : "";
	int room;

	profile_percent_of(ls->cc.samples, ls->idle_mode, ls->thread, tname,
	                   ls->process, of, sizeof of);
	if (ls->last > ls->first)
		snprintf(where, sizeof where, ":%d-%d), ", ls->first, ls->last);
	else
		snprintf(where, sizeof where, ":%d), ", ls->first);
	/* The path gives way first, from the left: its end says most. */
	room = width - text_width(ls->name, ls->utf8) - (int)strlen(where) -
	       (int)strlen(of) - (int)strlen(flag) - (int)strlen("Source of  (");
	text_fit(file, sizeof file, ls->file, width < 0 ? -1 : room < 12 ? 12
	         : room, TEXT_CUT_LEFT, ls->utf8);
	snprintf(buf, size, "Source of %s (%s%s%s%s", ls->name, file, where, of, flag);
}

/* A row; a native function a line called (a callee row) dimmed. */
static void draw_row(const void *screen, const struct crt *crt, int y,
                     size_t i, bool selected)
{
	const struct lines_screen *ls = screen;
	char line[TABLE_VIEW_LINE];

	table_format_row(&ls->table, ls->order[i], COLS, line, sizeof line,
	                 NULL);
	if (selected)
		table_view_selected(crt, y, line);
	else
		crt_put(crt, y, 0, ls->rows[i].callee ? CRT_FILE : CRT_NORMAL,
		        line);
}

/* The note, fitted to the screen, on row y. */
static void draw_note(const struct lines_screen *ls, const struct crt *crt,
                      int y)
{
	char fitted[TABLE_VIEW_LINE];

	text_fit(fitted, sizeof fitted, ls->note, COLS, TEXT_CUT_RIGHT,
	         crt->utf8);
	crt_put(crt, y, 0, CRT_STATUS, fitted);
}

void lscreen_draw(struct lines_screen *ls, const struct crt *crt, int y,
                  int h, const char *status)
{
	/* The file's order: nothing to sort; without rows the page stays
	 * blank. */
	struct table_body body = {
		.table = &ls->table, .order = ls->order, .n = ls->nrows,
		.sort_col = -1, .draw_row = draw_row, .screen = ls,
	};
	char what[1024];
	int top = y;

	if (h <= 0 || !ls->open)
		return;
	ls->table.utf8 = crt->utf8;
	lscreen_describe(ls, COLS - text_width(status, crt->utf8) -
	                 (status[0] != '\0' ? 2 : 0), what, sizeof what);
	table_view_description(crt, y++, what, status);
	if (ls->note[0] != '\0' && y < top + h)
		draw_note(ls, crt, y++);
	table_view_body(crt, y, top + h - y, &ls->pos, &body);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static void op_init(struct tui_state *st, bool utf8)
{
	lscreen_init(&st->ls, utf8);
}

static void op_free(struct tui_state *st)
{
	lscreen_free(&st->ls);
}

static void op_sync(struct tui_state *st)
{
	lscreen_sync(&st->ls, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	lscreen_draw(&st->ls, crt, y, h, status);
}

static struct list_pos *op_list(struct tui_state *st, size_t *nrows)
{
	*nrows = st->ls.nrows;
	return &st->ls.pos;
}

/* The bar stays on the line the user chose, no longer the hottest. */
static void op_moved(struct tui_state *st)
{
	st->ls.follow_hottest = false;
	st->ls.sel_line = st->ls.rows[st->ls.pos.sel].line;
}

/* Right and Left scroll the source sideways (as htop's process list);
 * Left at the first column goes back, as everywhere in this view. */
static bool op_key(struct tui_state *st, int key, unsigned *react)
{
	struct lines_screen *ls = &st->ls;

	if (key == CRT_KEYCODE(KEY_RIGHT))
		ls->hscroll += LINES_HSCROLL_STEP;
	else if (key == CRT_KEYCODE(KEY_LEFT) && ls->hscroll > 0)
		ls->hscroll = ls->hscroll > LINES_HSCROLL_STEP
		              ? ls->hscroll - LINES_HSCROLL_STEP : 0;
	else
		return false;
	source_title(ls);
	*react = REACT_REDRAW;
	return true;
}

/* The source is read again at the next opening. */
static void op_leave(struct tui_state *st)
{
	lscreen_close(&st->ls);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	static const struct legend_item items[] = {
		{ "Esc", "Back" }, { "l", "Lines" }, { "t", "Threads" },
	};

	(void)st;
	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

/* The file's order: nothing to sort; nothing to filter or choose. */
const struct screen_ops lines_screen_ops = {
	.name = "lines",
	.init = op_init,
	.free = op_free,
	.sync = op_sync,
	.draw = op_draw,
	.list = op_list,
	.moved = op_moved,
	.leave = op_leave,
	.left_is_back = true,
	.key = op_key,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = count_column_help,
};
