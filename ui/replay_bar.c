/* replay_bar.c - the replay's time bar (replay_bar.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "replay_bar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

#define BAR_LINE_BYTES 2048

/* What each cell is drawn with: outside the window, inside, the
 * position, the ends. */
struct bar_glyphs {
	const char *out, *in, *at, *left, *right, *play, *pause;
};

static const struct bar_glyphs utf8_glyphs = {
	"\u2500", "\u2501", "\u2503", "\u251c", "\u2524", "\u25b6", "||",
};
static const struct bar_glyphs ascii_glyphs = { "-", "=", "|", "[", "]", ">", "||" };

int replay_bar_col(double t, double extent, int cols)
{
	double f = extent > 0 && isfinite(t) ? t / extent : 0;
	int c;

	if (cols <= 0)
		return 0;
	/* Before the int conversion: a hostile time must not overflow it. */
	if (!(f > 0))
		f = 0;
	if (f > 1)
		f = 1;
	c = (int)floor(f * cols);
	return c >= cols ? cols - 1 : c;
}

static void append(char *buf, size_t size, const char *s)
{
	size_t len = strlen(buf);

	if (len < size)
		snprintf(buf + len, size - len, "%s", s);
}

/* cols cells: the window's in, the rest out, the position over both.
 * A window's end is exclusive: its last cell is the one before `to`. */
static void bar(const struct snap_replay *r, int cols, const struct bar_glyphs *g,
                char *buf, size_t size)
{
	int at = replay_bar_col(r->at_s, r->extent_s, cols);
	int from = replay_bar_col(r->from_s, r->extent_s, cols);
	int to = r->to_s > r->from_s ? replay_bar_col(r->to_s, r->extent_s, cols) : from;

	append(buf, size, g->left);
	for (int c = 0; c < cols; c++)
		append(buf, size, c == at ? g->at : c >= from && c <= to && r->to_s > r->from_s
		                                    ? g->in : g->out);
	append(buf, size, g->right);
}

void replay_bar_format(const struct snap_replay *r, bool playing, int width, bool utf8,
                       char *buf, size_t size)
{
	const struct bar_glyphs *g = utf8 ? &utf8_glyphs : &ascii_glyphs;
	char left[64], right[96], line[BAR_LINE_BYTES];
	int cols;

	snprintf(left, sizeof left, "%s %.1f s ", playing ? g->play : g->pause, r->at_s);
	snprintf(right, sizeof right, " %s %.1f-%.1f of %.1f s", r->window ? "window" : "shown",
	         r->from_s, r->to_s, r->extent_s);
	cols = width - text_width(left, utf8) - text_width(right, utf8) - 2;
	line[0] = '\0';
	append(line, sizeof line, left);
	/* Each cell is up to 3 bytes. */
	if (cols > (int)(sizeof line / 4))
		cols = (int)(sizeof line / 4);
	if (cols >= REPLAY_BAR_MIN_COLS)
		bar(r, cols, g, line, sizeof line);
	append(line, sizeof line, right);
	text_fit(buf, size, line, width, TEXT_CUT_RIGHT, utf8);
}
