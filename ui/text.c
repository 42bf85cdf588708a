/* text.c - UTF-8 decoding, display width and column fitting.
 *
 * The decoder is our own rather than mbrtowc so that batch output passes
 * valid UTF-8 through unchanged whatever the locale; the locale is only
 * asked for character widths (wcwidth), which the TUI needs and which
 * setlocale() makes right there. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "text.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* One character as it will be shown. */
struct glyph {
	const char *bytes; /* what to emit: the source bytes or "?" */
	size_t len;        /* bytes to emit */
	size_t consumed;   /* source bytes this character used */
	int width;         /* columns */
};

static const char replacement[] = "?";

/* Length of the valid UTF-8 sequence at s and its code point, or 0 when
 * the bytes there are not valid UTF-8 (overlong, surrogate, truncated). */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	size_t len;
	uint32_t c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xe0) == 0xc0) {
		len = 2; c &= 0x1f; min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3; c &= 0x0f; min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4; c &= 0x07; min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL terminator */
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

static void next_glyph(const char *s, bool utf8, struct glyph *g)
{
	uint32_t cp;
	size_t len = utf8_decode((const unsigned char *)s, &cp);

	g->bytes = replacement;
	g->len = 1;
	g->width = 1;
	if (len == 0) {
		g->consumed = 1; /* resynchronise on the next byte */
		return;
	}
	g->consumed = len;
	if (is_control(cp) || (!utf8 && cp >= 0x80))
		return;
	g->bytes = s;
	g->len = len;
	if (cp >= 0x80) {
		int w = wcwidth((wchar_t)cp);
		/* A valid printable character the locale does not know (batch
		 * output under LANG=C) still takes a column somewhere. */
		g->width = w < 0 ? 1 : w;
	}
}

int text_width(const char *s, bool utf8)
{
	struct glyph g;
	int w = 0;

	for (; *s != '\0'; s += g.consumed) {
		next_glyph(s, utf8, &g);
		w += g.width;
	}
	return w;
}

int text_fit_name(char *buf, size_t size, const char *s, int max_cols, bool utf8)
{
	static const char mark[] = "\xe2\x80\xa6[+"; /* "…[+" */
	const char *at = NULL, *p = s, *rest;
	char head[1024];
	int rest_w, w;
	size_t n;

	while ((p = strstr(p, mark)) != NULL)
		at = p++;
	rest = at != NULL ? at + strlen("\xe2\x80\xa6") : NULL; /* "[+N chars]" */
	if (rest == NULL || strcspn(rest, "]") + 1 != strlen(rest) ||
	    strstr(rest, " chars]") == NULL || max_cols < 0 ||
	    text_width(s, utf8) <= max_cols ||
	    (rest_w = text_width(rest, utf8)) + 2 > max_cols)
		return text_fit(buf, size, s, max_cols, TEXT_CUT_RIGHT, utf8);
	n = (size_t)(at - s) < sizeof head - 1 ? (size_t)(at - s) : sizeof head - 1;
	memcpy(head, s, n);
	head[n] = '\0';
	/* The whole does not fit, so the head is cut: its ellipsis stands
	 * for the marker's own. */
	w = text_fit(buf, size, head, max_cols - rest_w, TEXT_CUT_RIGHT, utf8);
	n = strlen(buf);
	if (n < size)
		w += text_fit(buf + n, size - n, rest, -1, TEXT_CUT_RIGHT, utf8);
	return w;
}

const char *text_ellipsis(bool utf8)
{
	return utf8 ? "\u2026" : "~";
}

/* Append n bytes to buf at *pos if they fit (with the NUL). */
static bool put(char *buf, size_t size, size_t *pos, const char *b, size_t n)
{
	if (*pos + n >= size)
		return false;
	memcpy(buf + *pos, b, n);
	*pos += n;
	buf[*pos] = '\0';
	return true;
}

/* Emit glyphs from s until max_cols would be exceeded (max_cols < 0:
 * all).  Returns the columns emitted. */
static int emit(char *buf, size_t size, size_t *pos, const char *s,
                int max_cols, bool utf8)
{
	struct glyph g;
	int used = 0;

	for (; *s != '\0'; s += g.consumed) {
		next_glyph(s, utf8, &g);
		if (max_cols >= 0 && used + g.width > max_cols)
			break;
		if (!put(buf, size, pos, g.bytes, g.len))
			break;
		used += g.width;
	}
	return used;
}

int text_fit(char *buf, size_t size, const char *s, int max_cols,
             enum text_cut cut, bool utf8)
{
	const char *ell = text_ellipsis(utf8);
	size_t pos = 0;
	int total, room, used;
	struct glyph g;

	if (size == 0)
		return 0;
	buf[0] = '\0';
	if (s == NULL)
		return 0;
	total = text_width(s, utf8);
	if (max_cols < 0 || total <= max_cols)
		return emit(buf, size, &pos, s, -1, utf8);
	if (max_cols == 0)
		return 0;
	room = max_cols - 1; /* the ellipsis takes one column */
	if (cut == TEXT_CUT_RIGHT) {
		used = emit(buf, size, &pos, s, room, utf8);
		/* A wide character that did not fit leaves a hole; pad it so
		 * columns to the right stay aligned. */
		while (used < room && put(buf, size, &pos, " ", 1))
			used++;
		return put(buf, size, &pos, ell, strlen(ell)) ? used + 1 : used;
	}
	/* Left cut: skip from the start until the rest fits. */
	while (*s != '\0' && total > room) {
		next_glyph(s, utf8, &g);
		total -= g.width;
		s += g.consumed;
	}
	if (!put(buf, size, &pos, ell, strlen(ell)))
		return 0;
	used = 1;
	while (total + used < max_cols && put(buf, size, &pos, " ", 1))
		used++; /* same hole, on this side */
	return used + emit(buf, size, &pos, s, -1, utf8);
}

void text_thousands(char *buf, size_t size, unsigned long long n)
{
	char digits[32];
	int len = snprintf(digits, sizeof digits, "%llu", n);
	size_t pos = 0;

	if (size == 0)
		return;
	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0 && pos + 1 < size)
			buf[pos++] = ',';
		if (pos + 1 < size)
			buf[pos++] = digits[i];
	}
	buf[pos] = '\0';
}

/* v scaled down by step until below step (at most to the last unit),
 * then printed with one decimal below 10, none above. */
void text_scaled(char *buf, size_t size, double v, double step,
                 const char *const *units, size_t nunits, double decimals_below)
{
	size_t u = 0;

	/* A value that would print as `step` (999.5 -> "1000") moves up. */
	while (u + 1 < nunits && v >= step - 0.5) {
		v /= step;
		u++;
	}
	/* 9.96 would print as "10.0": a decimal only where it stays short. */
	if (u > 0 && v < decimals_below - 0.05)
		snprintf(buf, size, "%.1f%s", v, units[u]);
	else
		snprintf(buf, size, "%.0f%s", v, units[u]);
}

void text_bytes(char *buf, size_t size, unsigned long long n)
{
	static const char *const units[] = { "B", "K", "M", "G", "T", "P" };

	text_scaled(buf, size, (double)n, 1024.0, units,
	            sizeof units / sizeof units[0], 10);
}

void text_compact(char *buf, size_t size, double v)
{
	static const char *const units[] = { "", "k", "M", "G", "T" };

	if (!(v > 0) || !isfinite(v)) {
		snprintf(buf, size, "0");
		return;
	}
	if (v < 9.95) {
		snprintf(buf, size, "%.1f", v);
		return;
	}
	text_scaled(buf, size, v, 1000.0, units, sizeof units / sizeof units[0], 10);
}

char *text_sanitized_copy(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1); /* never longer: '?' replaces >= 1 byte */
	size_t pos = 0;
	struct glyph g;

	if (out == NULL)
		return NULL;
	for (; *s != '\0'; s += g.consumed) {
		next_glyph(s, true, &g);
		memcpy(out + pos, g.bytes, g.len);
		pos += g.len;
	}
	out[pos] = '\0';
	return out;
}
