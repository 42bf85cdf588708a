/* test_name_text.c - a target's str made into the text pytop keeps and
 * shows (cpython/py_name_text.h): control characters, the bytes of a file
 * name that were not UTF-8, other lone surrogates and bidirectional
 * controls escaped; a name over PY_NAME_KEEP_CHARS cut with a marker that
 * stays in view in the TUI's Function column; whatever the code units,
 * the text is valid UTF-8 without a control byte. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/py_name_text.h"
#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/table.h"
#include "../ui/text.h"
#include "../ui/thread_table.h"

/* ---- the escaping --------------------------------------------------------- */

/* py_name_text of n code points, each stored as `kind` bytes. */
static char *text_of(const uint32_t *cps, size_t n, unsigned kind, uint64_t length)
{
	uint8_t units[4 * 64];

	cr_assert_leq(n, 64);
	for (size_t i = 0; i < n; i++)
		if (kind == 1)
			units[i] = (uint8_t)cps[i];
		else if (kind == 2)
			units[2 * i] = (uint8_t)cps[i], units[2 * i + 1] = (uint8_t)(cps[i] >> 8);
		else
			memcpy(units + 4 * i, &cps[i], 4);
	return py_name_text(units, n, kind, length);
}

static void expect_text(const uint32_t *cps, size_t n, unsigned kind, const char *want)
{
	char *got = text_of(cps, n, kind, n);

	cr_assert_not_null(got, "kind %u: no text, want \"%s\"", kind, want);
	cr_assert_str_eq(got, want, "kind %u", kind);
	free(got);
}

#define CPS(...) ((const uint32_t[]){ __VA_ARGS__ }), \
	(sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

Test(name_text, plain_names_unchanged_in_every_kind)
{
	expect_text(CPS('r', 'u', 'n', '.', '<', 'l', 'o', 'c', 'a', 'l', 's', '>'), 1,
	            "run.<locals>");
	expect_text(CPS('c', 0xe9), 1, "c\xc3\xa9");            /* Latin-1 é */
	expect_text(CPS(0x540d, 'x'), 2, "\xe5\x90\x8dx");       /* UCS-2 */
	expect_text(CPS(0x1f600, 'y'), 4, "\xf0\x9f\x98\x80y");  /* UCS-4 */
	expect_text(CPS('a', '\\', 'b'), 1, "a\\b");
}

Test(name_text, control_characters_escaped)
{
	expect_text(CPS('c', 0x1b, '[', '2', 'J', 0x07), 1, "c\\x1b[2J\\x07");
	expect_text(CPS(0x00, '\n', '\t', 0x7f), 1, "\\x00\\x0a\\x09\\x7f");
	expect_text(CPS(0x85, 0x9b, 0x9f, 0xa0), 1, "\\x85\\x9b\\x9f\xc2\xa0"); /* C1; NBSP kept */
	expect_text(CPS(0x1b, 0x540d), 2, "\\x1b\xe5\x90\x8d");
	expect_text(CPS(0x1b, 0x1f600), 4, "\\x1b\xf0\x9f\x98\x80");
}

Test(name_text, surrogateescaped_bytes_shown_as_the_bytes)
{
	/* os.fsdecode(b"hostile_\xe9\xff.py") */
	expect_text(CPS('h', 0xdce9, 0xdcff, '.', 'p', 'y'), 2, "h\\xe9\\xff.py");
	expect_text(CPS(0xdc80), 2, "\\x80");
	expect_text(CPS(0xdc80), 4, "\\x80");
	/* Other lone surrogates are no bytes: \u, as Python's repr. */
	expect_text(CPS(0xd800, 0xdc7f, 0xdd00, 0xdfff), 2, "\\ud800\\udc7f\\udd00\\udfff");
}

Test(name_text, bidirectional_controls_escaped)
{
	expect_text(CPS('a', 0x202e, 'b', 0x2066, 0x2069, 0x200f, 0x2028), 2,
	            "a\\u202eb\\u2066\\u2069\\u200f\\u2028");
	/* Neighbours that do not reorder text are kept. */
	expect_text(CPS(0x2010, 0x2030), 2, "\xe2\x80\x90\xe2\x80\xb0");
}

Test(name_text, long_name_cut_with_a_marker)
{
	uint8_t *units = malloc(PY_NAME_KEEP_CHARS);
	char *got, want[PY_NAME_KEEP_CHARS + 32];

	memset(units, 'x', PY_NAME_KEEP_CHARS);
	got = py_name_text(units, PY_NAME_KEEP_CHARS, 1, 10000);
	memset(want, 'x', PY_NAME_KEEP_CHARS);
	snprintf(want + PY_NAME_KEEP_CHARS, 32, "\xe2\x80\xa6[+%d chars]",
	         10000 - PY_NAME_KEEP_CHARS);
	cr_assert_not_null(got);
	cr_assert_str_eq(got, want);
	free(got);
	/* Exactly the characters kept: no marker. */
	got = py_name_text(units, PY_NAME_KEEP_CHARS, 1, PY_NAME_KEEP_CHARS);
	cr_assert_eq(strlen(got), PY_NAME_KEEP_CHARS);
	free(got);
	/* A length as large as a u64 holds is only a count. */
	got = py_name_text(units, 3, 1, UINT64_MAX);
	cr_assert_str_eq(got, "xxx\xe2\x80\xa6[+18446744073709551612 chars]");
	free(got);
	free(units);
}

Test(name_text, what_is_no_str_gives_no_text)
{
	uint8_t units[8] = { 0 };

	cr_assert_null(text_of(CPS('a', 0x110000), 4, 2), "past U+10FFFF");
	cr_assert_null(text_of(CPS(0xffffffffu), 4, 1), "0xffffffff");
	cr_assert_null(py_name_text(units, 2, 3, 2), "kind 3");
	cr_assert_null(py_name_text(units, 2, 0, 2), "kind 0");
	cr_assert_null(py_name_text(units, 3, 1, 2), "more units than the length");
	cr_assert_null(py_name_text(NULL, PY_NAME_KEEP_CHARS + 1, 1, 1u << 20),
	               "more units than are kept");
	char *empty = py_name_text(units, 0, 1, 0);
	cr_assert_str_eq(empty, "");
	free(empty);
}

/* The length of the valid UTF-8 sequence at s that is no control
 * character, or 0. */
static size_t clean_utf8(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (n == 0 || s[0] > 0xf4)
		return 0;
	cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return n;
}

/* Whatever the target's bytes: valid UTF-8, no control byte, bounded. */
Test(name_text, any_units_give_clean_text)
{
	static uint8_t units[4 * PY_NAME_KEEP_CHARS];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int texts = 0;

	for (int round = 0; round < 3000; round++) {
		unsigned kind = (unsigned[]){ 1, 2, 4 }[round % 3];
		size_t n = (size_t)(round * 7919) % (PY_NAME_KEEP_CHARS + 1);
		char *s;

		for (size_t i = 0; i < n * kind; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			units[i] = (uint8_t)x;
		}
		/* Keep UCS-4 mostly in range, or no round would give text. */
		for (size_t i = 0; kind == 4 && round % 2 == 0 && i < n; i++)
			units[4 * i + 3] = 0, units[4 * i + 2] &= 0x10;
		s = py_name_text(units, n, kind, n + (size_t)(round % 5) * 1000);
		if (s == NULL)
			continue;
		texts++;
		cr_assert_leq(strlen(s), PY_NAME_TEXT_MAX_BYTES, "round %d: %zu bytes", round,
		              strlen(s));
		for (const unsigned char *p = (const unsigned char *)s; *p;) {
			size_t len = clean_utf8(p);

			cr_assert_gt(len, 0, "round %d (kind %u): byte 0x%02x at %zu is a control "
			             "or not UTF-8", round, kind, *p, (size_t)(p - (const unsigned char *)s));
			p += len;
		}
		free(s);
	}
	cr_assert_gt(texts, 2000, "only %d of 3000 rounds gave text", texts);
}

/* ---- the views keep the marker in view ------------------------------------ */

/* "L", 999 x and the marker: what the reader makes of L + 9 999 x. */
static const char *long_name(void)
{
	static char name[PY_NAME_KEEP_CHARS + 32];

	name[0] = 'L';
	memset(name + 1, 'x', PY_NAME_KEEP_CHARS - 1);
	snprintf(name + PY_NAME_KEEP_CHARS, 32, "\xe2\x80\xa6[+9000 chars]");
	return name;
}

Test(name_fit, cut_keeps_the_count)
{
	char buf[2048];

	cr_assert_eq(text_fit_name(buf, sizeof buf, long_name(), 30, true), 30);
	cr_assert_str_eq(buf, "Lxxxxxxxxxxxxxxx\xe2\x80\xa6[+9000 chars]");
	/* Too narrow for the count and a start: a plain cut. */
	text_fit_name(buf, sizeof buf, long_name(), 12, true);
	cr_assert_str_eq(buf, "Lxxxxxxxxxx\xe2\x80\xa6");
	/* Names without the marker, or that fit, as text_fit has them. */
	text_fit_name(buf, sizeof buf, "a_rather_long_function_name", 10, true);
	cr_assert_str_eq(buf, "a_rather_\xe2\x80\xa6");
	text_fit_name(buf, sizeof buf, "f\xe2\x80\xa6[+3 chars]", 40, true);
	cr_assert_str_eq(buf, "f\xe2\x80\xa6[+3 chars]");
	text_fit_name(buf, sizeof buf, "g\xe2\x80\xa6[+3 chars] and more text", 20, true);
	cr_assert_str_eq(buf, "g\xe2\x80\xa6[+3 chars] and mo\xe2\x80\xa6");
}

Test(name_fit, threads_top_function_keeps_the_count)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.11.7", 1000);
	struct thread_table tt;
	char line[512];

	*sb_threads(&s, 1) = (struct snap_thread){ .tid = 4242, .name = "MainThread",
	                                           .samples = 1000, .running = true,
	                                           .top_func = long_name() };
	thread_table_build(&tt, &s, NULL, THREAD_COL_CPU, true);
	table_format_row(&tt.table, thread_table_row(&tt, 0), 80, line, sizeof line, NULL);
	cr_assert_not_null(strstr(line, " Lxx\xe2\x80\xa6[+9000 chars]"), "%s", line);
	thread_table_free(&tt);
	snapshot_free(&s);
}

/* ---- the TUI's Function column ------------------------------------------- */

TestSuite(name_column, .init = headless_up, .fini = headless_down);

/* The reader's cut is a cut the user can see: at 80 columns the Function
 * cell of a 10 000-character name ends in "…[+9000 chars] (file:line)",
 * not in the column's plain ellipsis. */
Test(name_column, shortened_name_keeps_its_marker_in_view)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.11.7", 1000);
	struct snap_func *f = sb_funcs(&s, 1);
	struct tui_state st;
	bool found = false;

	f[0] = (struct snap_func){ .name = long_name(), .file = "long.py", .line = 1,
	                           .c = { .own = 1000, .total = 1000, .own_s = 1,
	                                  .total_s = 1 } };
	headless_start(&st, &s, true);
	for (int y = 0; y < 24 && !found; y++) {
		const char *row = headless_row(y);

		if (strstr(row, "Lxxx") == NULL)
			continue;
		found = true;
		cr_assert_not_null(strstr(row, "xxx\xe2\x80\xa6[+9000 chars] (long.py:1)"),
		                   "row %d: %s", y, row);
	}
	cr_assert(found, "no row shows the long name");
	headless_stop(&st);
}
