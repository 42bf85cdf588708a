/* crt.h - the terminal: curses set-up and teardown, the colour palette,
 * key reading, and putting the terminal back however pytop ends (normal
 * exit, SIGINT/SIGTERM, or a crash).
 *
 * While curses is active, stderr is captured in a temporary file and
 * replayed when the terminal is restored, so messages from other threads
 * cannot scribble over the screen. */
#ifndef PYTOP_UI_CRT_H
#define PYTOP_UI_CRT_H

#include <stdbool.h>

#include "provide_curses.h"

/* What is drawn, independent of how (colour or monochrome). */
enum crt_elem {
	CRT_NORMAL,
	CRT_HEADER,        /* first header line */
	CRT_STATUS,        /* [paused], [target exited ...], filter */
	CRT_TITLE,         /* the column title row */
	CRT_TITLE_SORTED,  /* the title of the sort column */
	CRT_SELECTED,      /* the selection bar */
	CRT_FILE,          /* the "(file:line)" part of a row */
	CRT_KEY,           /* a key in the bottom legend */
	CRT_LABEL,         /* its label */
	CRT_PROMPT,        /* the prompt label */
	CRT_FLAME_PY,      /* a flame graph block: mostly Python time */
	CRT_FLAME_NAT,     /* ... native time */
	CRT_FLAME_SYS,     /* ... system time */
	CRT_NELEMS,
};

struct crt {
	attr_t attr[CRT_NELEMS];
	bool color;  /* colours in use */
	bool utf8;   /* the terminal's locale is UTF-8 */
};

/* A key from crt_read_key: a Unicode code point, a curses KEY_* code
 * wrapped by CRT_KEYCODE, or CRT_NO_KEY. */
#define CRT_NO_KEY (-1)
#define CRT_KEYCODE(k) (0x200000 | (k)) /* above any code point */
#define CRT_IS_KEYCODE(k) ((k) >= 0 && ((k) & 0x200000) != 0)
#define CRT_CTRL(c) ((c) & 0x1f)

/* Take over the terminal (locale, curses, signal handlers, stderr
 * capture).  want_color = the user allows colour.  Returns 0, or -1 with
 * a one-line message already printed to stderr. */
int crt_init(struct crt *crt, bool want_color);

/* Give the terminal back and replay captured stderr.  Safe to call
 * twice. */
void crt_done(void);

/* Restore from any context, including signal handlers: only calls that
 * are safe enough there (endwin, tcsetattr, dup2, read, write). */
void crt_restore_terminal(void);

/* Wait up to timeout_ms for a key. */
int crt_read_key(int timeout_ms);

/* SIGINT or SIGTERM arrived. */
bool crt_quit_requested(void);

/* pytop was stopped (Ctrl-Z) and continued since the last call: the
 * terminal was given back meanwhile, the screen must be repainted. */
bool crt_take_continued(void);

/* Draw text at (y, x) with elem's attributes, never past the screen
 * edge.  The text must already be sanitised and fitted (text_fit). */
void crt_put(const struct crt *crt, int y, int x, enum crt_elem elem,
             const char *text);

/* Paint row y from column x to the right edge with elem's attributes. */
void crt_fill(const struct crt *crt, int y, int x, enum crt_elem elem);

#endif
