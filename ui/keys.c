/* keys.c - the key table and its actions.  Table keys (moving, sorting,
 * filtering, Enter) act on the screen on display through its operations
 * (screen.h); the keys that name a screen (t, P, l, Esc) switch to it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "keys.h"

#include <stdio.h>

#include "crt.h"
#include "header.h"
#include "help_screen.h"
#include "replay_keys.h"
#include "table_view.h"

#define K(k) CRT_KEYCODE(k)
#define KEY_ESCAPE 27
#define KEY_TAB '\t'
#define LEGEND_ITEMS_MAX 12
#define LEGEND_SCREEN_MAX 4 /* a screen's own entries */

static bool on(const struct tui_state *st, const struct screen_ops *screen)
{
	return st->view == screen;
}

static unsigned act_quit(struct tui_state *st)
{
	(void)st;
	return REACT_QUIT;
}

static unsigned act_help(struct tui_state *st)
{
	st->help_from = st->view;
	st->view = &help_screen_ops;
	return REACT_REDRAW;
}

/* A key that moves the selection: on a list screen as on every list,
 * the screen told after the bar moved; on any other through its own
 * operation. */
static unsigned step_selection(struct tui_state *st, enum list_step step,
                               long count)
{
	const struct screen_ops *v = st->view;

	if (v->list != NULL) {
		size_t n = 0;
		struct list_pos *pos = v->list(st, &n);

		if (list_pos_step(pos, n, step, count) && v->moved != NULL)
			v->moved(st);
	} else if (step == LIST_ROWS && v->move_by != NULL) {
		v->move_by(st, count);
	} else if (step == LIST_PAGES && v->page != NULL) {
		v->page(st, (int)count);
	} else if (step == LIST_FIRST && v->home != NULL) {
		v->home(st);
	} else if (step == LIST_LAST && v->end != NULL) {
		v->end(st);
	}
	return REACT_REDRAW;
}

static unsigned act_up(struct tui_state *st)
{
	return step_selection(st, LIST_ROWS, -1);
}

static unsigned act_down(struct tui_state *st)
{
	return step_selection(st, LIST_ROWS, 1);
}

static unsigned act_page_up(struct tui_state *st)
{
	return step_selection(st, LIST_PAGES, -1);
}

static unsigned act_page_down(struct tui_state *st)
{
	return step_selection(st, LIST_PAGES, 1);
}

static unsigned act_home(struct tui_state *st)
{
	return step_selection(st, LIST_FIRST, 0);
}

static unsigned act_end(struct tui_state *st)
{
	return step_selection(st, LIST_LAST, 0);
}

static unsigned sort(struct tui_state *st, int dir)
{
	if (st->view->sort == NULL)
		return REACT_NONE;
	st->view->sort(st, dir);
	return REACT_REDRAW;
}

static unsigned act_sort_next(struct tui_state *st)
{
	return sort(st, 1);
}

static unsigned act_sort_prev(struct tui_state *st)
{
	return sort(st, -1);
}

/* From the threads or processes screen or a function's source: the line
 * table at once. */
static unsigned act_lines(struct tui_state *st)
{
	if (!on(st, &functions_screen_ops)) {
		tui_switch(st, &functions_screen_ops);
		if (st->fs.mode != PROFILE_LINES)
			fscreen_toggle_mode(&st->fs);
	} else {
		fscreen_toggle_mode(&st->fs);
	}
	return REACT_REDRAW;
}

/* F: the function table's whole names and paths, or back. */
static unsigned act_full_names(struct tui_state *st)
{
	if (!on(st, &functions_screen_ops))
		return REACT_NONE;
	fscreen_toggle_full_names(&st->fs);
	return REACT_REDRAW;
}

/* g: with --native, one row per native library, or each function. */
static unsigned act_libraries(struct tui_state *st)
{
	if (!on(st, &functions_screen_ops) || !st->have_snap ||
	    !st->snap.native)
		return REACT_NONE;
	fscreen_toggle_libraries(&st->fs);
	return REACT_REDRAW;
}

static unsigned act_threads(struct tui_state *st)
{
	tui_switch(st, on(st, &threads_screen_ops) ? &functions_screen_ops
	                                           : &threads_screen_ops);
	return REACT_REDRAW;
}

/* P: the processes screen, or back from it.  Without -s there is no
 * family to show: the status line says so instead. */
static unsigned act_processes(struct tui_state *st)
{
	if (!on(st, &processes_screen_ops) && !tui_following(st)) {
		st->note = st->replay ? "[no processes: the recording was made without -s]"
		                      : "[no processes: start pytop with -s]";
		return REACT_REDRAW;
	}
	tui_switch(st, on(st, &processes_screen_ops) ? &functions_screen_ops
	                                             : &processes_screen_ops);
	return REACT_REDRAW;
}

/* T: the call tree, or back from it. */
static unsigned act_tree(struct tui_state *st)
{
	tui_switch(st, on(st, &tree_screen_ops) ? &functions_screen_ops
	                                        : &tree_screen_ops);
	return REACT_REDRAW;
}

/* G: the flame graph, or back from it. */
static unsigned act_flame(struct tui_state *st)
{
	tui_switch(st, on(st, &flame_screen_ops) ? &functions_screen_ops
	                                         : &flame_screen_ops);
	return REACT_REDRAW;
}

/* Enter: what the screen on display does with its selected row. */
static unsigned act_enter(struct tui_state *st)
{
	return st->view->select != NULL ? st->view->select(st) : REACT_NONE;
}

/* a: every thread's and every process's functions again. */
static unsigned act_all(struct tui_state *st)
{
	if (st->process_filter != 0)
		return tui_filter_process(st, 0);
	return st->thread_filter != 0 ? tui_filter_thread(st, 0) : REACT_NONE;
}

/* Esc backs out one step: a function's source or the threads or
 * processes screen -> functions (their selection as it was; from the
 * call tree, the source goes back to the tree), one thread
 * or process -> all. */
static unsigned act_escape(struct tui_state *st)
{
	if (on(st, &lines_screen_ops) && st->lines_from != NULL) {
		tui_switch(st, st->lines_from);
		return REACT_REDRAW;
	}
	if (!on(st, &functions_screen_ops)) {
		tui_switch(st, &functions_screen_ops);
		return REACT_REDRAW;
	}
	return act_all(st);
}

/* Left: out of a function's source, like Esc; nothing elsewhere. */
static unsigned act_left(struct tui_state *st)
{
	return st->view->left_is_back ? act_escape(st) : REACT_NONE;
}

static unsigned act_pause(struct tui_state *st)
{
	if (st->exited)
		return REACT_NONE; /* nothing changes any more */
	st->paused = !st->paused;
	/* Resuming shows the newest figures at once. */
	return st->paused ? REACT_REDRAW : REACT_REDRAW | REACT_REFRESH;
}

static unsigned act_reset(struct tui_state *st)
{
	/* After exit the figures on screen are final: keep them. */
	if (st->exited)
		return REACT_NONE;
	st->fs.since_reset = true;
	return REACT_RESET | REACT_REFRESH | REACT_REDRAW;
}

/* --native: show or hide the interpreter's own frames; the counts start
 * again, so no row mixes the two views. */
static unsigned act_native_all(struct tui_state *st)
{
	if (st->exited || !st->have_snap || !st->snap.native)
		return REACT_NONE;
	st->native_all = !st->native_all;
	st->fs.since_reset = true;
	return REACT_NATIVE_ALL | REACT_REFRESH | REACT_REDRAW;
}

/* w: since start, then the last 10, 30 and 60 seconds, then since start
 * again. */
static unsigned act_window(struct tui_state *st)
{
	static const double steps[] = { 0, 10, 30, 60 };
	size_t n = sizeof steps / sizeof steps[0], i = 0;

	while (i < n && steps[i] != st->window_s)
		i++;
	st->window_s = steps[(i + 1) % n];
	return REACT_WINDOW | REACT_REDRAW;
}

static unsigned act_filter(struct tui_state *st)
{
	if (st->view->filter == NULL)
		return REACT_NONE;
	prompt_open(&st->prompt, "Filter", st->view->filter(st));
	return REACT_REDRAW;
}

static unsigned act_export(struct tui_state *st)
{
	(void)st;
	return REACT_EXPORT | REACT_REDRAW;
}

static unsigned act_repaint(struct tui_state *st)
{
	(void)st;
	return REACT_CLEAR | REACT_REDRAW;
}

static const struct binding bindings[] = {
	{ { K(KEY_UP) }, "Up", "select the row above / below", act_up },
	{ { K(KEY_DOWN) }, "Down", NULL, act_down },
	{ { K(KEY_PPAGE) }, "PgUp", "one page up / down", act_page_up },
	{ { K(KEY_NPAGE) }, "PgDn", NULL, act_page_down },
	{ { K(KEY_HOME) }, "Home", "first / last row", act_home },
	{ { K(KEY_END) }, "End", NULL, act_end },
	{ { '>', '.', K(KEY_F(6)) }, "> . F6",
	  "sort by the next / previous column", act_sort_next },
	{ { '<', ',' }, "< ,", NULL, act_sort_prev },
	{ { 'l' }, "l", "switch between function rows and line rows",
	  act_lines },
	{ { 'F' }, "F", "whole function names and paths (fewer columns); again: back",
	  act_full_names },
	{ { 't', K(KEY_F(7)), KEY_TAB }, "t F7 Tab",
	  "t threads, P processes (-s), T tree, G flame; again: back",
	  act_threads },
	/* On the line of t: the help screen must fit 80x24 (the tree's
	 * own keys are in its column help). */
	{ { 'P', K(KEY_F(5)) }, "P F5", NULL, act_processes },
	{ { 'T' }, "T", NULL, act_tree },
	{ { 'G' }, "G", NULL, act_flame },
	{ { '\r', '\n', K(KEY_ENTER) }, "Enter",
	  "on a function: its source; on a thread or process: its functions",
	  act_enter },
	{ { 'a' }, "a", "functions and lines of all threads and processes again",
	  act_all },
	{ { KEY_ESCAPE }, "Esc",
	  "back one step; in the source, Right / Left scroll it sideways",
	  act_escape },
	{ { K(KEY_LEFT) }, "Left", NULL, act_left },
	{ { '/', K(KEY_F(4)) }, "/ F4",
	  "filter rows by a substring (Enter applies, empty clears)",
	  act_filter },
	{ { 'w' }, "w", "tables over the last 10, 30, 60 s, or since start",
	  act_window },
	{ { ' ', 'p' }, "Space p",
	  "pause the display (sampling goes on); again to resume",
	  act_pause },
	{ { 'r' }, "r", "reset counts (--native: n interpreter frames, g by library)", act_reset },
	/* Listed in --help and the man page; the help screen must fit 80x24. */
	{ { 'n' }, "n", NULL, act_native_all },
	{ { 'g' }, "g", NULL, act_libraries },
	{ { '?', 'h', K(KEY_F(1)) }, "? h F1", "this help / repaint the screen",
	  act_help },
	{ { CRT_CTRL('l') }, "Ctrl-L", NULL, act_repaint },
	{ { 'q', 'Q', K(KEY_F(10)) }, "q F10",
	  "quit; E: write the export now (pytop -o FILE --format FMT)", act_quit },
	/* On the line of q: the help screen must fit 80x24. */
	/* Not e: the call tree's "open the hottest path". */
	{ { 'E' }, "E", NULL, act_export },
};

#define NBINDINGS (sizeof bindings / sizeof bindings[0])

const struct binding *keys_bindings(size_t *n)
{
	*n = NBINDINGS;
	return bindings;
}

static const struct binding *find_binding(int key)
{
	for (size_t i = 0; i < NBINDINGS; i++)
		for (size_t k = 0; k < KEYS_PER_BINDING; k++) {
			if (bindings[i].keys[k] == 0)
				break;
			if (bindings[i].keys[k] == key)
				return &bindings[i];
		}
	return NULL;
}

unsigned keys_handle(struct tui_state *st, int key)
{
	const struct binding *b;
	unsigned react = REACT_NONE;

	if (key == CRT_NO_KEY)
		return REACT_NONE;
	st->note = NULL; /* said once: any key clears it */
	if (key == K(KEY_RESIZE))
		return REACT_CLEAR | REACT_REDRAW;
	if (st->view->key != NULL && st->view->key(st, key, &react))
		return react;
	/* The screens borrow the snapshot on display: rebuild them if it
	 * changed since. */
	tui_sync(st);
	if (st->prompt.active) {
		if (prompt_key(&st->prompt, key) == PROMPT_ACCEPTED &&
		    st->view->set_filter != NULL)
			st->view->set_filter(st, st->prompt.text);
		return REACT_REDRAW;
	}
	if (replay_keys_handle(st, key, &react))
		return react;
	b = find_binding(key);
	return b != NULL ? b->action(st) : REACT_NONE;
}

size_t legend_copy(struct legend_item *out, size_t max,
                   const struct legend_item *items, size_t n)
{
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = items[i];
	return n;
}

size_t keys_legend(const struct tui_state *st, struct legend_item *out,
                   size_t max)
{
	struct legend_item items[LEGEND_ITEMS_MAX];
	const struct screen_ops *view = st->view;
	size_t n = 0;

	items[n++] = (struct legend_item){ "F1", "Help" };
	if (view->filter != NULL)
		items[n++] = (struct legend_item){ "F4", "Filter" };
	if (view->sort != NULL)
		items[n++] = (struct legend_item){ "F6", "Sort" };
	if (view->legend != NULL)
		n += view->legend(st, items + n, LEGEND_SCREEN_MAX);
	if (st->thread_filter != 0 || st->process_filter != 0)
		items[n++] = (struct legend_item){ "a", "All" };
	if (st->replay) {
		items[n++] = (struct legend_item){ "Spc", st->playing ? "Pause" : "Play" };
		items[n++] = (struct legend_item){ ",.", "Step" };
		items[n++] = (struct legend_item){ "[]", "Window" };
		items[n++] = (struct legend_item){ "F10", "Quit" };
		return legend_copy(out, max, items, n);
	}
	items[n++] = (struct legend_item){ "p",
	                                   st->paused ? "Resume" : "Pause" };
	if (view->legend_reset)
		items[n++] = (struct legend_item){ "r", "Reset" };
	items[n++] = (struct legend_item){ "F10", "Quit" };
	return legend_copy(out, max, items, n);
}

void keys_status(const struct tui_state *st, char *buf, size_t size)
{
	char exit_note[256];

	header_exit_note(&st->snap, exit_note, sizeof exit_note);
	snprintf(buf, size, "%s%s%s%s%s", st->note != NULL ? st->note : "",
	         st->note != NULL && (st->paused || exit_note[0] != '\0')
	         ? " " : "", st->paused ? "[paused]" : "",
	         st->paused && exit_note[0] != '\0' ? " " : "", exit_note);
}
