/* keys.c - the key table and its actions.  Table keys (moving, sorting,
 * filtering) act on the screen on display: the functions / lines table,
 * the threads table, the processes tree, or one function's source (the
 * lines view). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "keys.h"

#include <stdio.h>

#include "crt.h"
#include "header.h"

#define K(k) CRT_KEYCODE(k)
#define KEY_ESCAPE 27
#define KEY_TAB '\t'
#define LEGEND_ITEMS_MAX 10

static bool on_threads(const struct tui_state *st)
{
	return st->view == VIEW_THREADS;
}

static bool on_source(const struct tui_state *st)
{
	return st->view == VIEW_LINES;
}

static bool on_processes(const struct tui_state *st)
{
	return st->view == VIEW_PROCESSES;
}

/* -s: the snapshot on display lists the followed family. */
static bool following(const struct tui_state *st)
{
	const struct snapshot *s = fscreen_snapshot(&st->fs);

	return s != NULL && s->following;
}

/* Leave the lines view for view (its source is read again next time). */
static void leave_source(struct tui_state *st, enum tui_view view)
{
	lscreen_close(&st->ls);
	st->view = view;
}

static unsigned act_quit(struct tui_state *st)
{
	(void)st;
	return REACT_QUIT;
}

static unsigned act_help(struct tui_state *st)
{
	st->help = true;
	return REACT_REDRAW;
}

static unsigned move_by(struct tui_state *st, long delta)
{
	if (on_threads(st))
		tscreen_move(&st->ts, delta);
	else if (on_processes(st))
		pscreen_move(&st->ps, delta);
	else if (on_source(st))
		lscreen_move(&st->ls, delta);
	else
		fscreen_move(&st->fs, delta);
	return REACT_REDRAW;
}

static unsigned act_up(struct tui_state *st)
{
	return move_by(st, -1);
}

static unsigned act_down(struct tui_state *st)
{
	return move_by(st, 1);
}

static unsigned page(struct tui_state *st, int dir)
{
	if (on_threads(st))
		tscreen_page(&st->ts, dir);
	else if (on_processes(st))
		pscreen_page(&st->ps, dir);
	else if (on_source(st))
		lscreen_page(&st->ls, dir);
	else
		fscreen_page(&st->fs, dir);
	return REACT_REDRAW;
}

static unsigned act_page_up(struct tui_state *st)
{
	return page(st, -1);
}

static unsigned act_page_down(struct tui_state *st)
{
	return page(st, 1);
}

static unsigned act_home(struct tui_state *st)
{
	if (on_threads(st))
		tscreen_home(&st->ts);
	else if (on_processes(st))
		pscreen_home(&st->ps);
	else if (on_source(st))
		lscreen_home(&st->ls);
	else
		fscreen_home(&st->fs);
	return REACT_REDRAW;
}

static unsigned act_end(struct tui_state *st)
{
	if (on_threads(st))
		tscreen_end(&st->ts);
	else if (on_processes(st))
		pscreen_end(&st->ps);
	else if (on_source(st))
		lscreen_end(&st->ls);
	else
		fscreen_end(&st->fs);
	return REACT_REDRAW;
}

/* The lines view keeps the file's order, the processes screen the
 * tree's: nothing to sort. */
static unsigned sort(struct tui_state *st, int dir)
{
	if (on_source(st) || on_processes(st))
		return REACT_NONE;
	if (on_threads(st))
		tscreen_cycle_sort(&st->ts, dir);
	else
		fscreen_cycle_sort(&st->fs, dir);
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
	if (on_threads(st) || on_processes(st) || on_source(st)) {
		leave_source(st, VIEW_PROFILE);
		if (st->fs.mode != PROFILE_LINES)
			fscreen_toggle_mode(&st->fs);
	} else {
		fscreen_toggle_mode(&st->fs);
	}
	return REACT_REDRAW;
}

static unsigned act_threads(struct tui_state *st)
{
	leave_source(st, on_threads(st) ? VIEW_PROFILE : VIEW_THREADS);
	return REACT_REDRAW;
}

/* P: the processes screen, or back from it.  Without -s there is no
 * family to show: the status line says so instead. */
static unsigned act_processes(struct tui_state *st)
{
	if (!on_processes(st) && !following(st)) {
		st->note = "[no processes: start pytop with -s]";
		return REACT_REDRAW;
	}
	leave_source(st, on_processes(st) ? VIEW_PROFILE : VIEW_PROCESSES);
	return REACT_REDRAW;
}

/* Ask the source for one thread's functions (0: all threads'). */
static unsigned set_thread_filter(struct tui_state *st, pid_t tid)
{
	st->thread_filter = tid;
	return REACT_THREAD_FILTER | REACT_REDRAW;
}

/* Enter on a function: its source.  On a line of the line table: the
 * source of its function, with that line selected. */
static unsigned open_source(struct tui_state *st)
{
	const struct profile_row *r;

	if (st->fs.table.n == 0)
		return REACT_NONE;
	r = profile_table_row(&st->fs.table, st->fs.pos.sel);
	if (!lscreen_open(&st->ls, fscreen_snapshot(&st->fs), st->fs.shown,
	                  r->name, r->file,
	                  st->fs.mode == PROFILE_LINES ? r->line : 0))
		return REACT_NONE;
	st->view = VIEW_LINES;
	return REACT_REDRAW;
}

/* Ask the source for one process's functions (0: all processes'); a
 * thread filter would win over it in the engine, so it goes. */
static unsigned set_process_filter(struct tui_state *st, pid_t pid)
{
	st->process_filter = pid;
	st->thread_filter = 0;
	return REACT_PROCESS_FILTER | REACT_THREAD_FILTER | REACT_REDRAW;
}

/* Enter on a process: its functions and lines only, if it is sampled. */
static unsigned choose_process(struct tui_state *st)
{
	const struct snap_process *p = pscreen_selected(&st->ps);

	if (p == NULL)
		return REACT_NONE;
	if (p->state != PROCESS_PYTHON && p->samples == 0) {
		st->note = "[not sampled: choose a Python process]";
		return REACT_REDRAW;
	}
	st->view = VIEW_PROFILE;
	return set_process_filter(st, p->pid);
}

/* Enter on a thread or a process: its functions and lines only. */
static unsigned act_enter(struct tui_state *st)
{
	pid_t tid;

	if (on_source(st))
		return REACT_NONE;
	if (on_processes(st))
		return choose_process(st);
	if (!on_threads(st))
		return open_source(st);
	tid = tscreen_selected(&st->ts);
	if (tid == 0)
		return REACT_NONE;
	st->view = VIEW_PROFILE;
	return set_thread_filter(st, tid);
}

/* a: every thread's and every process's functions again. */
static unsigned act_all(struct tui_state *st)
{
	if (st->process_filter != 0)
		return set_process_filter(st, 0);
	return st->thread_filter != 0 ? set_thread_filter(st, 0) : REACT_NONE;
}

/* Esc backs out one step: a function's source or the threads or
 * processes screen -> functions (their selection as it was), one thread
 * or process -> all. */
static unsigned act_escape(struct tui_state *st)
{
	if (on_threads(st) || on_processes(st) || on_source(st)) {
		leave_source(st, VIEW_PROFILE);
		return REACT_REDRAW;
	}
	return act_all(st);
}

/* Left: out of a function's source, like Esc; nothing elsewhere. */
static unsigned act_left(struct tui_state *st)
{
	return on_source(st) ? act_escape(st) : REACT_NONE;
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
	if (st->exited || !st->fs.have_snap || !st->fs.snap.native)
		return REACT_NONE;
	st->native_all = !st->native_all;
	st->fs.since_reset = true;
	return REACT_NATIVE_ALL | REACT_REFRESH | REACT_REDRAW;
}

static unsigned act_filter(struct tui_state *st)
{
	if (on_source(st))
		return REACT_NONE;
	prompt_open(&st->prompt, "Filter",
	            on_threads(st) ? st->ts.filter
	            : on_processes(st) ? st->ps.filter : st->fs.filter);
	return REACT_REDRAW;
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
	  "sort by the next column", act_sort_next },
	{ { '<', ',' }, "< ,", "sort by the previous column", act_sort_prev },
	{ { 'l' }, "l", "switch between function rows and line rows",
	  act_lines },
	{ { 't', K(KEY_F(7)), KEY_TAB }, "t F7 Tab",
	  "t: the threads screen; P: the processes tree (-s); again: back",
	  act_threads },
	/* On the line of t: the help screen must fit 80x24. */
	{ { 'P', K(KEY_F(5)) }, "P F5", NULL, act_processes },
	{ { '\r', '\n', K(KEY_ENTER) }, "Enter",
	  "on a function: its source; on a thread or process: its functions",
	  act_enter },
	{ { 'a' }, "a", "functions and lines of all threads and processes again",
	  act_all },
	{ { KEY_ESCAPE }, "Esc",
	  "back: to the functions screen; one thread or process to all",
	  act_escape },
	{ { K(KEY_LEFT) }, "Left", NULL, act_left },
	{ { '/', K(KEY_F(4)) }, "/ F4",
	  "filter rows by a substring (Enter applies, empty clears)",
	  act_filter },
	{ { ' ', 'p' }, "Space p",
	  "pause the display (sampling goes on); again to resume",
	  act_pause },
	{ { 'r' }, "r", "reset counts (n: --native interpreter frames on/off)", act_reset },
	/* Listed in --help and the man page; the help screen must fit 80x24. */
	{ { 'n' }, "n", NULL, act_native_all },
	{ { CRT_CTRL('l') }, "Ctrl-L", "repaint the screen", act_repaint },
	{ { '?', 'h', K(KEY_F(1)) }, "? h F1", "this help", act_help },
	{ { 'q', 'Q', K(KEY_F(10)) }, "q F10", "quit", act_quit },
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

static void apply_filter(struct tui_state *st, const char *text)
{
	if (on_threads(st))
		tscreen_set_filter(&st->ts, text);
	else if (on_processes(st))
		pscreen_set_filter(&st->ps, text);
	else
		fscreen_set_filter(&st->fs, text);
}

unsigned keys_handle(struct tui_state *st, int key)
{
	const struct binding *b;

	if (key == CRT_NO_KEY)
		return REACT_NONE;
	st->note = NULL; /* said once: any key clears it */
	if (key == K(KEY_RESIZE))
		return REACT_CLEAR | REACT_REDRAW;
	if (st->help) {
		/* Any key closes the help screen (as in htop). */
		st->help = false;
		return REACT_REDRAW;
	}
	/* The threads, processes and source rows borrow the snapshot on
	 * display: rebuild them if it changed since. */
	tscreen_sync(&st->ts, fscreen_snapshot(&st->fs), st->fs.shown);
	pscreen_sync(&st->ps, fscreen_snapshot(&st->fs), st->fs.shown);
	lscreen_sync(&st->ls, fscreen_snapshot(&st->fs), st->fs.shown);
	if (st->prompt.active) {
		if (prompt_key(&st->prompt, key) == PROMPT_ACCEPTED)
			apply_filter(st, st->prompt.text);
		return REACT_REDRAW;
	}
	b = find_binding(key);
	return b != NULL ? b->action(st) : REACT_NONE;
}

size_t keys_legend(const struct tui_state *st, struct legend_item *out,
                   size_t max)
{
	struct legend_item items[LEGEND_ITEMS_MAX];
	size_t n = 0;

	items[n++] = (struct legend_item){ "F1", "Help" };
	if (on_source(st)) {
		items[n++] = (struct legend_item){ "Esc", "Back" };
		items[n++] = (struct legend_item){ "l", "Lines" };
		items[n++] = (struct legend_item){ "t", "Threads" };
	} else {
		items[n++] = (struct legend_item){ "F4", "Filter" };
		if (!on_processes(st))
			items[n++] = (struct legend_item){ "F6", "Sort" };
	}
	if (on_threads(st) || on_processes(st)) {
		items[n++] = (struct legend_item){ "Enter", "Funcs" };
		items[n++] = (struct legend_item){ on_threads(st) ? "t" : "P",
		                                   "Back" };
	} else if (!on_source(st)) {
		items[n++] = (struct legend_item){ "Enter", "Source" };
		items[n++] = (struct legend_item){ "l",
			st->fs.mode == PROFILE_LINES ? "Funcs" : "Lines" };
		/* 80 columns hold one of the two; with -s the family is
		 * what was asked for. */
		items[n++] = following(st)
		             ? (struct legend_item){ "P", "Procs" }
		             : (struct legend_item){ "t", "Threads" };
	}
	if (st->thread_filter != 0 || st->process_filter != 0)
		items[n++] = (struct legend_item){ "a", "All" };
	items[n++] = (struct legend_item){ "p",
	                                   st->paused ? "Resume" : "Pause" };
	/* 80 columns leave no room for Reset beside Enter's Source. */
	if (on_source(st) || on_threads(st) || on_processes(st))
		items[n++] = (struct legend_item){ "r", "Reset" };
	items[n++] = (struct legend_item){ "F10", "Quit" };
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = items[i];
	return n;
}

void keys_status(const struct tui_state *st, char *buf, size_t size)
{
	char exit_note[64];

	header_exit_note(&st->fs.snap, exit_note, sizeof exit_note);
	snprintf(buf, size, "%s%s%s%s%s", st->note != NULL ? st->note : "",
	         st->note != NULL && (st->paused || exit_note[0] != '\0')
	         ? " " : "", st->paused ? "[paused]" : "",
	         st->paused && exit_note[0] != '\0' ? " " : "", exit_note);
}
