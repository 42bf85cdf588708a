/* test_export_recording.c - pytop export FILE: a recording written out
 * in a format.  Truth: the collapsed export of a recorded run sums to the
 * run's last snapshot and each function's own samples are the snapshot's;
 * two adjacent --from/--to windows add up to the whole; go tool pprof
 * reads the pprof export and finds the same total; a recording whose
 * pytop was killed (its last commits in the WAL) exports everything
 * committed, and its files are not changed by being read.  Bad input:
 * one clear line, a non-zero exit, nothing overwritten. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "busy_program.h"
#include "harness.h"
#include "sql_exec.h"
#include "collapsed_text.h"

/* pytop export args...: stdout, stderr and status in *p. */
static void export_run(struct h_proc *p, const char *const args[])
{
	const char *argv[16] = { h_pytop(), "export" };
	size_t n = 2;

	for (size_t i = 0; args[i] != NULL && n + 1 < 16; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert(h_run(p, 30, argv), "pytop export did not finish; stderr: %s", p->err.data);
}

static long long export_sum(const char *file, const char *from, const char *to)
{
	const char *args[8] = { file, "--format", "collapsed" };
	size_t n = 3;
	struct h_proc p;
	long long sum;

	if (from != NULL) {
		args[n++] = "--from";
		args[n++] = from;
	}
	if (to != NULL) {
		args[n++] = "--to";
		args[n++] = to;
	}
	args[n] = NULL;
	export_run(&p, args);
	cr_assert_eq(p.status, 0, "export %s..%s: status %d, stderr: %s", from ? from : "start",
	             to ? to : "end", p.status, p.err.data);
	sum = collapsed_sum(p.out.data);
	h_proc_free(&p);
	return sum;
}

/* ---- truth ---------------------------------------------------------------- */

Test(export_recording, collapsed_windows_and_pprof_are_the_runs, .timeout = 90)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 2.0, false), *file = h_path(dir, "run.pytop");
	char *pb = h_path(dir, "run.pb.gz");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "0.5", "-w", file, "--",
	                       py, busy, NULL };
	struct h_proc p, e;
	json_t *lines, *last, *fn;
	size_t i, checked = 0;
	int bad = 0;

	cr_assert(h_run(&p, 40, argv), "pytop did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) > 0, "no JSON (bad line %d)", bad);
	last = json_array_get(lines, json_array_size(lines) - 1);
	long long printed = json_integer_value(json_object_get(last, "samples"));
	cr_assert_gt(printed, 500, "too few samples to compare: %lld", printed);

	const char *all[] = { file, "--format", "collapsed", NULL };
	export_run(&e, all);
	cr_assert_eq(e.status, 0, "status %d, stderr: %s", e.status, e.err.data);
	long long whole = collapsed_sum(e.out.data);
	h_note("last snapshot %lld samples; collapsed export of the recording %lld", printed,
	       whole);
	cr_assert_eq(whole, printed, "the export sums to %lld, the last snapshot says %lld",
	             whole, printed);
	json_array_foreach(json_object_get(last, "functions"), i, fn) {
		const char *name = json_string_value(json_object_get(fn, "name"));
		const char *ffile = json_string_value(json_object_get(fn, "file"));
		long long own = json_integer_value(json_object_get(fn, "own"));

		if (strcmp(json_string_value(json_object_get(fn, "kind")), "other") == 0)
			continue;
		cr_expect_eq(collapsed_own(e.out.data, name, ffile), own, "%s (%s): own %lld "
		             "exported, %lld printed", name, ffile,
		             collapsed_own(e.out.data, name, ffile), own);
		checked++;
	}
	cr_assert_gt(collapsed_own(e.out.data, "leaf", busy), 0, "leaf is not in the export");
	h_note("%zu functions' own samples compared", checked);

	/* Adjacent windows, at a bucket edge and inside a bucket. */
	const char *cuts[] = { "1", "0.55", "1.234" };
	for (size_t k = 0; k < 3; k++) {
		long long a = export_sum(file, NULL, cuts[k]), b = export_sum(file, cuts[k], NULL);

		h_note("cut at %s s: %lld + %lld = %lld (whole %lld)", cuts[k], a, b, a + b, whole);
		cr_assert(a > 0 && b > 0, "an empty window at %s: %lld, %lld", cuts[k], a, b);
		cr_assert_eq(a + b, whole, "windows cut at %s add up to %lld, not %lld", cuts[k],
		             a + b, whole);
	}
	long long a = export_sum(file, "0", "0.7"), b = export_sum(file, "0.7", "1.4"),
	          c = export_sum(file, "1.4", NULL);
	cr_assert_eq(a + b + c, whole, "three windows: %lld + %lld + %lld != %lld", a, b, c,
	             whole);

	/* go tool pprof reads the pprof export and counts the same. */
	const char *pp[] = { file, "--format", "pprof", "-o", pb, NULL };
	struct h_proc g, x;
	export_run(&x, pp);
	cr_assert_eq(x.status, 0, "pprof export: status %d, stderr: %s", x.status, x.err.data);
	h_need_program("go");
	const char *gargv[] = { "go", "tool", "pprof", "-top", pb, NULL };
	cr_assert(h_run(&g, 90, gargv), "go tool pprof did not finish");
	cr_assert_eq(g.status, 0, "go tool pprof cannot read the export: %s", g.err.data);
	char want[64];
	snprintf(want, sizeof want, "Total samples = %lld", whole);
	cr_assert(strstr(g.out.data, want) != NULL, "go tool pprof does not say '%s':\n%s",
	          want, g.out.data);
	json_t *leaf = h_func(last, "leaf");
	cr_assert(leaf != NULL);
	const char *row = strstr(g.out.data, "  leaf\n");
	cr_assert(row != NULL, "no leaf row in go tool pprof -top:\n%s", g.out.data);
	const char *bol = row;
	while (bol > g.out.data && bol[-1] != '\n')
		bol--;
	cr_assert(strtoll(bol, NULL, 10) ==
	          json_integer_value(json_object_get(leaf, "own")),
	          "go tool pprof's leaf row '%.*s' is not its own samples %lld",
	          (int)(row - bol), bol, (long long)json_integer_value(json_object_get(leaf, "own")));
	h_proc_free(&g);
	h_proc_free(&x);
	h_proc_free(&e);
	h_proc_free(&p);
	json_decref(lines);
	h_rmtree(dir);
	free(pb);
	free(busy);
	free(file);
	free(dir);
}

/* ---- a killed recorder: the WAL read, the files untouched ------------------ */

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	cr_assert(buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static bool same_bytes(const char *path, const char *data, size_t len)
{
	size_t n;
	char *now = read_all(path, &n);
	bool same = now != NULL && n == len && memcmp(now, data, len) == 0;

	free(now);
	return same;
}

Test(export_recording, killed_recording_exports_its_wal, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, false), *file = h_path(dir, "run.pytop");
	char *wal = h_path(dir, "run.pytop-wal"), *shm = h_path(dir, "run.pytop-shm");
	char *copy = h_path(dir, "copy.pytop"), *copy_wal = h_path(dir, "copy.pytop-wal");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "record", "-o", file, "--", py, busy, NULL };
	struct h_proc p, e;
	size_t flen, wlen, slen = 0;
	struct stat st;

	cr_assert(h_proc_start(&p, argv));
	h_proc_pump(&p, 2.5);
	cr_assert(!p.exited, "pytop record ended early: %s", p.err.data);
	h_proc_signal(&p, SIGKILL);
	h_proc_finish(&p, 10);
	cr_assert_eq(stat(wal, &st), 0, "the killed recorder left no WAL");
	char *fdata = read_all(file, &flen), *wdata = read_all(wal, &wlen);
	char *sdata = read_all(shm, &slen);
	h_note("killed: the file %zu bytes, its WAL %zu bytes", flen, wlen);
	cr_assert_gt(wlen, 0, "an empty WAL: nothing to recover");

	const char *args[] = { file, "--format", "collapsed", NULL };
	export_run(&e, args);
	cr_assert_eq(e.status, 0, "status %d, stderr: %s", e.status, e.err.data);
	long long exported = collapsed_sum(e.out.data);
	cr_assert(same_bytes(file, fdata, flen), "reading the recording changed it");
	cr_assert(same_bytes(wal, wdata, wlen), "reading the recording changed its WAL");
	/* The killed recorder leaves its -shm index: not to be touched either. */
	if (sdata != NULL)
		cr_assert(same_bytes(shm, sdata, slen), "reading the recording changed its -shm");
	else
		cr_assert_neq(stat(shm, &st), 0, "reading the recording made %s beside it", shm);

	/* What SQLite recovers from a copy of both, read by the test itself. */
	FILE *f = fopen(copy, "wb"), *g = fopen(copy_wal, "wb");
	cr_assert(f && g && fwrite(fdata, 1, flen, f) == flen && fwrite(wdata, 1, wlen, g) == wlen);
	fclose(f);
	fclose(g);
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	cr_assert_eq(sqlite3_open_v2(copy, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT SUM(samples) FROM samples;", -1, &q, NULL),
	             SQLITE_OK);
	cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
	long long recorded = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	sqlite3_close(db);
	h_note("the killed recording holds %lld samples; the export %lld", recorded, exported);
	cr_assert_gt(recorded, 500, "too few samples recorded before the kill: %lld", recorded);
	cr_assert_eq(exported, recorded);
	h_proc_free(&e);
	h_proc_free(&p);
	h_rmtree(dir);
	free(fdata);
	free(wdata);
	free(sdata);
	free(busy);
	free(file);
	free(wal);
	free(shm);
	free(copy);
	free(copy_wal);
	free(dir);
}

/* ---- bad input -------------------------------------------------------------- */

/* pytop export args: refused with one line naming `what`, a non-zero
 * exit and nothing on stdout. */
static void expect_refused(const char *what, const char *const args[], const char *needle)
{
	struct h_proc p;

	export_run(&p, args);
	h_note("%s: status %d: %s", what, p.status, p.err.data);
	cr_expect_neq(p.status, 0, "%s: accepted", what);
	cr_expect_eq(h_count_lines(p.err.data), 1, "%s: not one line: %s", what, p.err.data);
	cr_expect(strncmp(p.err.data, "pytop: ", 7) == 0, "%s: %s", what, p.err.data);
	cr_expect(strstr(p.err.data, needle) != NULL, "%s: '%s' not said: %s", what, needle,
	          p.err.data);
	cr_expect(strchr(p.err.data, ';') != NULL, "%s: no fix given: %s", what, p.err.data);
	cr_expect_eq(p.out.len, 0, "%s: wrote to stdout", what);
	h_proc_free(&p);
}

static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert(f != NULL && fwrite(data, 1, len, f) == len);
	fclose(f);
}

/* A window strictly between the starts of the recording's 3rd and 4th
 * buckets (read from a copy: the recording itself is only read by pytop). */
static void between_buckets(const char *copy, char *from, char *to)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double a, b;

	cr_assert_eq(sqlite3_open(copy, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT t_start FROM buckets ORDER BY t_start "
	                                "LIMIT 2 OFFSET 2;", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	a = sqlite3_column_double(st, 0);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	b = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	cr_assert_gt(b - a, 0.004, "buckets %.4f and %.4f s too close", a, b);
	snprintf(from, 32, "%.4f", a + 0.001);
	snprintf(to, 32, "%.4f", b - 0.001);
}

Test(export_recording, bad_input_refused, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 1.0, false), *file = h_path(dir, "run.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "record", "-o", file, "--", py, busy, NULL };
	char *trunc = h_path(dir, "trunc.pytop"), *corrupt = h_path(dir, "corrupt.pytop");
	char *text = h_path(dir, "text.pytop"), *newer = h_path(dir, "newer.pytop");
	char *empty = h_path(dir, "empty.pytop"), *out = h_path(dir, "out.txt");
	char *link = h_path(dir, "link.txt"), *victim = h_path(dir, "victim.txt");
	struct h_proc p;
	size_t len;
	struct stat st;

	cr_assert(h_run(&p, 30, argv), "pytop record did not finish");
	cr_assert_eq(p.status, 0, "pytop record: %d %s", p.status, p.err.data);
	char *data = read_all(file, &len);
	cr_assert(len > 8192, "a recording of %zu bytes", len);
	write_bytes(trunc, data, len / 2);
	/* Every page but the schema's with its b-tree header overwritten (bytes
	 * outside cells may be free space, which no reader can check). */
	char *bad = malloc(len);
	size_t page = ((size_t)(unsigned char)data[16] << 8 | (unsigned char)data[17]);
	memcpy(bad, data, len);
	cr_assert(page >= 512, "page size %zu", page);
	for (size_t off = page; off + 16 <= len; off += page)
		memset(bad + off, 0x5a, 16);
	write_bytes(corrupt, bad, len);
	write_bytes(text, "just some text\n", 15);
	write_bytes(newer, data, len);
	sql_exec(newer, "PRAGMA user_version=2;");
	write_bytes(empty, data, len);
	sql_exec(empty, "DELETE FROM samples; DELETE FROM buckets;");
	/* Hand-edited files: their samples' stacks cannot be walked. */
	char *orphan = h_path(dir, "orphan.pytop"), *loop = h_path(dir, "loop.pytop");
	char *undef = h_path(dir, "undef.pytop");
	write_bytes(orphan, data, len);
	sql_exec(orphan, "UPDATE stacks SET parent = 987654 WHERE id = (SELECT stack FROM samples "
	    "ORDER BY samples DESC LIMIT 1);");
	write_bytes(loop, data, len);
	sql_exec(loop, "UPDATE stacks SET parent = id WHERE parent != 0;");
	write_bytes(undef, data, len);
	sql_exec(undef, "UPDATE samples SET stack = stack + 987654;");
	write_bytes(out, "keep me\n", 8);
	cr_assert_eq(symlink(victim, link), 0);

	const char *a1[] = { trunc, "--format", "collapsed", NULL };
	expect_refused("truncated", a1, "damaged");
	const char *a2[] = { corrupt, "--format", "collapsed", NULL };
	expect_refused("corrupted", a2, "damaged");
	const char *a3[] = { text, "--format", "collapsed", NULL };
	expect_refused("not SQLite", a3, "not a pytop recording");
	const char *a4[] = { newer, "--format", "collapsed", NULL };
	expect_refused("newer schema", a4, "newer pytop");
	const char *a5[] = { empty, "--format", "collapsed", NULL };
	expect_refused("empty", a5, "no samples");
	const char *a6[] = { file, "--format", "collapsed", "--from", "0.8", "--to", "0.4", NULL };
	expect_refused("from after to", a6, "not before --to");
	const char *a7[] = { file, "--format", "collapsed", "--from", "500", NULL };
	expect_refused("from outside", a7, "outside the recording");
	const char *a8[] = { file, "--format", "collapsed", "--to", "500", NULL };
	expect_refused("to outside", a8, "past the end");
	const char *a9[] = { file, "--format", "gif", NULL };
	expect_refused("unknown format", a9, "unknown export format");
	const char *a10[] = { file, "--format", "collapsed", "-o", out, NULL };
	expect_refused("existing output", a10, "already exists");
	const char *a11[] = { file, "--format", "collapsed", "-o", link, NULL };
	expect_refused("symlink output", a11, "symbolic link");
	const char *a12[] = { file, "--format", "collapsed", "-o", out, "--force", "--from",
	                      "500", NULL };
	expect_refused("--force with a bad window", a12, "outside the recording");
	/* A window between two buckets' starts holds none of them. */
	char from[32], to[32];
	between_buckets(newer, from, to);
	const char *a13[] = { file, "--format", "collapsed", "--from", from, "--to", to, NULL };
	expect_refused("an empty window", a13, "widen the window");

	const char *a14[] = { orphan, "--format", "collapsed", NULL };
	expect_refused("a stack whose parent is not in the file", a14, "damaged");
	const char *a15[] = { loop, "--format", "pprof", "-o", out, "--force", NULL };
	expect_refused("stacks that are their own parents", a15, "damaged");
	const char *a16[] = { undef, "--format", "chrome", NULL };
	expect_refused("samples on an undefined stack", a16, "damaged");

	cr_assert(same_bytes(out, "keep me\n", 8), "the existing output was changed");
	cr_assert_neq(lstat(victim, &st), 0, "a file was made through the planted symlink");
	cr_assert(same_bytes(file, data, len), "the recording was changed by being read");
	free(bad);
	free(data);
	free(orphan);
	free(loop);
	free(undef);
	h_proc_free(&p);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(trunc);
	free(corrupt);
	free(text);
	free(newer);
	free(empty);
	free(out);
	free(link);
	free(victim);
	free(dir);
}

/* One case at a time: each runs a CPU-bound workload under pytop, and
 * Criterion's parallel runner leaks under ASan (seen in test_cli too). */
int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
