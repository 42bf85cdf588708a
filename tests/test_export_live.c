/* test_export_live.c - a live session's exports, end to end with the
 * real pytop on a real interpreter: -o FILE --format FMT when pytop ends
 * (collapsed counts equal to the last batch block's samples; the pprof's
 * top functions equal to its functions table, read by go tool pprof),
 * SIGUSR1 and --export-every (time-stamped files, nothing stopped or
 * overwritten), the TUI's E key (the status line says where), and every
 * bad output refused before anything runs. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch_run.h"
#include "harness.h"

/* Three hot functions of distinct names, for `seconds`; leaf_hot's time
 * on two lines by construction (about 2:1), so the lines comparison
 * never rests on the rare samples of the callers' own lines. */
static const char WORKLOAD[] =
	"import sys, time\n"
	"def leaf_hot(n):\n"
	"    s = 0\n"
	"    for i in range(n): s += i\n"
	"    for i in range(n // 2): s -= i\n"
	"    return s\n"
	"def mid_calls(n):\n"
	"    return leaf_hot(n)\n"
	"def outer_loop(seconds):\n"
	"    end = time.time() + seconds\n"
	"    while time.time() < end:\n"
	"        mid_calls(20000)\n"
	"print('ready', flush=True)\n"
	"outer_loop(float(sys.argv[1]))\n";

static char *dir, *script;

static void setup(void)
{
	FILE *f;

	dir = h_tmpdir();
	script = h_path(dir, "work.py");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs(WORKLOAD, f);
	fclose(f);
}

static void teardown(void)
{
	h_rmtree(dir);
	free(dir);
	free(script);
}

TestSuite(export_live, .init = setup, .fini = teardown, .timeout = 90);

/* How many files of dir start with prefix (and, when not NULL, their
 * names joined into names). */
static int count_files(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* The sum of a collapsed file's counts (-1: a line without one). */
static int64_t collapsed_sum(const char *path)
{
	char *text = h_read_file(path), *save = NULL;
	int64_t sum = 0;

	cr_assert_not_null(text, "no %s", path);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *blank = strrchr(l, ' ');

		if (blank == NULL) {
			sum = -1;
			break;
		}
		sum += strtoll(blank + 1, NULL, 10);
	}
	free(text);
	return sum;
}

/* pytop -b --json on the workload for `seconds` with these export
 * arguments; the last JSON block, owned. */
static json_t *run_batch(const char *seconds, const char *const extra[])
{
	const char *argv[24];
	struct h_proc p;
	json_t *last;

	batch_argv(argv, 24, true, NULL, extra, script, seconds);
	cr_assert(h_run(&p, 60, argv), "pytop did not finish: %s", p.err.data);
	cr_assert_eq(p.status, 0, "pytop exited %d: %s", p.status, p.err.data);
	cr_expect_not_null(strstr(p.err.data, "pytop: wrote "), "no word of the "
	                   "export on stderr: %s", p.err.data);
	last = batch_last_json(p.out.data);
	h_proc_free(&p);
	return last;
}

Test(export_live, collapsed_at_the_end_adds_up_to_the_last_block)
{
	char *out = h_path(dir, "prof.txt");
	const char *extra[] = { "--format", "collapsed", "-o", out, NULL };
	json_t *last = run_batch("1.5", extra);
	double samples = h_num(last, "samples");
	int64_t sum = collapsed_sum(out);

	h_note("collapsed: %" PRId64 " counted, the last block %.0f samples", sum, samples);
	cr_expect_gt(samples, 100);
	cr_expect_eq((double)sum, samples, "the collapsed counts sum to %" PRId64
	             ", the last block has %.0f samples", sum, samples);
	json_decref(last);
	free(out);
}

/* go tool pprof -top's flat value of the row named name (-1 if none). */
static double pprof_flat(const char *top, const char *name)
{
	char *copy = strdup(top), *save = NULL;
	double v = -1;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		double flat;
		char e[512];

		if (sscanf(l, " %lf %*f%% %*f%% %*f %*f%% %511[^\n]", &flat, e) == 2 &&
		    strcmp(e, name) == 0)
			v = flat;
	}
	free(copy);
	return v;
}

/* Owned: go tool pprof -top (opt: -lines or not) on the profile, by
 * samples. */
static char *pprof_top(const char *profile, bool lines)
{
	/* -trim=false: every entry, not only those over pprof's fractions. */
	const char *argv[] = { "go", "tool", "pprof", "-top", "-trim=false",
	                       "-sample_index=samples", lines ? "-lines" : profile,
	                       lines ? profile : NULL, NULL };
	struct h_proc p;
	char *out;

	cr_assert(h_run(&p, 60, argv), "go tool pprof did not finish");
	cr_assert_eq(p.status, 0, "go tool pprof cannot read it: %s", p.err.data);
	out = strdup(p.out.data);
	h_proc_free(&p);
	return out;
}

Test(export_live, pprof_top_is_the_functions_table)
{
	char *out = h_path(dir, "prof.pb.gz");
	const char *extra[] = { "--format", "pprof", "-o", out, NULL };
	static const char *const names[] = { "leaf_hot", "mid_calls", "outer_loop" };
	char *top, *top_lines, entry[1024];
	json_t *last, *fn, *row;
	size_t i, compared = 0;

	h_need_program("go");
	last = run_batch("1.5", extra);
	top = pprof_top(out, false);
	top_lines = pprof_top(out, true);
	h_note("go tool pprof -top -lines:\n%.900s", top_lines);
	for (i = 0; i < 3; i++) {
		fn = h_func(last, names[i]);
		cr_assert_not_null(fn, "%s not in the functions table", names[i]);
		cr_expect_eq(pprof_flat(top, names[i]), h_num(fn, "own"),
		             "%s: pprof flat %.0f, the functions table's own %.0f",
		             names[i], pprof_flat(top, names[i]), h_num(fn, "own"));
	}
	/* -lines: every line of the workload's file, "name file:line". */
	json_array_foreach(json_object_get(last, "lines"), i, row) {
		const char *file = json_string_value(json_object_get(row, "file"));

		const char *name = json_string_value(json_object_get(row, "name"));

		/* pprof's reports cut "<module>" (a C++ template, to it) down
		 * to nothing: the file has it whole (README, Exports). */
		if (file == NULL || strcmp(file, script) != 0 || h_num(row, "own") == 0 ||
		    name == NULL || name[0] == '<')
			continue;
		snprintf(entry, sizeof entry, "%s %s:%.0f", name, file, h_num(row, "line"));
		cr_expect_eq(pprof_flat(top_lines, entry), h_num(row, "own"),
		             "%s: pprof flat %.0f, the lines table's own %.0f", entry,
		             pprof_flat(top_lines, entry), h_num(row, "own"));
		compared++;
	}
	cr_expect_geq(compared, 2, "only %zu lines of the workload compared", compared);
	free(top);
	free(top_lines);
	json_decref(last);
	free(out);
}

/* pytop -b on the workload for `seconds`, with extra arguments, started. */
static void start_batch(struct h_proc *p, const char *seconds,
                        const char *const extra[])
{
	const char *argv[24];

	batch_argv(argv, 24, false, NULL, extra, script, seconds);
	cr_assert(h_proc_start(p, argv));
}

Test(export_live, sigusr1_writes_a_stamped_file_and_stops_nothing)
{
	char *out = h_path(dir, "prof.txt");
	const char *extra[] = { "--format", "collapsed", "-o", out, NULL };
	struct h_proc p;
	pid_t target;
	double t0;

	start_batch(&p, "4", extra);
	cr_assert(h_proc_wait_stdout(&p, "leaf_hot", 20), "no block names the "
	          "workload: %s", p.err.data);
	target = h_find_child(p.pid, "python3.11");
	h_proc_signal(&p, SIGUSR1);
	t0 = h_now();
	while (count_files("prof-") == 0 && h_now() - t0 < 5)
		h_proc_pump(&p, 0.1);
	cr_expect_eq(count_files("prof-"), 1, "no time-stamped export 5 s after "
	             "SIGUSR1; stderr: %s", p.err.data);
	cr_expect_not(p.exited, "pytop ended on SIGUSR1");
	if (target > 0)
		cr_expect_neq(h_proc_state(target), 'T', "the target was left stopped");
	h_proc_signal(&p, SIGUSR1);
	t0 = h_now();
	while (count_files("prof-") < 2 && h_now() - t0 < 5)
		h_proc_pump(&p, 0.1);
	cr_expect_eq(count_files("prof-"), 2, "the second SIGUSR1 overwrote the first "
	             "or wrote nothing; stderr: %s", p.err.data);
	cr_assert(h_proc_finish(&p, 30));
	cr_expect_eq(p.status, 0, "%s", p.err.data);
	cr_expect_gt(collapsed_sum(out), 0, "no final export");
	h_proc_free(&p);
	free(out);
}

Test(export_live, export_every_writes_one_file_per_period)
{
	char *out = h_path(dir, "prof.svg");
	const char *extra[] = { "--format", "flamegraph", "-o", out,
	                        "--export-every", "0.5", "--duration", "2.2", NULL };
	struct h_proc p;
	int n;

	start_batch(&p, "10", extra);
	cr_assert(h_proc_finish(&p, 30), "pytop did not end");
	n = count_files("prof-");
	h_note("--export-every 0.5 over 2.2 s: %d files", n);
	/* At 0.5, 1.0, 1.5 and 2.0 s, each with a block of -d 0.25. */
	cr_expect(n >= 3 && n <= 5, "%d time-stamped files", n);
	cr_expect_eq(count_files("prof.svg"), 1, "no final export");
	h_proc_free(&p);
	free(out);
}

/* pytop refused the output: one line naming it, exit 2, and the target
 * (a program that would create `marker`) never ran. */
static void expect_refused(const char *const extra[], const char *word)
{
	char *marker = h_path(dir, "launched");
	const char *argv[24];
	struct h_proc p;
	size_t n = 0;

	argv[n++] = h_pytop();
	argv[n++] = "-b";
	for (size_t i = 0; extra[i] != NULL; i++)
		argv[n++] = extra[i];
	argv[n++] = "--";
	argv[n++] = "touch";
	argv[n++] = marker;
	argv[n] = NULL;
	cr_assert(h_run(&p, 20, argv), "pytop hung");
	cr_expect_eq(p.status, 2, "exit %d for %s: %s", p.status, word, p.err.data);
	cr_expect_eq(h_count_lines(p.err.data), 1, "%s", p.err.data);
	cr_expect_not_null(strstr(p.err.data, word), "no \"%s\" in: %s", word, p.err.data);
	cr_expect_neq(access(marker, F_OK), 0, "the target ran although the output "
	              "was refused");
	h_proc_free(&p);
	free(marker);
}

Test(export_live, bad_outputs_are_refused_before_anything_runs)
{
	char *existing = h_path(dir, "existing.txt"), *link = h_path(dir, "link.txt");
	char *victim = h_path(dir, "victim"), *text;
	FILE *f;

	f = fopen(existing, "w");
	fputs("precious", f);
	fclose(f);
	f = fopen(victim, "w");
	fputs("precious", f);
	fclose(f);
	cr_assert_eq(symlink(victim, link), 0);
	{
		const char *a[] = { "--format", "svg", "-o", "x.svg", NULL };
		const char *b[] = { "--format", "collapsed", "-o", existing, NULL };
		const char *c[] = { "--format", "collapsed", "-o", link, "--force", NULL };
		const char *d[] = { "--format", "collapsed", "-o", "/proc/nope/p.txt", NULL };
		const char *e[] = { "-o", "x.txt", NULL };
		const char *g[] = { "--format", "pprof", NULL };

		expect_refused(a, "unknown export format 'svg'");
		expect_refused(b, "already exists");
		expect_refused(c, "symbolic link");
		expect_refused(d, "cannot create");
		expect_refused(e, "--format");
		expect_refused(g, "-o FILE");
	}
	text = h_read_file(existing);
	cr_expect_str_eq(text, "precious");
	free(text);
	text = h_read_file(victim);
	cr_expect_str_eq(text, "precious");
	free(text);
	free(existing);
	free(link);
	free(victim);
}

Test(export_live, tui_key_e_and_sigusr1_write_and_say_where)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *run = h_path(dir, "run.sh"), *out = h_path(dir, "prof.json");
	char *screen, *last = NULL;
	const char *q[] = { "q", NULL }, *e[] = { "E", NULL };
	struct h_tmux t;
	FILE *f = fopen(run, "w");
	pid_t pytop;
	double t0;

	h_need_program("tmux");
	cr_assert_not_null(f);
	fprintf(f, "cd %s\n%s --format speedscope -o %s -- %s %s 30 2>err.txt\n"
	        "echo EXITED $?\nexec sleep 60\n", dir, h_pytop(), out, py, script);
	fclose(f);
	cr_assert(h_tmux_start(&t, 160, 30, run, 80));
	screen = h_tmux_wait_for(&t, "leaf_hot", 20, &last);
	cr_assert_not_null(screen, "the TUI never showed the workload:\n%s", last);
	free(screen);
	cr_assert(h_tmux_keys(&t, e));
	screen = h_tmux_wait_for(&t, "wrote ", 10, &last);
	cr_expect_not_null(screen, "the status line does not say where:\n%s", last);
	if (screen != NULL) {
		cr_expect_not_null(strstr(screen, "prof-"), "%s", screen);
		h_note("after e:\n%s", screen);
	}
	cr_expect_eq(count_files("prof-"), 1, "no time-stamped export");
	free(screen);
	/* SIGUSR1 does the same in the TUI, without a key. */
	pytop = h_find_child(h_tmux_pane_pid(&t), "pytop");
	cr_assert_gt(pytop, 0, "no pytop under the pane's shell");
	kill(pytop, SIGUSR1);
	t0 = h_now();
	while (count_files("prof-") < 2 && h_now() - t0 < 5)
		h_sleep(0.1);
	cr_expect_eq(count_files("prof-"), 2, "no second time-stamped export after "
	             "SIGUSR1 in the TUI");
	cr_assert(h_tmux_keys(&t, q));
	screen = h_tmux_wait_for(&t, "EXITED", 15, &last);
	cr_expect_not_null(screen, "pytop did not quit:\n%s", last);
	free(screen);
	cr_expect_eq(count_files("prof.json"), 1, "no final export at q");
	h_tmux_kill(&t);
	free(last);
	free(run);
	free(out);
}
