/* py_name_text.c - a str's code units as safe text (py_name_text.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_name_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static bool is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

/* Characters that change how a terminal lays out the text around them. */
static bool is_layout(uint32_t cp)
{
	return cp == 0x200E || cp == 0x200F || cp == 0x2028 || cp == 0x2029 ||
	       (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* Append one code point, escaped if it must be; at most 6 bytes. */
static size_t put_char(char *out, uint32_t cp)
{
	if (is_control(cp))
		return (size_t)sprintf(out, "\\x%02x", (unsigned)cp);
	if (cp >= 0xDC80 && cp <= 0xDCFF) /* surrogateescape: a raw byte */
		return (size_t)sprintf(out, "\\x%02x", (unsigned)(cp - 0xDC00));
	if ((cp >= 0xD800 && cp <= 0xDFFF) || is_layout(cp))
		return (size_t)sprintf(out, "\\u%04x", (unsigned)cp);
	return put_utf8(out, cp);
}

static uint32_t unit_at(const uint8_t *units, size_t i, unsigned kind)
{
	uint32_t cp;

	if (kind == 1)
		return units[i];
	if (kind == 2)
		return (uint32_t)units[2 * i] | (uint32_t)units[2 * i + 1] << 8;
	memcpy(&cp, units + 4 * i, 4);
	return cp;
}

char *py_name_text(const uint8_t *units, size_t n, unsigned kind, uint64_t length)
{
	char *s, *shrunk;
	size_t len = 0;

	if ((kind != 1 && kind != 2 && kind != 4) || n > PY_NAME_KEEP_CHARS || n > length)
		return NULL;
	s = malloc(PY_NAME_TEXT_MAX_BYTES + 1);
	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = unit_at(units, i, kind);

		if (cp > 0x10FFFF) {
			free(s);
			return NULL;
		}
		len += put_char(s + len, cp);
	}
	if (n < length)
		len += (size_t)snprintf(s + len, PY_NAME_TEXT_MAX_BYTES + 1 - len,
		                        "\xe2\x80\xa6[+%llu chars]",
		                        (unsigned long long)(length - n));
	s[len] = '\0';
	shrunk = realloc(s, len + 1); /* most names are short */
	return shrunk != NULL ? shrunk : s;
}
