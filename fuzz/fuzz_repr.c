/* fuzz_repr.c - libFuzzer target for what pytop dump --locals reads of a
 * target's objects: py_repr (every shown type, nested), py_str_text, the
 * frame walk to the outermost frame and the Thread name lookup, over a
 * fake address space taken from the input.
 *
 * Input: byte 0 picks the version (3.11 + byte % 5), bytes 1-8 the
 * object's offset into the image and 9-16 the thread state's; the rest is
 * the image, served at FUZZ_BASE (every other address is unmapped). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/py_locals.h"
#include "cpython/py_objects.h"
#include "cpython/py_repr.h"
#include "cpython/py_thread_names.h"

#define FUZZ_BASE 0x100000ull
#define HEAD 17

struct image {
	const uint8_t *data;
	size_t len;
};

static int image_read(void *ctx, uintptr_t addr, void *buf, size_t len)
{
	const struct image *im = ctx;

	if (addr < FUZZ_BASE || addr - FUZZ_BASE > im->len || len > im->len - (addr - FUZZ_BASE))
		return -1;
	memcpy(buf, im->data + (addr - FUZZ_BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image im;
	struct py_mem m = { image_read, &im };
	struct py_object_layout l;
	struct py_runtime rt = { 0 };
	uint64_t obj, ts;
	uintptr_t globals = 0, frame, code;
	char *s;

	if (size < HEAD)
		return 0;
	im = (struct image){ data + HEAD, size - HEAD };
	rt.off = py_offsets_for(3, 11 + data[0] % 5);
	if (rt.off == NULL || py_objects_layout(0, &rt, &l) != 0)
		return 0;
	memcpy(&obj, data + 1, 8);
	memcpy(&ts, data + 9, 8);
	obj = FUZZ_BASE + obj % (im.len + 1);
	ts = FUZZ_BASE + ts % (im.len + 1);
	free(py_repr(&m, &l, (uintptr_t)obj));
	free(py_str_text(&m, &l, (uintptr_t)obj, 256));
	py_frames_outermost(&m, &l, (uintptr_t)ts, 4096, &frame, &code);
	s = py_thread_name(&m, &l, (uintptr_t)ts, &globals);
	free(s);
	if (globals != 0)
		free(py_thread_name_main(&m, &l, globals));
	return 0;
}
