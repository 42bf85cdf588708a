/* sparkline.c - gauge history and its block-character drawing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sparkline.h"

#include <math.h>
#include <string.h>

/* Level 0 is a blank: nothing, or zero. */
static const char *const utf8_marks[] = {
	" ", "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586",
	"\u2587", "\u2588",
};
static const char ascii_marks[] = " .:-=+*#%@";

#define NUTF8 ((int)(sizeof utf8_marks / sizeof utf8_marks[0]))
#define NASCII ((int)(sizeof ascii_marks - 1))

void sparkline_push(struct sparkline *sl, double v)
{
	sl->v[sl->next] = isfinite(v) ? v : 0.0;
	sl->next = (sl->next + 1) % SPARKLINE_HISTORY;
	if (sl->n < SPARKLINE_HISTORY)
		sl->n++;
}

double sparkline_value(const struct sparkline *sl, size_t age)
{
	if (age >= sl->n)
		return 0.0;
	return sl->v[(sl->next + SPARKLINE_HISTORY - 1 - age) %
	             SPARKLINE_HISTORY];
}

int sparkline_levels(bool utf8)
{
	return utf8 ? NUTF8 : NASCII;
}

int sparkline_level(double v, double top, bool utf8)
{
	int marks = sparkline_levels(utf8) - 1; /* above the blank */
	int level;

	if (!(v > 0) || !(top > 0))
		return 0;
	if (v >= top)
		return marks;
	/* Each mark stands for an equal slice of (0, top]; the epsilon keeps
	 * a value on a slice's edge (top / marks * k) in its own slice. */
	level = (int)ceil(v / top * (double)marks - 1e-9);
	if (level < 1)
		return 1; /* a positive value never looks like zero */
	return level < marks ? level : marks;
}

/* The largest of the newest count values, at least floor. */
static double scale_top(const struct sparkline *sl, size_t count,
                        double floor)
{
	double top = floor;

	for (size_t age = 0; age < count; age++)
		if (sparkline_value(sl, age) > top)
			top = sparkline_value(sl, age);
	return top;
}

int sparkline_draw(const struct sparkline *sl, int cols, double floor,
                   bool utf8, char *buf, size_t size)
{
	size_t count, pos = 0;
	double top;

	if (size > 0)
		buf[0] = '\0';
	/* Each mark is at most 3 bytes. */
	if (cols <= 0 || size < (size_t)cols * 3 + 1)
		return 0;
	count = sl->n < (size_t)cols ? sl->n : (size_t)cols;
	top = scale_top(sl, count, floor);
	for (size_t i = count; i < (size_t)cols; i++)
		buf[pos++] = ' ';
	for (size_t age = count; age-- > 0;) {
		int level = sparkline_level(sparkline_value(sl, age), top, utf8);
		const char *mark = utf8 ? utf8_marks[level] : &ascii_marks[level];
		size_t len = utf8 ? strlen(mark) : 1;

		memcpy(buf + pos, mark, len);
		pos += len;
	}
	buf[pos] = '\0';
	return cols;
}
