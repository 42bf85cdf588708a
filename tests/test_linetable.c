/* test_linetable.c - the location-table decoder against CPython itself
 * (every instruction of every code object of a set of stdlib modules, as
 * answered by co_lines()) and against hand-made and hostile tables. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpython/linetable.h"
#include "tap_note.h"

/* ---- against CPython ----------------------------------------------------- */



struct lt_stats {
	size_t codes, offsets, mismatches;
	char version[32];
};

/* Run `python -I script` with stdout on a pipe; returns the read end as a
 * FILE, and the child's pid in *pid. */
static FILE *spawn_dump(const char *python, const char *script, pid_t *pid)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0, "pipe: %s", strerror(errno));
	*pid = fork();
	cr_assert_neq(*pid, -1, "fork: %s", strerror(errno));
	if (*pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl(python, python, "-I", script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	cr_assert_not_null(f);
	return f;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exact-size heap copy of the table, so ASan sees any over-read. */
static uint8_t *parse_hex(const char *hex, size_t *len)
{
	size_t n = strcspn(hex, " \n");
	if (n == 1 && hex[0] == '-')
		n = 0;
	cr_assert_eq(n % 2, 0, "odd hex length");
	*len = n / 2;
	uint8_t *t = malloc(*len ? *len : 1);
	cr_assert_not_null(t);
	for (size_t i = 0; i < *len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		cr_assert(hi >= 0 && lo >= 0, "bad hex");
		t[i] = (uint8_t)(hi << 4 | lo);
	}
	return t;
}

static void check_one(struct lt_stats *st, const uint8_t *table, size_t len,
                      int first, int u, int want)
{
	int got = linetable_addr2line(table, len, first, u);
	if (got != want && st->mismatches++ < 10)
		test_note("addr2line: first=%d unit=%d: got %d want %d", first, u,
		     got, want);
	st->offsets++;
}

/* One code object: C and L lines already read. */
static void check_code(struct lt_stats *st, char *cline, char *lline)
{
	int first, units, consumed;
	cr_assert_eq(sscanf(cline, "C %d %d %n", &first, &units, &consumed), 2,
	             "bad C line: %.60s", cline);
	size_t len;
	uint8_t *table = parse_hex(cline + consumed, &len);
	struct linetable *lt = linetable_decode(table, len, first);
	cr_assert_not_null(lt);

	char *p = lline + 1;
	for (int u = 0; u < units; u++) {
		char *end;
		long want = strtol(p, &end, 10);
		cr_assert_neq(end, p, "L line too short");
		p = end;
		check_one(st, table, len, first, u, (int)want);
		int got2 = linetable_line(lt, 2 * u);
		int got3 = linetable_line(lt, 2 * u + 1);
		if ((got2 != want || got3 != want) && st->mismatches++ < 10)
			test_note("linetable_line: first=%d unit=%d: got %d/%d "
			     "want %ld", first, u, got2, got3, want);
	}
	/* Outside the code: before it is the first line, after it nothing. */
	if (linetable_line(lt, -2) != first ||
	    linetable_addr2line(table, len, first, -1) != first ||
	    linetable_line(lt, 2 * units) != -1 ||
	    linetable_addr2line(table, len, first, units) != -1)
		st->mismatches++;
	linetable_free(lt);
	free(table);
	st->codes++;
}

static void check_against(const char *python)
{
	const char *srcdir = getenv("PYTOP_SRCDIR");
	char script[4096];
	snprintf(script, sizeof script, "%s/tests/scripts/dump_linetables.py",
	         srcdir ? srcdir : ".");
	cr_assert_eq(access(script, R_OK), 0, "%s: %s (set PYTOP_SRCDIR)",
	             script, strerror(errno));

	pid_t pid;
	FILE *f = spawn_dump(python, script, &pid);
	struct lt_stats st = { 0 };
	char *cline = NULL, *lline = NULL;
	size_t ccap = 0, lcap = 0;
	while (getline(&cline, &ccap, f) > 0) {
		if (cline[0] == '#') {
			sscanf(cline, "# %31s", st.version);
			continue;
		}
		cr_assert_gt(getline(&lline, &lcap, f), 0, "missing L line");
		cr_assert_eq(lline[0], 'L');
		check_code(&st, cline, lline);
	}
	free(cline);
	free(lline);
	fclose(f);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	          "%s %s failed (status %d)", python, script, status);

	test_note("linetable vs CPython %s (%s): %zu code objects, %zu offsets, "
	     "%zu mismatches", st.version, python, st.codes, st.offsets,
	     st.mismatches);
	cr_expect_eq(st.mismatches, 0, "%zu mismatches against %s",
	             st.mismatches, python);
	cr_expect_gt(st.offsets, 100000, "only %zu offsets checked",
	             st.offsets);
}

static void check_optional(const char *python)
{
	if (access(python, X_OK) != 0)
		cr_skip_test("%s not installed: cannot check its line tables",
		             python);
	check_against(python);
}

Test(linetable_cpython, python311, .timeout = 60)
{
	const char *py = getenv("PYTOP_TEST_PYTHON");
	check_against(py && *py ? py : "/usr/bin/python3.11");
}

Test(linetable_cpython, python312, .timeout = 60)
{
	check_optional("/root/.pyenv/versions/3.12.1/bin/python3.12");
}

Test(linetable_cpython, python313, .timeout = 60)
{
	check_optional("/root/.pyenv/versions/3.13.0/bin/python3.13");
}

/* ---- hand-made tables ---------------------------------------------------- */

/* Both decoders must give `want` for every unit of a heap copy of t. */
static void expect_lines(const uint8_t *t, size_t len, int first,
                         const int *want, int n)
{
	uint8_t *copy = malloc(len ? len : 1);
	cr_assert_not_null(copy);
	if (len)
		memcpy(copy, t, len);
	struct linetable *lt = linetable_decode(copy, len, first);
	cr_assert_not_null(lt);
	for (int u = 0; u < n; u++) {
		cr_expect_eq(linetable_addr2line(copy, len, first, u), want[u],
		             "addr2line unit %d: got %d want %d", u,
		             linetable_addr2line(copy, len, first, u), want[u]);
		cr_expect_eq(linetable_line(lt, 2 * u), want[u],
		             "line unit %d: got %d want %d", u,
		             linetable_line(lt, 2 * u), want[u]);
	}
	cr_expect_eq(linetable_addr2line(copy, len, first, -1), first);
	cr_expect_eq(linetable_line(lt, -2), first);
	cr_expect_eq(linetable_line(lt, -1), first);
	linetable_free(lt);
	free(copy);
}

Test(linetable_hand, empty_table)
{
	cr_expect_eq(linetable_addr2line(NULL, 0, 7, 0), -1);
	cr_expect_eq(linetable_addr2line(NULL, 0, 7, -1), 7);
	cr_expect_eq(linetable_addr2line(NULL, 0, 7, INT_MIN), 7);
	struct linetable *lt = linetable_decode(NULL, 0, 7);
	cr_assert_not_null(lt);
	cr_expect_eq(linetable_line(lt, 0), -1);
	cr_expect_eq(linetable_line(lt, 1000), -1);
	cr_expect_eq(linetable_line(lt, -2), 7);
	linetable_free(lt);
	int want[] = { -1, -1 };
	expect_lines((const uint8_t *)"", 0, 7, want, 2);
	cr_expect_eq(linetable_line(NULL, 0), -1);
}

#define E(code, len) ((uint8_t)(0x80 | (code) << 3 | ((len) - 1)))

Test(linetable_hand, every_entry_kind)
{
	static const uint8_t t[] = {
		E(10, 2), 0, 0,          /* units 0-1: +0 -> 10 */
		E(11, 1), 1, 2,          /* unit 2: +1 -> 11 */
		E(15, 3),                /* units 3-5: no location */
		E(13, 1), 0x0a,          /* unit 6: +5 -> 16 */
		E(14, 2), 0x0f, 0, 1, 2, /* units 7-8: long form -7 -> 9 */
		E(3, 4), 7,              /* units 9-12: short form, same line */
		E(12, 1), 3, 4,          /* unit 13: +2 -> 11 */
		E(13, 1), 0x48, 0x03,    /* unit 14: +100 (two-byte varint) */
		E(14, 1), 0x49, 0x03, 0, 0, 0, /* unit 15: long form -100 */
		E(15, 8),                /* units 16-23: none */
		E(13, 2), 0x00,          /* units 24-25: back to 11 */
	};
	static const int want[] = {
		10, 10, 11, -1, -1, -1, 16, 9, 9, 9, 9, 9, 9, 11, 111, 11,
		-1, -1, -1, -1, -1, -1, -1, -1, 11, 11,
		-1, -1, /* beyond the table */
	};
	expect_lines(t, sizeof t, 10, want, sizeof want / sizeof want[0]);
}

Test(linetable_hand, no_location_only)
{
	static const uint8_t t[] = { E(15, 8), E(15, 1) };
	static const int want[] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
	expect_lines(t, sizeof t, 3, want, 10);
}

Test(linetable_hand, negative_line_is_no_line)
{
	/* CPython's co_lines() reports a negative line as None. */
	static const uint8_t t[] = { E(14, 1), 0x0b, 0, 0, 0, /* -5 -> -3 */
		                     E(13, 1), 0x0a };         /* +5 -> 2 */
	static const int want[] = { -1, 2, -1 };
	expect_lines(t, sizeof t, 2, want, 3);
}

Test(linetable_hand, truncated_entries_end_the_table)
{
	/* Good entry, then a varint whose continuation bit runs off the end. */
	static const uint8_t t1[] = { E(10, 2), 0, 0, E(13, 1), 0x48 };
	static const int w1[] = { 5, 5, -1, -1 };
	expect_lines(t1, sizeof t1, 5, w1, 4);
	/* Column bytes missing. */
	static const uint8_t t2[] = { E(11, 1), 0 };
	static const int w2[] = { -1, -1 };
	expect_lines(t2, sizeof t2, 5, w2, 2);
	/* Long form cut after its line delta. */
	static const uint8_t t3[] = { E(13, 1), 0x02, E(14, 1), 0x02, 0x00 };
	static const int w3[] = { 6, -1 };
	expect_lines(t3, sizeof t3, 5, w3, 2);
	/* A varint longer than any real one. */
	static const uint8_t t4[] = { E(13, 1), 0x02, E(13, 1), 0x7f, 0x7f,
		                      0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x01 };
	static const int w4[] = { 6, -1 };
	expect_lines(t4, sizeof t4, 5, w4, 2);
	/* A first byte without bit 7: not at an entry, the table is corrupt. */
	static const uint8_t t5[] = { E(13, 1), 0x02, 0x13, E(13, 1), 0x02 };
	static const int w5[] = { 6, -1 };
	expect_lines(t5, sizeof t5, 5, w5, 2);
	/* Single continuation byte only. */
	static const uint8_t t6[] = { 0x40 };
	static const int w6[] = { -1 };
	expect_lines(t6, sizeof t6, 5, w6, 1);
}

Test(linetable_hand, line_overflow_stops)
{
	static const uint8_t t[] = { E(10, 1), 0, 0, E(11, 1), 0, 0 };
	static const int want[] = { INT_MAX, -1, -1 };
	expect_lines(t, sizeof t, INT_MAX, want, 3);
}

Test(linetable_hand, huge_offsets)
{
	static const uint8_t t[] = { E(10, 8), 0, 0 };
	struct linetable *lt = linetable_decode(t, sizeof t, 4);
	cr_assert_not_null(lt);
	cr_expect_eq(linetable_line(lt, 14), 4);
	cr_expect_eq(linetable_line(lt, 15), 4);
	cr_expect_eq(linetable_line(lt, 16), -1);
	cr_expect_eq(linetable_line(lt, INT_MAX), -1);
	cr_expect_eq(linetable_line(lt, INT_MIN), 4);
	cr_expect_eq(linetable_addr2line(t, sizeof t, 4, INT_MAX), -1);
	linetable_free(lt);
}

/* xorshift64*: reproducible noise. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

Test(linetable_hand, hostile_tables_agree_and_stay_in_bounds)
{
	/* Random bytes, biased towards entry starts so that tables get past
	 * the first entry.  Under ASan any over-read of the exact-size heap
	 * copy aborts the test. */
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = rng_next(&seed) % 40;
		uint8_t *t = malloc(len ? len : 1);
		cr_assert_not_null(t);
		for (size_t i = 0; i < len; i++) {
			uint64_t r = rng_next(&seed);
			t[i] = (uint8_t)(r % 3 == 0 ? (r >> 8) | 0x80 : r >> 8);
		}
		int first = (int)(rng_next(&seed) % 1000) - 10;
		struct linetable *lt = linetable_decode(t, len, first);
		cr_assert_not_null(lt);
		for (int u = -1; u <= (int)len * 8 + 1; u++) {
			int a = linetable_addr2line(t, len, first, u);
			cr_assert_eq(linetable_line(lt, 2 * u), a,
			             "iter %d unit %d", iter, u);
			cr_assert(a >= -1 || u < 0);
		}
		linetable_free(lt);
		free(t);
	}
}
