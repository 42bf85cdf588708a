/* tui_draw.h - one frame of the TUI: the header, the screen on display
 * (through its operations, screen.h), and the prompt or the key legend on
 * the last row. */
#ifndef PYTOP_UI_TUI_DRAW_H
#define PYTOP_UI_TUI_DRAW_H

#include <stdbool.h>

#include "crt.h"
#include "tui_state.h"

/* The whole frame; repaint: every cell again (resize, Ctrl-L). */
void tui_draw(struct tui_state *st, const struct crt *crt, bool repaint);

/* What is below the header, from row y down: the screen on display with
 * the status at the right of its first row, then the prompt or the
 * legend.  A full screen (help) takes every row instead. */
void tui_draw_below(struct tui_state *st, const struct crt *crt, int y);

#endif
