/* keys.c - the key table and its actions. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "keys.h"

#include "crt.h"

#define K(k) CRT_KEYCODE(k)

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

static unsigned act_up(struct tui_state *st)
{
	fscreen_move(&st->fs, -1);
	return REACT_REDRAW;
}

static unsigned act_down(struct tui_state *st)
{
	fscreen_move(&st->fs, 1);
	return REACT_REDRAW;
}

static unsigned act_page_up(struct tui_state *st)
{
	fscreen_page(&st->fs, -1);
	return REACT_REDRAW;
}

static unsigned act_page_down(struct tui_state *st)
{
	fscreen_page(&st->fs, 1);
	return REACT_REDRAW;
}

static unsigned act_home(struct tui_state *st)
{
	fscreen_home(&st->fs);
	return REACT_REDRAW;
}

static unsigned act_end(struct tui_state *st)
{
	fscreen_end(&st->fs);
	return REACT_REDRAW;
}

static unsigned act_sort_next(struct tui_state *st)
{
	fscreen_cycle_sort(&st->fs, 1);
	return REACT_REDRAW;
}

static unsigned act_sort_prev(struct tui_state *st)
{
	fscreen_cycle_sort(&st->fs, -1);
	return REACT_REDRAW;
}

static unsigned act_lines(struct tui_state *st)
{
	fscreen_toggle_mode(&st->fs);
	return REACT_REDRAW;
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

static unsigned act_filter(struct tui_state *st)
{
	prompt_open(&st->prompt, "Filter", st->fs.filter);
	return REACT_REDRAW;
}

static unsigned act_repaint(struct tui_state *st)
{
	(void)st;
	return REACT_CLEAR | REACT_REDRAW;
}

static const struct binding bindings[] = {
	{ { K(KEY_UP) }, "Up", "select the row above", act_up },
	{ { K(KEY_DOWN) }, "Down", "select the row below", act_down },
	{ { K(KEY_PPAGE) }, "PgUp", "one page up", act_page_up },
	{ { K(KEY_NPAGE) }, "PgDn", "one page down", act_page_down },
	{ { K(KEY_HOME) }, "Home", "first row", act_home },
	{ { K(KEY_END) }, "End", "last row", act_end },
	{ { '>', '.', K(KEY_F(6)) }, "> . F6",
	  "sort by the next column (%Own %Total OwnTime TotalTime Function)",
	  act_sort_next },
	{ { '<', ',' }, "< ,", "sort by the previous column", act_sort_prev },
	{ { 'l' }, "l", "switch between function rows and line rows",
	  act_lines },
	{ { '/', K(KEY_F(4)) }, "/ F4",
	  "filter by name or file; Enter applies, empty clears", act_filter },
	{ { ' ', 'p' }, "Space p",
	  "pause the display (sampling goes on); again to resume",
	  act_pause },
	{ { 'r' }, "r", "reset: forget all counts so far", act_reset },
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

unsigned keys_handle(struct tui_state *st, int key)
{
	const struct binding *b;

	if (key == CRT_NO_KEY)
		return REACT_NONE;
	if (key == K(KEY_RESIZE))
		return REACT_CLEAR | REACT_REDRAW;
	if (st->help) {
		/* Any key closes the help screen (as in htop). */
		st->help = false;
		return REACT_REDRAW;
	}
	if (st->prompt.active) {
		if (prompt_key(&st->prompt, key) == PROMPT_ACCEPTED)
			fscreen_set_filter(&st->fs, st->prompt.text);
		return REACT_REDRAW;
	}
	b = find_binding(key);
	return b != NULL ? b->action(st) : REACT_NONE;
}

size_t keys_legend(const struct tui_state *st, struct legend_item *out,
                   size_t max)
{
	const struct legend_item items[] = {
		{ "F1", "Help" },
		{ "F4", "Filter" },
		{ "F6", "Sort" },
		{ "l", st->fs.mode == PROFILE_LINES ? "Funcs" : "Lines" },
		{ "p", st->paused ? "Resume" : "Pause" },
		{ "r", "Reset" },
		{ "F10", "Quit" },
	};
	size_t n = sizeof items / sizeof items[0];

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++)
		out[i] = items[i];
	return n;
}
