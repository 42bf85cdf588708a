/* test_record.c - recordings (pytop record -o FILE, -w FILE): what a file
 * holds is the truth the same run printed; a pytop killed with SIGKILL
 * mid-recording leaves a file that opens and holds everything up to its
 * last commit; a path that exists, a planted symlink or an unwritable
 * directory get one clear line, a non-zero exit, nothing overwritten and
 * no target started.  The files are read with the sqlite3 library. */
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
#include <time.h>
#include <unistd.h>

#include "busy_program.h"
#include "harness.h"

/* Read-write, never created: after a crash the first connection rebuilds
 * the WAL's index, which a read-only one cannot (it would see only what
 * was checkpointed into the file). */
static sqlite3 *open_db(const char *path)
{
	sqlite3 *db = NULL;

	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK,
	             "the recording %s does not open: %s", path, sqlite3_errmsg(db));
	return db;
}

/* One integer from a query (the first column of its first row). */
static long long q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
	             sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: no row (%s)", sql, sqlite3_errmsg(db));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static double q_double(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	double v;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
	             sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s: no row", sql);
	v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- truth: the recording against the same run's last snapshot ---------- */

/* Own and total samples of the function (name, file, first line) from the
 * recording: own where it is the leaf of a stack, total where it is on
 * the stack at all (once per sample, as the functions table counts). */
static const char FUNC_SQL[] =
	"WITH RECURSIVE per_stack(stack, n) AS ("
	"  SELECT stack, SUM(samples) FROM samples GROUP BY stack),"
	" fn(frame) AS ("
	"  SELECT f.id FROM frames f JOIN strings a ON a.id = f.name"
	"  JOIN strings b ON b.id = f.file"
	"  WHERE a.text = ?1 AND b.text = ?2 AND f.first_line = ?3 AND f.other = 0),"
	" up(stack, node) AS ("
	"  SELECT stack, stack FROM per_stack"
	"  UNION ALL SELECT up.stack, s.parent FROM up JOIN stacks s ON s.id = up.node"
	"  WHERE s.parent != 0)"
	" SELECT"
	"  (SELECT COALESCE(SUM(p.n), 0) FROM per_stack p JOIN stacks s ON s.id = p.stack"
	"   WHERE s.frame IN (SELECT frame FROM fn)),"
	"  (SELECT COALESCE(SUM(p.n), 0) FROM per_stack p WHERE p.stack IN"
	"   (SELECT up.stack FROM up JOIN stacks s ON s.id = up.node"
	"    WHERE s.frame IN (SELECT frame FROM fn)));";

static void recorded_counts(sqlite3 *db, const char *name, const char *file, int line,
                            long long *own, long long *total)
{
	sqlite3_stmt *st = NULL;

	cr_assert_eq(sqlite3_prepare_v2(db, FUNC_SQL, -1, &st, NULL), SQLITE_OK, "%s",
	             sqlite3_errmsg(db));
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, file, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, line);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	*own = sqlite3_column_int64(st, 0);
	*total = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
}

Test(record, totals_match_last_snapshot, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 2.0, true), *file = h_path(dir, "run.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "0.5", "-w", file, "--",
	                       py, busy, NULL };
	struct h_proc p;
	json_t *lines, *last, *fn;
	size_t i, checked = 0;
	int bad = 0;
	sqlite3 *db;

	cr_assert(h_run(&p, 40, argv), "pytop did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) > 0, "no JSON (bad line %d)", bad);
	last = json_array_get(lines, json_array_size(lines) - 1);
	db = open_db(file);
	cr_assert_eq(q_int(db, "PRAGMA user_version;"), 1);
	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='complete';"), 1);
	long long recorded = q_int(db, "SELECT COALESCE(SUM(samples),0) FROM samples;");
	long long printed = json_integer_value(json_object_get(last, "samples"));
	h_note("recording: %lld samples in %lld buckets; last snapshot: %lld samples",
	       recorded, q_int(db, "SELECT COUNT(*) FROM buckets;"), printed);
	cr_assert_gt(printed, 500, "too few samples to compare: %lld", printed);
	cr_assert_eq(recorded, printed, "the recording holds %lld samples, the last "
	             "snapshot %lld", recorded, printed);
	json_array_foreach(json_object_get(last, "functions"), i, fn) {
		const char *name = json_string_value(json_object_get(fn, "name"));
		const char *ffile = json_string_value(json_object_get(fn, "file"));
		int line = (int)json_integer_value(json_object_get(fn, "line"));
		long long own, total;

		if (strcmp(json_string_value(json_object_get(fn, "kind")), "other") == 0)
			continue;
		recorded_counts(db, name, ffile, line, &own, &total);
		cr_expect_eq(own, json_integer_value(json_object_get(fn, "own")),
		             "%s (%s:%d): own %lld recorded, %lld printed", name, ffile, line,
		             own, (long long)json_integer_value(json_object_get(fn, "own")));
		cr_expect_eq(total, json_integer_value(json_object_get(fn, "total")),
		             "%s (%s:%d): total %lld recorded, %lld printed", name, ffile, line,
		             total, (long long)json_integer_value(json_object_get(fn, "total")));
		checked++;
	}
	json_t *rec = json_object_get(last, "recording");
	cr_assert(rec != NULL, "the JSON does not say it is recording");
	cr_assert_eq(json_integer_value(json_object_get(rec, "buckets_merged")),
	             q_int(db, "SELECT value FROM meta WHERE key='buckets_merged';"),
	             "merged buckets: the JSON and the file disagree");
	cr_assert_eq(q_int(db, "SELECT COALESCE(SUM(merged),0) FROM buckets;"),
	             q_int(db, "SELECT value FROM meta WHERE key='buckets_merged';"));
	/* Thread names and lifetimes: every thread of the snapshot with
	 * samples is in the file under its name. */
	json_t *th;
	json_array_foreach(json_object_get(last, "threads"), i, th) {
		char sql[256];
		long long tid = json_integer_value(json_object_get(th, "tid"));
		sqlite3_stmt *st = NULL;

		if (json_integer_value(json_object_get(th, "samples")) == 0)
			continue;
		snprintf(sql, sizeof sql, "SELECT s.text, t.last_bucket >= t.first_bucket FROM "
		         "threads t JOIN strings s ON s.id = t.name WHERE t.tid = %lld;", tid);
		cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
		cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "thread %lld is not in the file", tid);
		cr_assert_str_eq((const char *)sqlite3_column_text(st, 0),
		                 json_string_value(json_object_get(th, "name")));
		cr_assert_eq(sqlite3_column_int(st, 1), 1);
		sqlite3_finalize(st);
	}
	cr_assert(h_func(last, "leaf") != NULL && h_func(last, "other") != NULL,
	          "the workload's functions are missing from the snapshot");
	h_note("%zu functions compared", checked);
	sqlite3_close(db);
	json_decref(lines);
	h_proc_free(&p);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(dir);
}

/* ---- kill -9 mid-recording ---------------------------------------------- */

static double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

Test(record, sigkill_leaves_committed_buckets, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, true), *file = h_path(dir, "run.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "record", "-o", file, "--", py, busy, NULL };
	struct h_proc p;
	double killed, started, last_end;
	sqlite3 *db;

	cr_assert(h_proc_start(&p, argv));
	h_proc_pump(&p, 3.0);
	cr_assert(!p.exited, "pytop record ended early: status %d, stderr: %s", p.status,
	          p.err.data);
	killed = realtime_s();
	h_proc_signal(&p, SIGKILL);
	h_proc_finish(&p, 10);
	cr_assert_eq(p.status, 128 + SIGKILL);
	db = open_db(file);
	sqlite3_stmt *st = NULL;
	cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check;", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='complete';"), 0,
	             "a killed recording must not say it is complete");
	started = q_double(db, "SELECT value FROM meta WHERE key='started';");
	last_end = q_double(db, "SELECT MAX(t_end) FROM buckets;");
	long long samples = q_int(db, "SELECT COALESCE(SUM(samples),0) FROM samples;");
	h_note("killed %.2f s after sampling started; the file holds %.2f s, %lld samples",
	       killed - started, last_end, samples);
	cr_assert_gt(samples, 0);
	/* At most a second lost: commits follow each 100 ms bucket. */
	cr_assert_geq(last_end, killed - started - 1.0, "the file ends at %.2f s, pytop was "
	              "killed at %.2f s", last_end, killed - started);
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM samples WHERE bucket NOT IN "
	                   "(SELECT id FROM buckets);"), 0, "samples of an unwritten bucket");
	sqlite3_close(db);
	h_proc_free(&p);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(dir);
}

/* ---- ends: --duration and SIGINT finish the file ------------------------ */

static void expect_complete(const char *file, double min_elapsed, double max_elapsed)
{
	sqlite3 *db = open_db(file);
	double elapsed = q_double(db, "SELECT value FROM meta WHERE key='elapsed';");

	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='complete';"), 1);
	cr_assert_gt(q_int(db, "SELECT COALESCE(SUM(samples),0) FROM samples;"), 0);
	cr_assert(elapsed >= min_elapsed && elapsed <= max_elapsed,
	          "elapsed %.2f s, expected %.1f to %.1f", elapsed, min_elapsed, max_elapsed);
	sqlite3_close(db);
}

Test(record, duration_and_sigint_finish_the_file, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, true);
	char *f1 = h_path(dir, "dur.pytop"), *f2 = h_path(dir, "int.pytop");
	char *wal = h_path(dir, "int.pytop-wal");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *dur[] = { h_pytop(), "record", "--duration", "1", "-o", f1, "--", py, busy,
	                      NULL };
	const char *intr[] = { h_pytop(), "record", "-o", f2, "--", py, busy, NULL };
	struct h_proc p;

	cr_assert(h_run(&p, 20, dur), "stderr: %s", p.err.data);
	/* As the live view: the launched program, stopped by pytop, ended by
	 * SIGTERM. */
	cr_assert_eq(p.status, 128 + SIGTERM, "exit %d; stderr: %s", p.status, p.err.data);
	cr_assert_lt(p.seconds, 10.0);
	h_proc_free(&p);
	expect_complete(f1, 0.9, 3.0);

	cr_assert(h_proc_start(&p, intr));
	h_proc_pump(&p, 1.5);
	h_proc_signal(&p, SIGINT);
	cr_assert(h_proc_finish(&p, 20), "pytop record did not end on SIGINT");
	cr_assert_eq(p.status, 128 + SIGTERM, "exit %d; stderr: %s", p.status, p.err.data);
	h_proc_free(&p);
	cr_assert(access(wal, F_OK) != 0, "a finished recording is one file: %s is left", wal);
	expect_complete(f2, 1.0, 5.0);
	h_rmtree(dir);
	free(busy);
	free(f1);
	free(f2);
	free(wal);
	free(dir);
}

/* pytop record --format FMT -o OUT: one step, no view; with -w the same
 * run is recorded too, and the export holds exactly the recording's
 * samples (both come from the one stack table). */
Test(record, format_exports_in_one_step, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, true);
	char *out = h_path(dir, "prof.folded"), *rec = h_path(dir, "both.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "record", "--format", "collapsed", "-o", out,
	                       "-w", rec, "--duration", "1.5", "--", py, busy, NULL };
	struct h_proc p;

	cr_assert(h_run(&p, 20, argv), "stderr: %s", p.err.data);
	cr_assert_eq(p.status, 128 + SIGTERM, "exit %d; stderr: %s", p.status, p.err.data);
	cr_assert_not_null(strstr(p.err.data, "wrote"), "no word of the export: %s", p.err.data);
	h_proc_free(&p);

	FILE *f = fopen(out, "r");
	cr_assert_not_null(f, "no export at %s", out);
	char line[8192];
	long long folded = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		char *sp = strrchr(line, ' ');
		cr_assert_not_null(sp, "not a collapsed line: %s", line);
		folded += atoll(sp + 1);
	}
	fclose(f);
	sqlite3 *db = open_db(rec);
	long long recorded = q_int(db, "SELECT SUM(samples) FROM samples");
	sqlite3_close(db);
	cr_assert_gt(recorded, 500, "%lld samples recorded in 1.5 s at 1 kHz", recorded);
	cr_assert_eq(folded, recorded, "the export holds %lld samples, the recording %lld",
	             folded, recorded);
	h_rmtree(dir);
	free(busy), free(out), free(rec), free(dir);
}

/* ---- -w in the TUI ------------------------------------------------------- */

Test(record, tui_records_while_you_watch, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, true), *file = h_path(dir, "tui.pytop");
	char *script = h_path(dir, "run.sh"), *status_path = h_path(dir, "exit_status");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *quit[] = { "q", NULL };
	struct h_tmux t = { .started = false };
	char *screen, *status, *last = NULL;
	FILE *f;

	h_need_program("tmux");
	f = fopen(script, "w");
	cr_assert(f != NULL);
	fprintf(f, "cd '%s'\n'%s' -w '%s' -- '%s' '%s'\necho $? > exit_status\nexec sleep 60\n",
	        dir, h_pytop(), file, py, busy);
	fclose(f);
	cr_assert(h_tmux_start(&t, 120, 30, script, 60));
	screen = h_tmux_wait_for(&t, "leaf", 15, &last);
	cr_assert(screen != NULL, "the TUI never showed the workload:\n%s", last);
	cr_assert(strstr(screen, "  rec  ") != NULL, "the header does not say it records:\n%s",
	          screen);
	free(screen);
	h_sleep(1.0);
	h_tmux_keys(&t, quit);
	cr_assert(h_tmux_wait_file(&t, status_path, 15), "pytop did not quit");
	h_sleep(0.2);
	status = h_read_file(status_path);
	h_tmux_kill(&t);
	/* As without -w: the launched program stopped by quitting, SIGTERM. */
	cr_assert_eq(atoi(status), 128 + SIGTERM, "exit status %s", status);
	expect_complete(file, 1.0, 30.0);
	free(status);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(script);
	free(status_path);
	free(dir);
}

/* ---- -s: the processes and what they ran --------------------------------- */

Test(record, subprocesses_described, .timeout = 60)
{
	char *dir = h_tmpdir(), *file = h_path(dir, "family.pytop");
	char *wl = h_workload("subprocs.py");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *argv[] = { h_pytop(), "record", "-s", "-o", file, "--", py, wl, "family",
	                       "--seconds", "2", NULL };
	struct h_proc p;
	sqlite3 *db;

	cr_assert(h_run(&p, 40, argv), "stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit %d; stderr: %s", p.status, p.err.data);
	db = open_db(file);
	long long sampled = q_int(db, "SELECT COUNT(DISTINCT ABS(pid)) FROM threads;");
	long long described = q_int(db, "SELECT COUNT(*) FROM processes p JOIN strings c "
	                            "ON c.id = p.command WHERE c.text LIKE '%subprocs.py%' AND "
	                            "p.pid IN (SELECT ABS(pid) FROM threads);");
	h_note("%lld processes sampled, %lld described", sampled, described);
	/* The parent, its two pool workers and the Python child. */
	cr_assert_geq(sampled, 4);
	cr_assert_eq(described, sampled, "a sampled process without its command line");
	cr_assert_eq(q_int(db, "SELECT COUNT(*) FROM processes WHERE last_bucket < first_bucket;"),
	             0);
	sqlite3_close(db);
	h_proc_free(&p);
	h_rmtree(dir);
	free(wl);
	free(file);
	free(dir);
}

/* ---- a disk that fails mid-recording ------------------------------------ */

/* A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes the writes fail
 * after the first ~150 KB: the recording stops and says so in the JSON,
 * profiling goes on, the file holds what came before, and pytop ends with
 * one line saying so (its status stays the launched program's, as
 * without -w; 1 when that was 0). */
Test(record, failed_disk_stops_recording_not_profiling, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 30.0, true), *file = h_path(dir, "full.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	char cmd[2048];
	const char *argv[] = { "sh", "-c", cmd, NULL };
	struct h_proc p;
	json_t *lines, *last, *rec;
	int bad = 0;
	sqlite3 *db;

	h_need_program("prlimit");
	snprintf(cmd, sizeof cmd, "trap '' XFSZ; exec prlimit --fsize=150000 '%s' -b --json "
	         "-d 0.5 -w '%s' -- '%s' '%s'", h_pytop(), file, py, busy);
	cr_assert(h_proc_start(&p, argv));
	h_proc_pump(&p, 4.0);
	cr_assert(!p.exited, "pytop ended early: %d, %s", p.status, p.err.data);
	h_proc_signal(&p, SIGINT);
	cr_assert(h_proc_finish(&p, 20));
	cr_assert_eq(p.status, 128 + SIGTERM, "exit status %d; stderr: %s", p.status, p.err.data);
	const char *line = strstr(p.err.data, "pytop: ");
	cr_assert(line != NULL && strncmp(line, "pytop: writing the recording", 28) == 0 &&
	          strstr(line + 1, "pytop: ") == NULL, "not one line on the recording: %s",
	          p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) > 0, "no JSON (bad line %d)", bad);
	last = json_array_get(lines, json_array_size(lines) - 1);
	rec = json_object_get(last, "recording");
	cr_assert(rec != NULL && json_is_true(json_object_get(rec, "stopped")),
	          "the JSON does not say the recording stopped");
	db = open_db(file);
	long long held = q_int(db, "SELECT COALESCE(SUM(samples),0) FROM samples;");
	long long printed = json_integer_value(json_object_get(last, "samples"));
	h_note("the file holds %lld samples, the run counted %lld", held, printed);
	cr_assert_gt(held, 0, "nothing before the failure was kept");
	cr_assert_gt(printed, held, "profiling stopped with the recording");
	cr_assert_eq(q_int(db, "SELECT value FROM meta WHERE key='complete';"), 0);
	sqlite3_close(db);
	json_decref(lines);
	h_proc_free(&p);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(dir);
}

/* ---- bad output paths ----------------------------------------------------- */

/* A target that would leave a mark if pytop started it. */
static char *marker_cmd(const char *dir, char **marker)
{
	char *path = h_path(dir, "mark.py");
	FILE *f = fopen(path, "w");

	*marker = h_path(dir, "started");
	cr_assert(f != NULL);
	fprintf(f, "open(%s%s%s, 'w').close()\nimport time\ntime.sleep(5)\n", "'", *marker, "'");
	fclose(f);
	return path;
}

static void expect_refused(const char *what, const char *const argv[], const char *marker,
                           const char *needle)
{
	struct h_proc p;

	h_run(&p, 20, argv);
	cr_assert(p.exited && !p.timed_out, "%s: pytop hung", what);
	cr_assert_eq(p.status, 1, "%s: exit status %d, expected 1; stderr: %s", what, p.status,
	             p.err.data);
	cr_assert_eq(h_count_lines(p.err.data), 1, "%s: not one line: %s", what, p.err.data);
	cr_assert(strncmp(p.err.data, "pytop: ", 7) == 0 && strstr(p.err.data, needle) != NULL,
	          "%s: the line does not say '%s': %s", what, needle, p.err.data);
	cr_assert(access(marker, F_OK) != 0, "%s: the target was started", what);
	h_proc_free(&p);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f != NULL);
	fputs(text, f);
	fclose(f);
}

Test(record, existing_file_not_overwritten, .timeout = 30)
{
	char *dir = h_tmpdir(), *marker, *cmd = marker_cmd(dir, &marker);
	char *file = h_path(dir, "keep.pytop"), *text;
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *rec[] = { h_pytop(), "record", "-o", file, "--", py, cmd, NULL };
	const char *live[] = { h_pytop(), "-b", "-w", file, "--", py, cmd, NULL };

	write_text(file, "precious\n");
	expect_refused("record -o existing", rec, marker, "already exists");
	expect_refused("-w existing", live, marker, "already exists");
	text = h_read_file(file);
	cr_assert_str_eq(text, "precious\n", "the existing file was changed");
	free(text);
	h_rmtree(dir);
	free(cmd);
	free(file);
	free(marker);
	free(dir);
}

Test(record, planted_symlink_not_followed, .timeout = 30)
{
	char *dir = h_tmpdir(), *marker, *cmd = marker_cmd(dir, &marker);
	char *file = h_path(dir, "link.pytop"), *victim = h_path(dir, "victim"), *text;
	char *wal = h_path(dir, "ok.pytop-wal"), *ok = h_path(dir, "ok.pytop");
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *rec[] = { h_pytop(), "record", "-o", file, "--", py, cmd, NULL };
	const char *rec_wal[] = { h_pytop(), "record", "-o", ok, "--", py, cmd, NULL };
	struct stat st;

	write_text(victim, "victim\n");
	cr_assert_eq(symlink(victim, file), 0);
	expect_refused("symlink at the path", rec, marker, "symlink");
	/* SQLite would create FILE-wal by name: a link planted there too. */
	cr_assert_eq(symlink(victim, wal), 0);
	expect_refused("symlink at FILE-wal", rec_wal, marker, "already exists");
	text = h_read_file(victim);
	cr_assert_str_eq(text, "victim\n", "the symlink's target was written");
	cr_assert(lstat(file, &st) == 0 && S_ISLNK(st.st_mode), "the symlink was removed");
	cr_assert(access(ok, F_OK) != 0, "a file was left at %s", ok);
	free(text);
	h_rmtree(dir);
	free(cmd);
	free(file);
	free(victim);
	free(wal);
	free(ok);
	free(marker);
	free(dir);
}

Test(record, unwritable_directory, .timeout = 30)
{
	char *dir = h_tmpdir(), *marker, *cmd = marker_cmd(dir, &marker);
	const char *py = h_need_python(H_PY_DEBIAN);
	/* /proc takes no new files, even from root. */
	const char *rec[] = { h_pytop(), "record", "-o", "/proc/pytop-test.pytop", "--", py,
	                      cmd, NULL };
	char *missing = h_path(dir, "no/such/dir/run.pytop");
	const char *rec2[] = { h_pytop(), "record", "-o", missing, "--", py, cmd, NULL };

	expect_refused("a directory nobody can write", rec, marker, "cannot create");
	expect_refused("a directory that does not exist", rec2, marker, "cannot create");
	h_rmtree(dir);
	free(cmd);
	free(missing);
	free(marker);
	free(dir);
}

Test(record, force_replaces_file_and_link, .timeout = 60)
{
	char *dir = h_tmpdir(), *busy = busy_program_write(dir, 0.5, true);
	char *file = h_path(dir, "old.pytop"), *victim = h_path(dir, "victim"), *text;
	const char *py = h_need_python(H_PY_DEBIAN);
	const char *rec[] = { h_pytop(), "record", "--force", "-o", file, "--", py, busy, NULL };
	struct h_proc p;
	struct stat st;
	sqlite3 *db;

	write_text(victim, "victim\n");
	cr_assert_eq(symlink(victim, file), 0);
	cr_assert(h_run(&p, 30, rec), "stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status, p.err.data);
	text = h_read_file(victim);
	cr_assert_str_eq(text, "victim\n", "--force wrote through the symlink");
	cr_assert(lstat(file, &st) == 0 && S_ISREG(st.st_mode), "no new file at the path");
	db = open_db(file);
	cr_assert_gt(q_int(db, "SELECT COALESCE(SUM(samples),0) FROM samples;"), 0);
	sqlite3_close(db);
	free(text);
	h_proc_free(&p);
	h_rmtree(dir);
	free(busy);
	free(file);
	free(victim);
	free(dir);
}

Test(record, usage_errors, .timeout = 30)
{
	static const char *const cases[][6] = {
		{ "record", "-p", "1", NULL },                  /* no -o */
		{ "record", "-o", "x", "-b", "-p", "1" },        /* a view's option */
		{ "record", "-o", "x", "-w", "y", "-p" },        /* both */
		{ "-o", "x", "-p", "1", NULL },                  /* -o outside record */
		{ "--force", "-p", "1", NULL },                  /* --force without a file */
	};
	/* What each line must name (the fix). */
	static const char *const needles[] = {
		"give -o FILE", "-b, --json, -n and -d", "drop -w", "use -w FILE", "--force",
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[9] = { h_pytop() };
		struct h_proc p;
		size_t n = 1;

		for (size_t k = 0; k < 6 && cases[i][k] != NULL; k++)
			argv[n++] = cases[i][k];
		if (strcmp(argv[n - 1], "-p") == 0)
			argv[n++] = "1";
		argv[n] = NULL;
		h_run(&p, 10, argv);
		cr_expect_eq(p.status, 2, "case %zu: exit %d; stderr: %s", i, p.status, p.err.data);
		cr_expect_eq(h_count_lines(p.err.data), 1, "case %zu: %s", i, p.err.data);
		cr_expect(strstr(p.err.data, needles[i]) != NULL, "case %zu does not say '%s': %s",
		          i, needles[i], p.err.data);
		h_proc_free(&p);
	}
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
