#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_locals.h"

#include <stdlib.h>
#include <string.h>

#define MAX_LOCALS 4096   /* co_nlocalsplus beyond this is torn or hostile */
#define MAX_NAME_CHARS 256
#define CO_VARARGS 0x4
#define CO_VARKEYWORDS 0x8
#define CO_FAST_HIDDEN 0x10  /* 3.12+: an inlined comprehension's */
#define CO_FAST_CELL 0x40
#define CO_FAST_FREE 0x80

static bool rd(const struct py_mem *m, uintptr_t addr, void *buf, size_t len)
{
	return addr >= 4096 && addr < (1ull << 47) && m->read(m->ctx, addr, buf, len) == 0;
}

static uint64_t word(const uint8_t *b, uint32_t at)
{
	uint64_t v;

	memcpy(&v, b + at, 8);
	return v;
}

static int32_t int32_at(const uint8_t *b, uint32_t at)
{
	int32_t v;

	memcpy(&v, b + at, 4);
	return v;
}

static bool current_frame(const struct py_mem *m, const struct py_object_layout *l,
                          uintptr_t tstate, uint64_t *f)
{
	uint64_t cframe;

	if (l->ts_cframe == 0)
		return rd(m, tstate + l->ts_current_frame, f, 8);
	return rd(m, tstate + l->ts_cframe, &cframe, 8) &&
	       rd(m, cframe + l->cf_current_frame, f, 8);
}

/* The innermost n Python frames (as the reader keeps them: shims left
 * out) into frames[], innermost first; false unless their code objects
 * are codes[]. */
bool py_frames_walk(const struct py_mem *m, const struct py_object_layout *l, uintptr_t tstate,
                    const uintptr_t *codes, size_t n, uintptr_t *frames)
{
	uint8_t b[256];
	uint64_t f;
	size_t k = 0, steps = 0;

	if (l->if_size > sizeof(b) || !current_frame(m, l, tstate, &f))
		return false;
	while (k < n) {
		uint64_t code;

		if (f == 0 || ++steps > 4 * n + 64 || !rd(m, (uintptr_t)f, b, l->if_size))
			return false;
		if (b[l->if_owner] < l->owner_not_python) {
			code = word(b, l->if_code);
			if (l->stackref_tagged)
				code &= ~(uint64_t)7;
			if (code != codes[k])
				return false;
			frames[k++] = (uintptr_t)f;
		}
		f = word(b, l->if_previous);
	}
	return true;
}

/* The code's argument count and its names and kinds of localsplus. */
struct code_vars {
	size_t nargs, n;
	uint64_t names[MAX_LOCALS];
	uint8_t kinds[MAX_LOCALS];
};

static bool code_vars(const struct py_mem *m, const struct py_object_layout *l,
                      uintptr_t code, struct code_vars *cv)
{
	uint8_t head[256];
	uint64_t names, kinds, nnames, nkinds;
	int32_t flags, argc, kwonly;
	uint32_t end = l->co_localspluskinds + 8;

	if (end > sizeof(head) || !rd(m, code, head, end))
		return false;
	flags = int32_at(head, l->co_flags);
	argc = int32_at(head, l->co_argcount);
	kwonly = int32_at(head, l->co_kwonlyargcount);
	names = word(head, l->co_localsplusnames);
	kinds = word(head, l->co_localspluskinds);
	if (argc < 0 || kwonly < 0 || !rd(m, names + l->tuple_size, &nnames, 8) ||
	    !rd(m, kinds + l->bytes_size, &nkinds, 8) || nnames != nkinds || nnames > MAX_LOCALS)
		return false;
	cv->n = (size_t)nnames;
	cv->nargs = (size_t)argc + (size_t)kwonly + !!(flags & CO_VARARGS) + !!(flags & CO_VARKEYWORDS);
	return cv->nargs <= cv->n &&
	       (cv->n == 0 || (rd(m, names + l->tuple_items, cv->names, cv->n * 8) &&
	                       rd(m, kinds + l->bytes_data, cv->kinds, cv->n)));
}

/* A cell or free variable holds a cell (once MAKE_CELL or COPY_FREE_VARS
 * ran): its contents are the value. */
static uint64_t deref(const struct py_mem *m, const struct py_object_layout *l, uint64_t v)
{
	char type[16];
	uint64_t inner;

	if (!py_type_name(m, l, (uintptr_t)v, type, sizeof(type)) || strcmp(type, "cell") != 0)
		return v;
	return rd(m, (uintptr_t)v + l->cell_ref, &inner, 8) ? inner : v;
}

static bool add_var(struct py_frame_locals *out, char *name, char *repr, bool argument)
{
	struct py_local *v = &out->vars[out->nvars];

	if (name == NULL || repr == NULL) {
		free(name);
		free(repr);
		return false;
	}
	*v = (struct py_local){ .name = name, .repr = repr, .argument = argument };
	out->nvars++;
	return true;
}

static void frame_locals(const struct py_mem *m, const struct py_object_layout *l,
                         uintptr_t frame, uintptr_t code, struct code_vars *cv,
                         struct py_frame_locals *out)
{
	uint64_t *slots;

	if (!code_vars(m, l, code, cv)) {
		out->error = "unreadable (the code object did not read whole)";
		return;
	}
	slots = calloc(cv->n ? cv->n : 1, 8);
	out->vars = calloc(cv->n ? cv->n : 1, sizeof(*out->vars));
	if (slots == NULL || out->vars == NULL ||
	    (cv->n > 0 && !rd(m, frame + l->if_localsplus, slots, cv->n * 8))) {
		out->error = "unreadable (the frame did not read whole)";
		free(slots);
		return;
	}
	for (size_t i = 0; i < cv->n; i++) {
		uint64_t v = l->stackref_tagged ? slots[i] & ~(uint64_t)7 : slots[i];
		char *name;

		if (v == 0 || (cv->kinds[i] & CO_FAST_HIDDEN))
			continue; /* unbound, as Python's f_locals leaves it out */
		if (cv->kinds[i] & (CO_FAST_CELL | CO_FAST_FREE))
			v = deref(m, l, v);
		if (v == 0)
			continue; /* an empty cell */
		name = py_str_text(m, l, (uintptr_t)cv->names[i], MAX_NAME_CHARS);
		if (!add_var(out, name != NULL ? name : strdup("<unreadable name>"),
		             py_repr(m, l, (uintptr_t)v), i < cv->nargs))
			break;
	}
	free(slots);
}

int py_locals_read(const struct py_mem *m, const struct py_object_layout *l,
                   uintptr_t tstate, const uintptr_t *codes, size_t n,
                   struct py_frame_locals *out)
{
	uintptr_t *frames = calloc(n ? n : 1, sizeof(*frames));
	struct code_vars *cv = malloc(sizeof(*cv));
	int rc = -1;

	if (frames != NULL && cv != NULL && n > 0 && py_frames_walk(m, l, tstate, codes, n, frames)) {
		for (size_t i = 0; i < n; i++)
			frame_locals(m, l, frames[i], codes[i], cv, &out[i]);
		rc = 0;
	}
	free(frames);
	free(cv);
	return rc;
}

bool py_frames_outermost(const struct py_mem *m, const struct py_object_layout *l,
                         uintptr_t tstate, size_t max_frames, uintptr_t *frame,
                         uintptr_t *code)
{
	uint8_t b[256];
	uint64_t f, mark = 0;
	size_t steps = 0, power = 1;

	*frame = *code = 0;
	if (l->if_size > sizeof(b) || !current_frame(m, l, tstate, &f))
		return false;
	while (f != 0) {
		if (++steps > max_frames || f == mark || !rd(m, (uintptr_t)f, b, l->if_size))
			return false;
		if (steps == power) { /* Brent: a cycle meets its mark */
			mark = f;
			power *= 2;
		}
		if (b[l->if_owner] < l->owner_not_python) {
			*frame = (uintptr_t)f;
			*code = (uintptr_t)(word(b, l->if_code) & (l->stackref_tagged ? ~(uint64_t)7
			                                                                 : ~(uint64_t)0));
		}
		f = word(b, l->if_previous);
	}
	return *frame != 0;
}

void py_frame_locals_free(struct py_frame_locals *f)
{
	for (size_t i = 0; i < f->nvars; i++) {
		free(f->vars[i].name);
		free(f->vars[i].repr);
	}
	free(f->vars);
	f->vars = NULL;
	f->nvars = 0;
}
