/* py_strings.c - see py_strings.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_strings.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

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

/* Convert n code units of the given kind to UTF-8.  Rejects control
 * characters, surrogates and out-of-range code points: a name containing
 * them was torn or is not a name. */
static char *decode_units(const uint8_t *data, size_t n, unsigned kind)
{
	char *s = malloc(n * 4 + 1);
	size_t len = 0;

	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1)
			cp = data[i];
		else if (kind == 2)
			cp = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&cp, data + 4 * i, 4);
		if (cp < 0x20 || cp == 0x7F || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
			free(s);
			return NULL;
		}
		len += put_utf8(s + len, cp);
	}
	s[len] = '\0';
	return s;
}

char *py_str_read(pid_t pid, const struct py_offsets *o, uintptr_t addr)
{
	uint8_t head[PY_STR_HEAD_MAX];
	uint8_t *data;
	uint64_t length;
	uint32_t state;
	unsigned kind;
	bool compact, ascii;
	size_t off, bytes;
	char *s;

	if (!plausible_ptr(addr) || remote_read(pid, addr, head, o->str_compact_data) != 0)
		return NULL;
	length = rd64(head, o->str_length);
	state = rd32(head, o->str_state);
	kind = (state >> 2) & 7;
	compact = (state >> 5) & 1;
	ascii = (state >> 6) & 1;
	if (length > PY_STR_MAX_CHARS || !compact ||
	    (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	if (length == 0) /* compile(src, "", "exec") */
		return strdup("");
	off = ascii ? o->str_ascii_data : o->str_compact_data;
	bytes = (size_t)length * kind;
	data = malloc(bytes);
	if (data == NULL)
		return NULL;
	s = remote_read(pid, addr + off, data, bytes) == 0
		? decode_units(data, (size_t)length, kind) : NULL;
	free(data);
	return s;
}

uint8_t *py_bytes_read(pid_t pid, const struct py_offsets *o, uintptr_t addr,
                       uint32_t *len)
{
	uint8_t head[PY_BYTES_HEAD_MAX];
	uint64_t size;
	uint8_t *data;

	*len = 0;
	if (!plausible_ptr(addr) || remote_read(pid, addr, head, sizeof(head)) != 0)
		return NULL;
	size = rd64(head, o->bytes_size);
	if (size == 0 || size > PY_BYTES_MAX)
		return NULL;
	data = malloc((size_t)size);
	if (data == NULL)
		return NULL;
	if (remote_read(pid, addr + o->bytes_data, data, (size_t)size) != 0) {
		free(data);
		return NULL;
	}
	*len = (uint32_t)size;
	return data;
}
