/* py_repr.c - repr() of objects in the target's memory (see py_repr.h).
 * Every read goes through struct py_mem; every size read is bounded
 * before it sizes anything; a container that does not read consistent is
 * rolled back and shown as unreadable as a whole. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_repr.h"

#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "cpython/py_name_text.h"
#include "target/remote_mem.h"

#define MAX_VISITS 4096        /* objects looked at for one value */
#define MAX_LONG_DIGITS 480    /* 30-bit digits: about 4300 decimal digits,
                                  Python's own limit for int -> str */
#define MAX_ENTRIES 1024       /* dict entries / set slots read */
#define MAX_SIZE (1ull << 40)  /* no real object is bigger */
#define TYPE_NAME_MAX 64
#define TYPE_CACHE 32

struct out {
	char *buf;   /* owned */
	size_t len, cap;
	bool full;   /* PY_REPR_MAX_OUT reached: nothing more is added */
};

struct repr_ctx {
	const struct py_mem *m;
	const struct py_object_layout *l;
	struct out out;
	uintptr_t active[PY_REPR_MAX_DEPTH + 1]; /* containers being shown */
	int depth;
	unsigned visits;
	struct { uintptr_t type; char name[TYPE_NAME_MAX]; } types[TYPE_CACHE];
	size_t ntypes;
};

int py_mem_remote(void *ctx, uintptr_t addr, void *buf, size_t len)
{
	return remote_read(*(const pid_t *)ctx, addr, buf, len);
}

/* ---- output ------------------------------------------------------------ */

static bool room(struct out *o, size_t n)
{
	size_t cap = o->cap ? o->cap : 64;
	char *grown;

	if (o->len + n + 1 <= o->cap)
		return true;
	while (cap < o->len + n + 1)
		cap *= 2;
	grown = realloc(o->buf, cap);
	if (grown == NULL)
		return false;
	o->buf = grown;
	o->cap = cap;
	return true;
}

/* Append n bytes; past PY_REPR_MAX_OUT the value ends with "..." and
 * nothing more is added. */
static void put(struct out *o, const char *s, size_t n)
{
	if (o->full)
		return;
	if (o->len + n + 3 >= PY_REPR_MAX_OUT) {
		o->full = true;
		s = "...";
		n = 3;
	}
	if (!room(o, n)) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Undo what a container wrote before it turned out torn. */
static void rollback(struct out *o, size_t len)
{
	if (o->full || o->buf == NULL)
		return;
	o->len = len;
	o->buf[len] = '\0';
}

/* ---- memory ------------------------------------------------------------ */

static bool plausible(uintptr_t addr, size_t len)
{
	return addr >= 4096 && addr < (1ull << 47) && len < (1ull << 47) - addr;
}

static bool rd(struct repr_ctx *c, uintptr_t addr, void *buf, size_t len)
{
	return len == 0 || (plausible(addr, len) && c->m->read(c->m->ctx, addr, buf, len) == 0);
}

static bool rd64(struct repr_ctx *c, uintptr_t addr, uint64_t *v)
{
	return rd(c, addr, v, sizeof(*v));
}

static bool object_ptr(uint64_t p)
{
	return plausible(p, 16) && (p & 7) == 0;
}

/* ---- type names -------------------------------------------------------- */

static bool read_cstr(const struct py_mem *m, uintptr_t addr, char *buf, size_t size)
{
	size_t n = 0;

	/* In pieces of up to 16 bytes, one byte at a time where a piece does
	 * not read: the name may end just before an unmapped page. */
	while (n + 1 < size) {
		size_t piece = size - 1 - n < 16 ? size - 1 - n : 16;

		if (!plausible(addr + n, piece) || m->read(m->ctx, addr + n, buf + n, piece) != 0) {
			piece = 1;
			if (!plausible(addr + n, 1) || m->read(m->ctx, addr + n, buf + n, 1) != 0)
				return false;
		}
		for (size_t i = n; i < n + piece; i++)
			if (buf[i] == '\0')
				return i > 0;
		n += piece;
	}
	return false; /* no NUL within size: not a name */
}

static bool printable_ascii(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

int py_type_name(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                 char *buf, size_t size)
{
	uint64_t type, name;

	if (!object_ptr(addr) || m->read(m->ctx, addr + l->ob_type, &type, 8) != 0 ||
	    !object_ptr(type) || m->read(m->ctx, type + l->tp_name, &name, 8) != 0 ||
	    !plausible(name, 1) || size < 2)
		return false;
	return read_cstr(m, name, buf, size < TYPE_NAME_MAX ? size : TYPE_NAME_MAX) &&
	       printable_ascii(buf);
}

static const char *type_name(struct repr_ctx *c, uintptr_t addr)
{
	uint64_t type;

	if (!object_ptr(addr) || !rd64(c, addr + c->l->ob_type, &type))
		return NULL;
	for (size_t i = 0; i < c->ntypes; i++)
		if (c->types[i].type == type)
			return c->types[i].name;
	if (c->ntypes == TYPE_CACHE)
		c->ntypes = 0; /* a value with more types than this is rare */
	if (!py_type_name(c->m, c->l, addr, c->types[c->ntypes].name, TYPE_NAME_MAX))
		return NULL;
	c->types[c->ntypes].type = type;
	return c->types[c->ntypes++].name;
}

static void unreadable(struct repr_ctx *c, const char *what, uintptr_t addr)
{
	putf(&c->out, "<unreadable %s at 0x%" PRIxPTR ">", what, addr);
}

/* ---- scalars ----------------------------------------------------------- */

/* 1 read, 0 torn, -1 more digits than Python itself would print. */
static int long_read(struct repr_ctx *c, uintptr_t addr, bool *neg, uint32_t *digits,
                     size_t *n)
{
	uint64_t w;

	if (!rd64(c, addr + c->l->long_size, &w))
		return false;
	if (c->l->long_tag) { /* ndigits << 3 | flags | sign (0 +, 1 zero, 2 -) */
		if ((w & 3) == 3)
			return false;
		*neg = (w & 3) == 2;
		*n = (w & 3) == 1 ? 0 : (size_t)(w >> 3);
	} else {
		int64_t size = (int64_t)w;

		*neg = size < 0;
		*n = size < 0 ? (size_t)(-(size + 1)) + 1 : (size_t)size;
	}
	if (*n > MAX_LONG_DIGITS)
		return *n < MAX_SIZE ? -1 : 0;
	if (!rd(c, addr + c->l->long_digits, digits, *n * 4))
		return false;
	for (size_t i = 0; i < *n; i++)
		if (digits[i] >> 30)
			return false;
	return *n == 0 || digits[*n - 1] != 0;
}

static void long_repr(struct repr_ctx *c, uintptr_t addr, bool is_bool)
{
	uint32_t digits[MAX_LONG_DIGITS], dec[MAX_LONG_DIGITS * 2];
	size_t n, nd = 0;
	bool neg;

	int got = long_read(c, addr, &neg, digits, &n);

	if (got < 0 && !is_bool) {
		putf(&c->out, "<int too large to show at 0x%" PRIxPTR ">", addr);
		return;
	}
	if (got <= 0) {
		unreadable(c, is_bool ? "bool" : "int", addr);
		return;
	}
	if (is_bool) {
		puts_(&c->out, n > 0 ? "True" : "False");
		return;
	}
	/* Base 2^30 to base 10^9, most significant digit first (as CPython's
	 * long_to_decimal_string). */
	for (size_t i = n; i-- > 0;) {
		uint64_t hi = digits[i];

		for (size_t j = 0; j < nd; j++) {
			uint64_t z = (uint64_t)dec[j] << 30 | hi;

			hi = z / 1000000000u;
			dec[j] = (uint32_t)(z - hi * 1000000000u);
		}
		while (hi != 0) {
			dec[nd++] = (uint32_t)(hi % 1000000000u);
			hi /= 1000000000u;
		}
	}
	if (nd == 0) {
		puts_(&c->out, "0");
		return;
	}
	putf(&c->out, "%s%" PRIu32, neg ? "-" : "", dec[nd - 1]);
	for (size_t j = nd - 1; j-- > 0;)
		putf(&c->out, "%09" PRIu32, dec[j]);
}

void py_float_repr(double v, char *buf, size_t size)
{
	char e[40], digits[20];
	int exp, nd = 0, prec, decpt;
	const char *p;
	bool neg;

	if (isnan(v) || isinf(v)) {
		snprintf(buf, size, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
		return;
	}
	/* The fewest significant digits that read back as v: what Python's
	 * repr (dtoa mode 0) prints. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, v);
		if (strtod(e, NULL) == v)
			break;
	}
	neg = e[0] == '-';
	for (p = e + neg; *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	digits[nd] = '\0';
	exp = atoi(p + 1);
	decpt = exp + 1;
	if (decpt <= -4 || decpt > 16) { /* 1e+16, 1.5e-07 */
		snprintf(buf, size, "%s%c%s%s%se%c%02d", neg ? "-" : "", digits[0],
		         nd > 1 ? "." : "", digits + 1, "", exp < 0 ? '-' : '+', abs(exp));
	} else if (decpt <= 0) {
		snprintf(buf, size, "%s0.%.*s%s", neg ? "-" : "", -decpt, "0000", digits);
	} else if (decpt >= nd) {
		snprintf(buf, size, "%s%s%.*s.0", neg ? "-" : "", digits, decpt - nd,
		         "0000000000000000");
	} else {
		snprintf(buf, size, "%s%.*s.%s", neg ? "-" : "", decpt, digits, digits + decpt);
	}
}

static void float_repr(struct repr_ctx *c, uintptr_t addr)
{
	double v;
	char buf[48];

	if (!rd(c, addr + c->l->float_value, &v, sizeof(v))) {
		unreadable(c, "float", addr);
		return;
	}
	py_float_repr(v, buf, sizeof(buf));
	puts_(&c->out, buf);
}

/* ---- str and bytes ----------------------------------------------------- */

/* Python's str.isprintable: not Cc, Cf, Cs, Co, Cn, Zl, Zp, or Zs other
 * than the space.  glibc's iswprint in a UTF-8 locale knows the assigned
 * and control characters; the separators and format characters it calls
 * printable are listed here. */
static bool py_printable(uint32_t cp)
{
	static const uint32_t not_printable[][2] = {
		{ 0x00A0, 0x00A0 }, { 0x00AD, 0x00AD }, { 0x0600, 0x0605 }, { 0x061C, 0x061C },
		{ 0x06DD, 0x06DD }, { 0x070F, 0x070F }, { 0x0890, 0x0891 }, { 0x08E2, 0x08E2 },
		{ 0x1680, 0x1680 }, { 0x180E, 0x180E }, { 0x2000, 0x200F }, { 0x2028, 0x202F },
		{ 0x205F, 0x2064 }, { 0x2066, 0x206F }, { 0x3000, 0x3000 }, { 0xD800, 0xF8FF },
		{ 0xFEFF, 0xFEFF }, { 0xFFF9, 0xFFFB }, { 0x110BD, 0x110BD }, { 0x110CD, 0x110CD },
		{ 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A },
		{ 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F }, { 0xF0000, 0x10FFFF },
	};
	static locale_t utf8;
	static bool tried;

	for (size_t i = 0; i < sizeof(not_printable) / sizeof(not_printable[0]); i++)
		if (cp >= not_printable[i][0] && cp <= not_printable[i][1])
			return false;
	if (!tried) {
		tried = true;
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	}
	/* Without a UTF-8 locale every non-ASCII character is escaped: still
	 * a valid literal of the same string. */
	return utf8 != (locale_t)0 && iswprint_l((wint_t)cp, utf8);
}

static void put_utf8(struct out *o, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
	} else {
		b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
	}
	put(o, b, n);
}

/* One character of a str or bytes literal, escaped as Python does. */
static void put_escaped(struct out *o, uint32_t cp, char quote, bool bytes)
{
	if (cp == (uint32_t)quote || cp == '\\')
		putf(o, "\\%c", (char)cp);
	else if (cp == '\t')
		puts_(o, "\\t");
	else if (cp == '\n')
		puts_(o, "\\n");
	else if (cp == '\r')
		puts_(o, "\\r");
	else if (cp < 0x20 || cp == 0x7f || (bytes && cp > 0x7f))
		putf(o, "\\x%02x", cp);
	else if (cp < 0x7f || py_printable(cp))
		put_utf8(o, cp);
	else if (cp <= 0xff)
		putf(o, "\\x%02x", cp);
	else if (cp <= 0xffff)
		putf(o, "\\u%04x", cp);
	else
		putf(o, "\\U%08x", cp);
}

/* Python's choice: single quotes unless the text has one and no double. */
static char pick_quote(const uint32_t *cps, size_t n)
{
	bool sq = false, dq = false;

	for (size_t i = 0; i < n; i++) {
		sq |= cps[i] == '\'';
		dq |= cps[i] == '"';
	}
	return sq && !dq ? '"' : '\'';
}

/* The first min(length, max) code points of the str at addr into cps.
 * false when torn (a kind or flag no str has, a character out of range). */
static bool str_read(struct repr_ctx *c, uintptr_t addr, uint32_t *cps, size_t max,
                     size_t *n, uint64_t *length)
{
	const struct py_object_layout *l = c->l;
	uint8_t head[128], data[PY_REPR_MAX_CHARS * 4];
	uint32_t state;
	unsigned kind;
	bool ascii;

	/* Only the ASCII header: a short ASCII str ends before the compact
	 * header would, maybe at the end of a mapping. */
	if (l->str_ascii_data > sizeof(head) || l->str_length + 8 > l->str_ascii_data ||
	    l->str_state + 4 > l->str_ascii_data || !rd(c, addr, head, l->str_ascii_data))
		return false;
	memcpy(length, head + l->str_length, 8);
	memcpy(&state, head + l->str_state, 4);
	kind = (state >> 2) & 7;
	ascii = (state >> 6) & 1;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    (ascii && kind != 1) || *length > MAX_SIZE)
		return false;
	*n = *length < max ? (size_t)*length : max;
	if (!rd(c, addr + (ascii ? l->str_ascii_data : l->str_compact_data), data, *n * kind))
		return false;
	for (size_t i = 0; i < *n; i++) {
		if (kind == 1)
			cps[i] = data[i];
		else if (kind == 2)
			cps[i] = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&cps[i], data + 4 * i, 4);
		if ((ascii && cps[i] > 0x7f) || cps[i] > 0x10FFFF)
			return false;
	}
	return true;
}

static void str_repr(struct repr_ctx *c, uintptr_t addr)
{
	uint32_t cps[PY_REPR_MAX_CHARS];
	uint64_t length;
	size_t n;
	char quote;

	if (!str_read(c, addr, cps, PY_REPR_MAX_CHARS, &n, &length)) {
		unreadable(c, "str", addr);
		return;
	}
	quote = pick_quote(cps, n);
	put(&c->out, &quote, 1);
	for (size_t i = 0; i < n; i++)
		put_escaped(&c->out, cps[i], quote, false);
	put(&c->out, &quote, 1);
	if (length > n)
		puts_(&c->out, "...");
}

static void bytes_repr(struct repr_ctx *c, uintptr_t addr)
{
	uint8_t data[PY_REPR_MAX_CHARS];
	uint32_t cps[PY_REPR_MAX_CHARS];
	uint64_t size;
	size_t n;
	char quote;

	if (!rd64(c, addr + c->l->bytes_size, &size) || size > MAX_SIZE) {
		unreadable(c, "bytes", addr);
		return;
	}
	n = size < PY_REPR_MAX_CHARS ? (size_t)size : PY_REPR_MAX_CHARS;
	if (!rd(c, addr + c->l->bytes_data, data, n)) {
		unreadable(c, "bytes", addr);
		return;
	}
	for (size_t i = 0; i < n; i++)
		cps[i] = data[i];
	quote = pick_quote(cps, n);
	putf(&c->out, "b%c", quote);
	for (size_t i = 0; i < n; i++)
		put_escaped(&c->out, cps[i], quote, true);
	put(&c->out, &quote, 1);
	if (size > n)
		puts_(&c->out, "...");
}

char *py_str_text(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                  size_t max_chars)
{
	struct repr_ctx c = { .m = m, .l = l };
	uint32_t cps[PY_REPR_MAX_CHARS];
	const char *type = type_name(&c, addr);
	uint64_t length;
	size_t n;

	if (type == NULL || strcmp(type, "str") != 0 ||
	    !str_read(&c, addr, cps, max_chars < PY_REPR_MAX_CHARS ? max_chars : PY_REPR_MAX_CHARS,
	              &n, &length))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (cps[i] < 0x20 || cps[i] == 0x7f || (cps[i] > 0x7f && !py_printable(cps[i]))) {
			free(c.out.buf);
			return NULL;
		}
		put_utf8(&c.out, cps[i]);
	}
	if (c.out.buf == NULL)
		return strdup("");
	return c.out.buf;
}

/* Every code point is kept, escaped as code names are (py_name_text.h):
 * a thread name is the program's to choose, control characters and all. */
char *py_str_name(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr,
                  size_t max_chars)
{
	struct repr_ctx c = { .m = m, .l = l };
	uint32_t cps[PY_REPR_MAX_CHARS];
	const char *type = type_name(&c, addr);
	uint64_t length;
	size_t n;

	if (max_chars > PY_REPR_MAX_CHARS)
		max_chars = PY_REPR_MAX_CHARS;
	if (type == NULL || strcmp(type, "str") != 0 ||
	    !str_read(&c, addr, cps, max_chars, &n, &length))
		return NULL;
	/* cps holds 4-byte code points in the host's (little-endian) order */
	return py_name_text((const uint8_t *)cps, n, 4, length);
}

/* ---- containers -------------------------------------------------------- */

static void repr_obj(struct repr_ctx *c, uintptr_t addr);

/* [a, b, ...]: n item pointers of a container of `size` items. */
static void items_repr(struct repr_ctx *c, const uint64_t *items, size_t n, uint64_t size)
{
	for (size_t i = 0; i < n && !c->out.full; i++) {
		if (i > 0)
			puts_(&c->out, ", ");
		repr_obj(c, (uintptr_t)items[i]);
	}
	if (size > n)
		puts_(&c->out, n > 0 ? ", ..." : "...");
}

static bool seq_repr(struct repr_ctx *c, uintptr_t addr, bool list)
{
	const struct py_object_layout *l = c->l;
	uint64_t items[PY_REPR_MAX_ITEMS], size, at = addr + l->tuple_items;
	size_t n;

	if (!rd64(c, addr + (list ? l->list_size : l->tuple_size), &size) || size > MAX_SIZE)
		return false;
	n = size < PY_REPR_MAX_ITEMS ? (size_t)size : PY_REPR_MAX_ITEMS;
	if (list && n > 0 && (!rd64(c, addr + l->list_items, &at) || !object_ptr(at)))
		return false;
	if (!rd(c, (uintptr_t)at, items, n * 8))
		return false;
	puts_(&c->out, list ? "[" : "(");
	items_repr(c, items, n, size);
	puts_(&c->out, !list && size == 1 ? ",)" : list ? "]" : ")");
	return true;
}

/* The insertion order of a split table's `size` values (an index into
 * the shared keys each, a byte).  3.13+: after the values[capacity] that
 * follow the {capacity, size, embedded, valid} bytes; 3.11/3.12: size at
 * values[-2], order[i] at values[-3 - i]. */
static bool split_order(struct repr_ctx *c, uint64_t values, uint8_t *order, size_t *size)
{
	uint8_t b[256 + 2];

	if (c->l->minor >= 13) {
		if (!rd(c, (uintptr_t)values, b, 2))
			return false;
		*size = b[1];
		return rd(c, (uintptr_t)values + 8 + 8 * (size_t)b[0], order, *size);
	}
	if (!rd(c, (uintptr_t)values - 2, b, 1))
		return false;
	*size = b[0];
	if (!rd(c, (uintptr_t)values - 2 - *size, b, *size))
		return false;
	for (size_t i = 0; i < *size; i++)
		order[i] = b[*size - 1 - i];
	return true;
}

/* A split table (an instance's __dict__): keys shared with the type,
 * values in the object or beside it, shown in the dict's own order. */
static bool split_repr(struct repr_ctx *c, uint64_t keys, const uint8_t *head, uint64_t values,
                       uint64_t used)
{
	uint64_t nentries, e[256 * 2], v[256];
	uint8_t order[256];
	size_t size, shown = 0;

	memcpy(&nentries, head + 24, 8);
	if (head[10] != 2 || head[8] > 40 || head[9] < head[8] || head[9] > head[8] + 3 ||
	    nentries > 255 || nentries > (1ull << head[8]) ||
	    !split_order(c, values, order, &size) || size != used || size > nentries ||
	    !rd(c, (uintptr_t)keys + 32 + (1ull << head[9]), e, (size_t)nentries * 16) ||
	    !rd(c, (uintptr_t)values + c->l->dict_values_items, v, (size_t)nentries * 8))
		return false;
	for (size_t i = 0; i < size; i++)
		if (order[i] >= nentries || v[order[i]] == 0)
			return false; /* torn: an order naming no value */
	puts_(&c->out, "{");
	for (; shown < size && shown < PY_REPR_MAX_ITEMS && !c->out.full; shown++) {
		if (shown > 0)
			puts_(&c->out, ", ");
		repr_obj(c, (uintptr_t)e[2 * order[shown]]);
		puts_(&c->out, ": ");
		repr_obj(c, (uintptr_t)v[order[shown]]);
	}
	puts_(&c->out, shown < size ? ", ...}" : "}");
	return true;
}

/* PyDictKeysObject: dk_log2_size at 8, dk_log2_index_bytes at 9, dk_kind
 * at 10 (0 general {hash, key, value}, 1 str keys {key, value}, 2 split),
 * dk_nentries at 24, then the index table and the entries (3.11-3.15). */
static bool dict_repr(struct repr_ctx *c, uintptr_t addr)
{
	const struct py_object_layout *l = c->l;
	uint64_t used, keys, values, nentries, e[MAX_ENTRIES * 3];
	uint8_t head[32];
	size_t width, n, shown = 0;

	if (!rd64(c, addr + l->dict_used, &used) || !rd64(c, addr + l->dict_keys, &keys) ||
	    !rd64(c, addr + l->dict_values, &values) || used > MAX_SIZE)
		return false;
	if (used == 0) {
		puts_(&c->out, "{}");
		return true;
	}
	if (!object_ptr(keys) || !rd(c, (uintptr_t)keys, head, sizeof(head)))
		return false;
	if (values != 0)
		return split_repr(c, keys, head, values, used);
	memcpy(&nentries, head + 24, 8);
	if (head[8] > 40 || head[9] < head[8] || head[9] > head[8] + 3 || head[10] > 1 ||
	    nentries > (1ull << head[8]) || used > nentries)
		return false;
	width = head[10] == 0 ? 3 : 2;
	n = nentries < MAX_ENTRIES ? (size_t)nentries : MAX_ENTRIES;
	if (!rd(c, (uintptr_t)keys + 32 + (1ull << head[9]), e, n * width * 8))
		return false;
	puts_(&c->out, "{");
	for (size_t i = 0; i < n && !c->out.full; i++) {
		const uint64_t *entry = e + i * width + (width - 2); /* key, value */

		if (entry[1] == 0)
			continue; /* deleted */
		if (shown == PY_REPR_MAX_ITEMS)
			break;
		if (shown++ > 0)
			puts_(&c->out, ", ");
		repr_obj(c, (uintptr_t)entry[0]);
		puts_(&c->out, ": ");
		repr_obj(c, (uintptr_t)entry[1]);
	}
	if (shown < used)
		puts_(&c->out, ", ...");
	puts_(&c->out, "}");
	/* More or fewer live entries than ma_used says: torn. */
	return shown == used || c->out.full || (shown == PY_REPR_MAX_ITEMS && used > shown) ||
	       (n < nentries && shown < used);
}

/* PySetObject: a table of mask + 1 {key, hash} slots; a NULL key is free,
 * hash -1 marks a deleted slot (its key is the dummy). */
static bool set_repr(struct repr_ctx *c, uintptr_t addr, const char *type)
{
	const struct py_object_layout *l = c->l;
	uint64_t used, mask, table, slots[MAX_ENTRIES * 2], keys[PY_REPR_MAX_ITEMS];
	size_t n, shown = 0;
	bool frozen = strcmp(type, "frozenset") == 0;

	if (!rd64(c, addr + l->set_used, &used) || !rd64(c, addr + l->set_mask, &mask) ||
	    !rd64(c, addr + l->set_table, &table) || mask >= MAX_SIZE || ((mask + 1) & mask) != 0 ||
	    used > mask + 1 || !object_ptr(table))
		return false;
	if (used == 0) {
		putf(&c->out, "%s()", type);
		return true;
	}
	n = mask + 1 < MAX_ENTRIES ? (size_t)mask + 1 : MAX_ENTRIES;
	if (!rd(c, (uintptr_t)table, slots, n * 16))
		return false;
	for (size_t i = 0; i < n && shown < PY_REPR_MAX_ITEMS; i++)
		if (slots[2 * i] != 0 && slots[2 * i + 1] != UINT64_MAX)
			keys[shown++] = slots[2 * i];
	if (shown < used && shown < PY_REPR_MAX_ITEMS && n == mask + 1)
		return false; /* fewer live slots than it says: torn */
	puts_(&c->out, frozen ? "frozenset({" : "{");
	items_repr(c, keys, shown, used);
	puts_(&c->out, frozen ? "})" : "}");
	return true;
}

static const char *closers(const char *type)
{
	if (strcmp(type, "list") == 0)
		return "[...]";
	if (strcmp(type, "tuple") == 0)
		return "(...)";
	return "{...}";
}

static void container_repr(struct repr_ctx *c, uintptr_t addr, const char *type)
{
	size_t mark = c->out.len;
	bool ok;

	for (int i = 0; i < c->depth; i++)
		if (c->active[i] == addr) { /* as Python shows a recursive value */
			puts_(&c->out, closers(type));
			return;
		}
	if (c->depth >= PY_REPR_MAX_DEPTH) {
		puts_(&c->out, closers(type));
		return;
	}
	c->active[c->depth++] = addr;
	if (strcmp(type, "list") == 0 || strcmp(type, "tuple") == 0)
		ok = seq_repr(c, addr, type[0] == 'l');
	else if (strcmp(type, "dict") == 0)
		ok = dict_repr(c, addr);
	else
		ok = set_repr(c, addr, type);
	c->depth--;
	if (!ok) {
		rollback(&c->out, mark);
		unreadable(c, type, addr);
	}
}

static void repr_obj(struct repr_ctx *c, uintptr_t addr)
{
	const char *type;

	if (++c->visits > MAX_VISITS) {
		puts_(&c->out, "...");
		c->out.full = true;
		return;
	}
	type = type_name(c, addr);
	if (type == NULL)
		unreadable(c, "object", addr);
	else if (strcmp(type, "NoneType") == 0)
		puts_(&c->out, "None");
	else if (strcmp(type, "bool") == 0 || strcmp(type, "int") == 0)
		long_repr(c, addr, type[0] == 'b');
	else if (strcmp(type, "float") == 0)
		float_repr(c, addr);
	else if (strcmp(type, "str") == 0)
		str_repr(c, addr);
	else if (strcmp(type, "bytes") == 0)
		bytes_repr(c, addr);
	else if (strcmp(type, "list") == 0 || strcmp(type, "tuple") == 0 ||
	         strcmp(type, "dict") == 0 || strcmp(type, "set") == 0 ||
	         strcmp(type, "frozenset") == 0)
		container_repr(c, addr, type);
	else
		putf(&c->out, "<%s object at 0x%" PRIxPTR ">", type, addr);
}

char *py_repr(const struct py_mem *m, const struct py_object_layout *l, uintptr_t addr)
{
	struct repr_ctx *c = calloc(1, sizeof(*c));
	char *s;

	if (c == NULL)
		return NULL;
	c->m = m;
	c->l = l;
	repr_obj(c, addr);
	s = c->out.buf != NULL ? c->out.buf : strdup("");
	free(c);
	return s;
}
