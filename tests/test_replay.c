/* test_replay.c - pytop replay -b FILE: a recorded batch session printed
 * again from its recording.  Truth: a live `pytop -b --json -w FILE` and
 * `pytop replay -b --json FILE` agree to the sample (as many snapshots;
 * in each, the samples and every function's and line's own and total
 * equal); figures a recording does not keep are null, not 0; --from/--to
 * windows add up to the whole; a recording made before the refreshes were
 * kept (no refreshes table, no meta.delay_s) replays every second.  Bad input: one clear line, a non-zero
 * exit, nothing written. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sql_exec.h"


/* A recorded live batch session: its JSON lines, the recording in *file.
 * -d 0.35 puts the refreshes off the 100 ms bucket grid: only buckets
 * closed at each snapshot make the replay's windows the live ones. */
static json_t *record_live(const char *dir, char **file)
{
	char *work = h_workload("replay_pair.py"); /* two threads, 2.2 s */
	const char *py = h_need_python(H_PY_DEBIAN);
	struct h_proc p;
	json_t *lines;
	int bad = 0;

	*file = h_path(dir, "run.pytop");
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "0.35", "-w", *file, "--",
	                       py, work, "2.2", NULL };
	cr_assert(h_run(&p, 40, argv), "pytop did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "exit status %d; stderr: %s", p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL && json_array_size(lines) >= 3, "too few JSON lines (bad "
	          "line %d): %s", bad, p.out.data);
	h_proc_free(&p);
	free(work);
	return lines;
}

/* pytop replay args...: its JSON lines (the run must succeed). */
static json_t *replay_json(const char *const args[])
{
	const char *argv[16] = { h_pytop(), "replay", "-b", "--json" };
	size_t n = 4;
	struct h_proc p;
	json_t *lines;
	int bad = 0;

	for (size_t i = 0; args[i] != NULL && n + 1 < 16; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert(h_run(&p, 30, argv), "pytop replay did not finish; stderr: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop replay: status %d, stderr: %s", p.status, p.err.data);
	lines = h_json_lines(p.out.data, &bad);
	cr_assert(lines != NULL, "pytop replay: bad JSON line %d", bad);
	h_proc_free(&p);
	return lines;
}

static long long count(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "%s is not an integer", key);
	return json_integer_value(v);
}

/* Every row of `key` (functions or lines) of a is in b with the same own
 * and total, and b has no other row. */
static size_t same_rows(json_t *a, json_t *b, const char *key, size_t snap)
{
	json_t *ra = json_object_get(a, key), *rb = json_object_get(b, key), *x, *y;
	size_t i, j, n = 0;

	cr_assert_eq(json_array_size(ra), json_array_size(rb), "snapshot %zu: %zu %s live, "
	             "%zu replayed", snap, json_array_size(ra), key, json_array_size(rb));
	json_array_foreach(ra, i, x) {
		bool found = false;

		json_array_foreach(rb, j, y) {
			/* A function is (name, file), a line (file, line): its
			 * name is whichever function met it first. */
			bool lines = strcmp(key, "lines") == 0;

			if ((!lines && !json_equal(json_object_get(x, "name"),
			                           json_object_get(y, "name"))) ||
			    !json_equal(json_object_get(x, "file"), json_object_get(y, "file")) ||
			    (lines && !json_equal(json_object_get(x, "line"), json_object_get(y, "line"))))
				continue;
			found = true;
			cr_assert_eq(count(x, "own"), count(y, "own"), "snapshot %zu: %s %s own "
			             "%lld live, %lld replayed", snap, key,
			             json_string_value(json_object_get(x, "name")), count(x, "own"),
			             count(y, "own"));
			cr_assert_eq(count(x, "total"), count(y, "total"), "snapshot %zu: %s %s "
			             "total %lld live, %lld replayed", snap, key,
			             json_string_value(json_object_get(x, "name")), count(x, "total"),
			             count(y, "total"));
			n++;
			break;
		}
		cr_assert(found, "snapshot %zu: %s row %s (%s) is not in the replay", snap, key,
		          json_string_value(json_object_get(x, "name")),
		          json_string_value(json_object_get(x, "file")));
	}
	return n;
}

static json_t *last_of(json_t *lines)
{
	cr_assert_gt(json_array_size(lines), 0, "no snapshot");
	return json_array_get(lines, json_array_size(lines) - 1);
}

static json_t *func_of(json_t *snap, const char *name)
{
	json_t *f = h_func(snap, name);

	cr_assert(f != NULL, "%s is not in the snapshot", name);
	return f;
}

Test(replay, batch_agrees_with_live_and_windows_add_up, .timeout = 90)
{
	char *dir = h_tmpdir(), *file;
	json_t *live = record_live(dir, &file);
	const char *none[] = { file, NULL };
	json_t *rep = replay_json(none), *a, *b;
	size_t rows = 0;
	struct stat before, after;

	cr_assert_eq(stat(file, &before), 0);
	h_note("%zu live snapshots, %zu replayed", json_array_size(live), json_array_size(rep));
	cr_assert_eq(json_array_size(rep), json_array_size(live), "%zu snapshots replayed, "
	             "%zu printed live", json_array_size(rep), json_array_size(live));
	for (size_t k = 0; k < json_array_size(live); k++) {
		a = json_array_get(live, k);
		b = json_array_get(rep, k);
		cr_assert_eq(count(a, "samples"), count(b, "samples"), "snapshot %zu: %lld "
		             "samples live, %lld replayed", k, count(a, "samples"),
		             count(b, "samples"));
		rows += same_rows(a, b, "functions", k) + same_rows(a, b, "lines", k);
		cr_assert(json_is_object(json_object_get(b, "replay")), "snapshot %zu does not "
		          "say it is a replay", k);
		cr_assert(json_is_null(json_object_get(b, "pytop_cpu")), "snapshot %zu: pytop's "
		          "CPU is not in a recording, yet is not null", k);
		cr_assert(json_is_null(json_object_get(json_object_get(b, "gauges"), "verdict")),
		          "snapshot %zu: the verdict is not in a recording, yet is not null", k);
		cr_assert_gt(h_num(json_object_get(b, "gauges"), "rss"), 0, "snapshot %zu: "
		             "the recorded RSS is missing", k);
		cr_assert_eq(count(a, "ticks") > 0, count(b, "ticks") > 0);
	}
	b = last_of(rep);
	cr_assert_gt(count(b, "samples"), 500, "too few samples to compare: %lld",
	             count(b, "samples"));
	cr_assert(json_is_true(json_object_get(b, "exited")), "the last replayed snapshot "
	          "does not say the target exited");
	cr_assert_eq(json_array_size(json_object_get(b, "threads")), 2, "the two threads");
	h_note("%zu rows compared, all equal; last snapshot %lld samples", rows,
	       count(b, "samples"));

	/* Windows: [0, 1) and [1, end) add up to the whole, function by
	 * function (each window's last snapshot covers all of it). */
	const char *first[] = { file, "--to", "1", NULL }, *second[] = { file, "--from", "1",
	                                                                 NULL };
	json_t *w1 = replay_json(first), *w2 = replay_json(second);
	json_t *l1 = last_of(w1), *l2 = last_of(w2), *whole = last_of(rep);
	const char *names[] = { "leaf", "mid", "other", "worker" };

	h_note("windows: %lld + %lld samples, whole %lld", count(l1, "samples"),
	       count(l2, "samples"), count(whole, "samples"));
	cr_assert(count(l1, "samples") > 0 && count(l2, "samples") > 0, "an empty window");
	cr_assert_eq(count(l1, "samples") + count(l2, "samples"), count(whole, "samples"),
	             "windows add up to %lld, not %lld",
	             count(l1, "samples") + count(l2, "samples"), count(whole, "samples"));
	for (size_t i = 0; i < 4; i++) {
		long long o1 = count(func_of(l1, names[i]), "own"),
		          o2 = count(func_of(l2, names[i]), "own"),
		          t1 = count(func_of(l1, names[i]), "total"),
		          t2 = count(func_of(l2, names[i]), "total");

		cr_assert_eq(o1 + o2, count(func_of(whole, names[i]), "own"), "%s: own %lld + "
		             "%lld", names[i], o1, o2);
		cr_assert_eq(t1 + t2, count(func_of(whole, names[i]), "total"), "%s: total %lld "
		             "+ %lld", names[i], t1, t2);
	}
	cr_assert(json_real_value(json_object_get(json_object_get(l1, "replay"), "to")) <= 1.0,
	          "the first window's replay.to is past --to");
	/* Replaying wrote nothing into the recording. */
	cr_assert_eq(stat(file, &after), 0);
	cr_assert(before.st_size == after.st_size && before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
	          before.st_mtim.tv_nsec == after.st_mtim.tv_nsec, "the recording was changed");
	json_decref(live);
	json_decref(rep);
	json_decref(w1);
	json_decref(w2);
	free(file);
	h_rmtree(dir);
	free(dir);
}


/* pytop replay args: must fail with one line on stderr, nothing on
 * stdout, status `want`; the line must contain `says`. */
static void refused(const char *const args[], int want, const char *says)
{
	const char *argv[16] = { h_pytop(), "replay" };
	size_t n = 2;
	struct h_proc p;

	for (size_t i = 0; args[i] != NULL && n + 1 < 16; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	cr_assert(h_run(&p, 30, argv), "pytop replay did not finish");
	h_note("%s %s -> %d: %s", args[0], args[1] ? args[1] : "", p.status, p.err.data);
	cr_assert_eq(p.status, want, "status %d, not %d; stderr: %s", p.status, want,
	             p.err.data);
	cr_assert_eq(h_count_lines(p.err.data), 1, "not one line: %s", p.err.data);
	cr_assert(strstr(p.err.data, says) != NULL, "the line does not say '%s': %s", says,
	          p.err.data);
	cr_assert(p.out.len == 0, "something printed: %s", p.out.data);
	h_proc_free(&p);
}

Test(replay, bad_input_one_line_nothing_written, .timeout = 60)
{
	char *dir = h_tmpdir(), *file, *missing = h_path(dir, "missing.pytop");
	char *text = h_path(dir, "notes.txt"), *out = h_path(dir, "out.svg");
	json_t *live = record_live(dir, &file);
	FILE *f = fopen(text, "w");

	cr_assert(f != NULL);
	fputs("not a recording\n", f);
	fclose(f);
	const char *a1[] = { "-b", missing, NULL };
	refused(a1, 1, "missing.pytop");
	const char *a2[] = { "-b", text, NULL };
	refused(a2, 1, "not a pytop recording");
	const char *a3[] = { "-b", "--from", "999", file, NULL };
	refused(a3, 1, "outside the recording");
	const char *a4[] = { "-b", "--to", "999", file, NULL };
	refused(a4, 1, "past the end");
	const char *a5[] = { "-b", "--from", "2", "--to", "1", file, NULL };
	refused(a5, 2, "not before --to");
	const char *a6[] = { "-b", "-o", out, "--format", "flamegraph", file, NULL };
	refused(a6, 2, "pytop replay");
	cr_assert(access(out, F_OK) != 0, "-o's file was created");
	const char *a7[] = { "-b", "-p", "1", file, NULL };
	refused(a7, 2, "pytop replay");
	const char *a8[] = { "-b", file, text, NULL };
	refused(a8, 2, "exactly one recording");

	/* Hostile tables: refreshes of buckets that do not exist, a bucket
	 * whose times are not numbers (refused), processes that are each other's
	 * parents, names that are not strings.  Replayed or refused in one
	 * line, never a crash. */
	sql_exec(file, "INSERT INTO refreshes VALUES (999999), (-5);"
	          "INSERT INTO processes VALUES (77771, 1, 2, 77772, 999999, -1),"
	          " (77772, 1, 2, 77771, 5, 5);"
	          "UPDATE threads SET name = 123456789, first_bucket = -1;"
	          "INSERT OR REPLACE INTO meta VALUES ('subprocesses', 1), ('delay_s', 'nan');");
	const char *hostile[] = { h_pytop(), "replay", "-b", "--json", file, NULL };
	struct h_proc p;

	cr_assert(h_run(&p, 30, hostile), "pytop replay of a hostile file did not finish");
	h_note("hostile tables: status %d, %d JSON lines, stderr: %s", p.status,
	       h_count_lines(p.out.data), p.err.data);
	cr_assert_eq(p.status, 0, "status %d; stderr: %s", p.status, p.err.data);
	cr_assert_gt(h_count_lines(p.out.data), 0, "nothing replayed");
	cr_assert(strstr(p.out.data, "77772") != NULL, "the looping processes are not listed");
	h_proc_free(&p);
	/* A bucket end that is not a number: refused in one line. */
	sql_exec(file, "UPDATE buckets SET t_end = 'x' WHERE id = 4;");
	cr_assert(h_run(&p, 30, hostile), "pytop replay of a hostile file did not finish");
	h_note("a text bucket end: status %d, stderr: %s", p.status, p.err.data);
	cr_assert_eq(p.status, 1, "status %d; stderr: %s", p.status, p.err.data);
	cr_assert_eq(h_count_lines(p.err.data), 1, "not one line: %s", p.err.data);
	cr_assert(strstr(p.err.data, "damaged") != NULL, "not said damaged: %s", p.err.data);
	h_proc_free(&p);
	json_decref(live);
	free(file);
	free(missing);
	free(text);
	free(out);
	h_rmtree(dir);
	free(dir);
}

Test(replay, older_recording_refreshes_every_second, .timeout = 60)
{
	char *dir = h_tmpdir(), *file;
	json_t *live = record_live(dir, &file), *rep, *snap;
	const char *args[] = { file, NULL };
	size_t i;
	double extent;

	/* As a recording of before replay: neither the refreshes nor -d. */
	sql_exec(file, "DROP TABLE refreshes; DELETE FROM meta WHERE key = 'delay_s';");
	rep = replay_json(args);
	snap = last_of(rep);
	extent = h_num(json_object_get(snap, "replay"), "extent");
	h_note("%zu snapshots over %.3f s (live: %zu at -d 0.35)", json_array_size(rep), extent,
	       json_array_size(live));
	cr_assert_eq(json_array_size(rep), (size_t)ceil(extent), "%zu snapshots for %.3f s: "
	             "not one a second and one at the end", json_array_size(rep), extent);
	json_array_foreach(rep, i, snap) {
		double at = h_num(json_object_get(snap, "replay"), "at");

		cr_assert(i + 1 < json_array_size(rep) ? fabs(at - (double)(i + 1)) < 1e-9
		                                       : fabs(at - extent) < 1e-9,
		          "snapshot %zu at %.3f s", i, at);
	}
	/* The last covers the whole recording: the live run's last refresh
	 * and what came after it. */
	cr_assert_geq(count(last_of(rep), "samples"), count(last_of(live), "samples"));
	json_decref(live);
	json_decref(rep);
	free(file);
	h_rmtree(dir);
	free(dir);
}

/* One case at a time: each runs a CPU-bound workload under pytop, and
 * Criterion's parallel runner leaks under ASan. */
int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
