/* flame_screen.c - state, keys and drawing of the flame graph screen. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "flame_screen.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "profile_table.h"
#include "table_view.h"
#include "text.h"
#include "tui_state.h"

#define KEY_ESCAPE 27
#define LABEL_MIN_COLS 3 /* a block this wide shows its name's start */

/* ---- state ------------------------------------------------------------- */

static uint32_t node_of_path(const struct call_tree *t, uint64_t path)
{
	for (uint32_t i = 1; path != 0 && i < t->n; i++)
		if (t->nodes[i].path == path)
			return i;
	return 0;
}

static bool under(const struct call_tree *t, uint32_t n, uint32_t top)
{
	for (; n != CALL_NONE; n = t->nodes[n].parent)
		if (n == top)
			return true;
	return false;
}

static void select_node(struct flame_screen *fs, uint32_t n)
{
	fs->sel = n;
	fs->sel_path = fs->tree.n > n ? fs->tree.nodes[n].path : 0;
}

void flamescr_sync(struct flame_screen *fs, const struct snapshot *s,
                   unsigned long shown)
{
	if (!table_view_resync(&fs->snap, &fs->synced, s, shown))
		return;
	flame_layout_free(&fs->layout);
	call_tree_free(&fs->tree);
	if (s == NULL)
		return;
	/* Ordered by name: a block keeps its place while others grow. */
	call_tree_build(&fs->tree, s);
	fs->zoom = fs->tree.n > 0 ? node_of_path(&fs->tree, fs->zoom_path) : 0;
	fs->sel = fs->tree.n > 0 ? node_of_path(&fs->tree, fs->sel_path) : 0;
	if (fs->tree.n > 0 && !under(&fs->tree, fs->sel, fs->zoom))
		fs->sel = fs->zoom;
}

const struct call_node *flamescr_selected(const struct flame_screen *fs)
{
	return fs->tree.n > fs->sel ? &fs->tree.nodes[fs->sel] : NULL;
}

void flamescr_beside(struct flame_screen *fs, int dir)
{
	size_t i = flame_layout_find(&fs->layout, fs->sel);

	if (i < fs->layout.n)
		select_node(fs, fs->layout.blocks[
		            flame_layout_beside(&fs->layout, i, dir)].node);
}

void flamescr_up_down(struct flame_screen *fs, int dir)
{
	const struct call_tree *t = &fs->tree;

	if (t->n == 0)
		return;
	if (dir < 0 && fs->sel != fs->zoom) {
		select_node(fs, t->nodes[fs->sel].parent);
		return;
	}
	/* down: the widest block under it that was drawn (not drawn
	 * yet: the widest child) */
	uint32_t best = CALL_NONE;
	for (uint32_t c = t->nodes[fs->sel].first_child; dir > 0 &&
	     c != CALL_NONE; c = t->nodes[c].next_sibling)
		if ((fs->layout.n == 0 ||
		     flame_layout_find(&fs->layout, c) < fs->layout.n) &&
		    (best == CALL_NONE ||
		     t->nodes[c].c.total > t->nodes[best].c.total))
			best = c;
	if (best != CALL_NONE)
		select_node(fs, best);
}

void flamescr_zoom_in(struct flame_screen *fs)
{
	fs->zoom = fs->sel;
	fs->zoom_path = fs->sel_path;
}

bool flamescr_zoom_out(struct flame_screen *fs)
{
	if (fs->zoom == 0 || fs->tree.n == 0)
		return false;
	fs->zoom = fs->tree.nodes[fs->zoom].parent;
	fs->zoom_path = fs->zoom != 0 ? fs->tree.nodes[fs->zoom].path : 0;
	return true;
}

/* ---- drawing ----------------------------------------------------------- */

static enum crt_elem kind_elem(enum flame_kind k)
{
	return k == FLAME_SYSTEM ? CRT_FLAME_SYS
	       : k == FLAME_NATIVE ? CRT_FLAME_NAT : CRT_FLAME_PY;
}

/* Without colour the fill says the kind. */
static char kind_fill(enum flame_kind k, bool color)
{
	if (color)
		return ' ';
	return k == FLAME_SYSTEM ? '#' : k == FLAME_NATIVE ? '=' : '-';
}

static void block_text(const struct flame_screen *fs,
                       const struct flame_block *b, bool color, char *buf,
                       size_t size)
{
	const struct call_node *n = &fs->tree.nodes[b->node];
	const char *name = b->node == 0 ? "all" : n->name;
	char label[1024];
	int used = 0;
	size_t len;

	/* a separator, then the name while it fits, then the fill */
	len = (size_t)snprintf(buf, size, "%s", fs->utf8 ? "\u258f" : "|");
	if (b->width - 1 >= LABEL_MIN_COLS) {
		used = text_fit(label, sizeof label, name != NULL ? name : "",
		                b->width - 1, TEXT_CUT_RIGHT, fs->utf8);
		len += (size_t)snprintf(buf + len, size - len, "%s", label);
	}
	for (int i = 1 + used; i < b->width && len + 1 < size; i++)
		buf[len++] = kind_fill(b->kind, color);
	buf[len] = '\0';
}

/* The line above the graph starts with the kinds' key: their fill
 * characters, or (colour) their names painted in their colours. */
static const char *const kind_key[] = { "Py", "Nat", "Sys" };

static void describe(const struct flame_screen *fs, bool color,
                     bool since_reset, char *buf, size_t size)
{
	const struct snapshot *s = fs->snap;
	char of[256], zoom[600] = "", span[64];

	profile_percent_of(fs->tree.samples, s->idle_mode, s->thread_filter,
	                   profile_thread_name(s, s->thread_filter),
	                   s->process_filter, of, sizeof of);
	if (fs->zoom != 0)
		snprintf(zoom, sizeof zoom, ", in %s",
		         fs->tree.nodes[fs->zoom].name);
	snprintf(buf, size, "Flame (%s) %s, %s%s",
	         color ? "Py Nat Sys" : "-Py =Nat #Sys",
	         profile_span(s, since_reset, span, sizeof span), of, zoom);
}

static void paint_kind_key(const struct crt *crt, int y, const char *line,
                           bool utf8)
{
	const char *at = strchr(line, '(');
	char before[TABLE_VIEW_LINE];

	for (int k = 0; crt->color && at != NULL && k < 3; k++) {
		at = strstr(at, kind_key[k]);
		if (at == NULL)
			return;
		snprintf(before, sizeof before, "%.*s", (int)(at - line), line);
		crt_put(crt, y, text_width(before, utf8),
		        kind_elem((enum flame_kind)k), kind_key[k]);
	}
}

/* The last row: the selected block's function, shares and split. */
static void selected_status(const struct flame_screen *fs, char *buf,
                            size_t size)
{
	const struct call_node *n = flamescr_selected(fs);
	const struct snap_split *u = &fs->layout.under[fs->sel];
	double all = fs->tree.samples > 0 ? (double)fs->tree.samples : 1;
	char where[600];

	if (fs->sel == 0)
		snprintf(where, sizeof where, "all");
	else if (n->other || (n->file[0] == '\0' && n->line <= 0))
		snprintf(where, sizeof where, "%s", n->name);
	else if (n->native && n->line <= 0)
		snprintf(where, sizeof where, "%s (%s)", n->name, n->module);
	else
		snprintf(where, sizeof where, "%s (%s:%d)", n->name, n->file,
		         n->line);
	snprintf(buf, size, "%s  %%Total %.1f  %%Own %.1f  under it: Py %.1f "
	         "Nat %.1f Sys %.1f", where, 100.0 * (double)n->c.total / all,
	         100.0 * (double)n->c.own / all, 100.0 * u->python / all,
	         100.0 * u->native / all, 100.0 * u->system / all);
}

void flamescr_draw(struct flame_screen *fs, const struct crt *crt, int y,
                   int h, const char *status, bool since_reset)
{
	char line[TABLE_VIEW_LINE], text[TABLE_VIEW_LINE];

	if (h <= 0 || fs->snap == NULL)
		return;
	describe(fs, crt->color, since_reset, text, sizeof text);
	text_fit(line, sizeof line, text, COLS, TEXT_CUT_RIGHT, fs->utf8);
	table_view_description(crt, y, line, status);
	paint_kind_key(crt, y, line, fs->utf8);
	flame_layout_free(&fs->layout);
	if (h < 3 || fs->tree.n <= 1) {
		if (h > 1)
			crt_put(crt, y + 1, 0, CRT_NORMAL, "  (no stacks yet)");
		return;
	}
	flame_layout_build(&fs->layout, &fs->tree, fs->zoom, COLS, h - 2);
	if (flame_layout_find(&fs->layout, fs->sel) == fs->layout.n)
		select_node(fs, fs->zoom);
	for (size_t i = 0; i < fs->layout.n; i++) {
		const struct flame_block *b = &fs->layout.blocks[i];

		block_text(fs, b, crt->color, text, sizeof text);
		crt_put(crt, y + 1 + b->row, b->x,
		        b->node == fs->sel ? CRT_SELECTED : kind_elem(b->kind),
		        text);
	}
	selected_status(fs, text, sizeof text);
	text_fit(line, sizeof line, text, COLS, TEXT_CUT_RIGHT, fs->utf8);
	crt_put(crt, y + h - 1, 0, CRT_STATUS, line);
}

/* ---- as a screen (screen.h) -------------------------------------------- */

static const char *const column_help[] = {
	"Each block is a function under its caller, as wide as its %Total;",
	"  siblings by name.  Colour (or fill - = #): Python, native or system",
	"  time, whichever dominates it and what it called.",
	"Left Right: the block beside; Up: caller; Down: hottest callee;",
	"  Enter: zoom into it; Esc: zoom out.  The last row: the selected block.",
	NULL,
};

static void op_init(struct tui_state *st, bool utf8)
{
	memset(&st->fg, 0, sizeof st->fg);
	st->fg.utf8 = utf8;
}

static void op_free(struct tui_state *st)
{
	flame_layout_free(&st->fg.layout);
	call_tree_free(&st->fg.tree);
	st->fg.snap = NULL;
}

static void op_sync(struct tui_state *st)
{
	/* Only while on display: a tree costs a walk of every stack. */
	if (st->view == &flame_screen_ops)
		flamescr_sync(&st->fg, tui_snapshot(st), st->shown);
}

static void op_draw(struct tui_state *st, const struct crt *crt, int y,
                    int h, const char *status)
{
	flamescr_sync(&st->fg, tui_snapshot(st), st->shown);
	flamescr_draw(&st->fg, crt, y, h, status, st->fs.since_reset);
}

static bool op_key(struct tui_state *st, int key, unsigned *react)
{
	struct flame_screen *fs = &st->fg;

	if (key == CRT_KEYCODE(KEY_RIGHT))
		flamescr_beside(fs, 1);
	else if (key == CRT_KEYCODE(KEY_LEFT))
		flamescr_beside(fs, -1);
	else if (key == '\r' || key == '\n' || key == CRT_KEYCODE(KEY_ENTER))
		flamescr_zoom_in(fs);
	else if (key != KEY_ESCAPE || !flamescr_zoom_out(fs))
		return false;
	*react = REACT_REDRAW;
	return true;
}

static void op_move(struct tui_state *st, long delta)
{
	flamescr_up_down(&st->fg, delta < 0 ? -1 : 1);
}

static void op_page(struct tui_state *st, int dir)
{
	flamescr_up_down(&st->fg, dir);
}

static void op_home(struct tui_state *st)
{
	select_node(&st->fg, st->fg.zoom);
}

static void op_end(struct tui_state *st)
{
	struct flame_screen *fs = &st->fg;
	uint32_t was;

	do {
		was = fs->sel;
		flamescr_up_down(fs, 1);
	} while (fs->sel != was);
}

static size_t op_legend(const struct tui_state *st, struct legend_item *out,
                        size_t max)
{
	static const struct legend_item items[] = {
		{ "Enter", "Zoom" }, { "Esc", "Out" }, { "G", "Back" },
	};

	(void)st;
	return legend_copy(out, max, items, sizeof items / sizeof items[0]);
}

const struct screen_ops flame_screen_ops = {
	.name = "flame",
	.init = op_init,
	.free = op_free,
	.sync = op_sync,
	.draw = op_draw,
	.key = op_key,
	.move_by = op_move,
	.page = op_page,
	.home = op_home,
	.end = op_end,
	.legend = op_legend,
	.legend_reset = true,
	.column_help = column_help,
};
