/* escape.c - the target's text made safe for a terminal outside curses:
 * control and invalid UTF-8 bytes become \xNN (escape.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (shortest form, no surrogates,
 * at most U+10FFFF), with its code point in *cp; 0 if s is not one. */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	uint32_t v;

	if (n == 0 || s[0] > 0xf4)
		return 0;
	v = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

size_t escape_text(char *buf, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	if (size == 0)
		return 0;
	while (*p != '\0') {
		uint32_t cp = *p;
		size_t len = *p < 0x80 ? 1 : utf8_seq(p, &cp);
		/* An invalid byte alone, or every byte of a control character. */
		bool escape = len == 0 || is_control(cp);
		size_t count = len == 0 ? 1 : len;

		if (n + (escape ? 4 * count : count) >= size)
			break;
		for (size_t i = 0; i < count; i++)
			if (escape)
				n += (size_t)snprintf(buf + n, size - n, "\\x%02x",
				                      p[i]);
			else
				buf[n++] = (char)p[i];
		p += count;
	}
	buf[n] = '\0';
	return n;
}
