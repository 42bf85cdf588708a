/* tui_state.c - the TUI state's snapshot and its screens: set-up, showing
 * a snapshot to every screen, switching screens, filters. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "tui_state.h"

#include <string.h>

#include "keys.h"

void tui_state_init(struct tui_state *st, bool utf8)
{
	memset(st, 0, sizeof *st);
	for (size_t i = 0; i < tui_nscreens; i++)
		if (tui_screens[i]->init != NULL)
			tui_screens[i]->init(st, utf8);
	st->view = &functions_screen_ops;
}

void tui_state_free(struct tui_state *st)
{
	for (size_t i = tui_nscreens; i-- > 0;)
		if (tui_screens[i]->free != NULL)
			tui_screens[i]->free(st);
	if (st->have_snap)
		snapshot_free(&st->snap);
	st->have_snap = false;
}

void tui_show(struct tui_state *st, struct snapshot *s)
{
	if (st->have_snap)
		snapshot_free(&st->snap);
	st->snap = *s;
	memset(s, 0, sizeof *s);
	st->have_snap = true;
	st->shown++;
	tui_sync(st);
}

const struct snapshot *tui_snapshot(const struct tui_state *st)
{
	return st->have_snap ? &st->snap : NULL;
}

void tui_sync(struct tui_state *st)
{
	for (size_t i = 0; i < tui_nscreens; i++)
		if (tui_screens[i]->sync != NULL)
			tui_screens[i]->sync(st);
}

void tui_switch(struct tui_state *st, const struct screen_ops *screen)
{
	if (st->view->leave != NULL)
		st->view->leave(st);
	st->view = screen;
	st->lines_from = NULL;
}

bool tui_following(const struct tui_state *st)
{
	return st->have_snap && st->snap.following;
}

unsigned tui_filter_thread(struct tui_state *st, pid_t tid)
{
	st->thread_filter = tid;
	return REACT_THREAD_FILTER | REACT_REDRAW;
}

unsigned tui_filter_process(struct tui_state *st, pid_t pid)
{
	st->process_filter = pid;
	st->thread_filter = 0;
	return REACT_PROCESS_FILTER | REACT_THREAD_FILTER | REACT_REDRAW;
}
