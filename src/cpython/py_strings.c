/* py_strings.c - see py_strings.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_strings.h"

#include <stdbool.h>
#include <stdlib.h>

#include "cpython/py_name_text.h"
#include "cpython/raw_fields.h"
#include "target/remote_mem.h"

char *py_str_read(pid_t pid, const struct py_offsets *o, uintptr_t addr)
{
	uint8_t head[PY_STR_HEAD_MAX];
	uint8_t *data;
	uint64_t length;
	uint32_t state;
	unsigned kind;
	bool compact, ascii;
	size_t off, n;
	char *s;

	if (!plausible_ptr(addr) || remote_read(pid, addr, head, o->str_compact_data) != 0)
		return NULL;
	length = rd64(head, o->str_length);
	state = rd32(head, o->str_state);
	kind = (state >> 2) & 7;
	compact = (state >> 5) & 1;
	ascii = (state >> 6) & 1;
	if (length > PY_STR_LENGTH_MAX || !compact ||
	    (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	/* Only the characters kept are read: the length is the target's
	 * word, and serves only to count what the marker says is left out. */
	n = length < PY_NAME_KEEP_CHARS ? (size_t)length : PY_NAME_KEEP_CHARS;
	off = ascii ? o->str_ascii_data : o->str_compact_data;
	data = malloc(n * kind + 1);
	if (data == NULL)
		return NULL;
	s = n == 0 || remote_read(pid, addr + off, data, n * kind) == 0
		? py_name_text(data, n, kind, length) : NULL;
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
