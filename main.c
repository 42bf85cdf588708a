/* main.c - pytop's entry point: parse the command line, open a profiling
 * session (engine), run the chosen view on it, and exit with the right
 * status.  The only file that sees both src/ and ui/. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "record/record_read.h"
#include "record/replay_source.h"
#include "options.h"
#include "session.h"
#include "ui/app.h"
#include "ui/export.h"
#include "ui/export_chrome.h"
#include "ui/export_file.h"
#include "ui/export_live.h"
#include "ui/push_live.h"
#include "ui/record_loop.h"
#include "ui/replay_batch.h"

#define DEMO_NAME "pytop_demo.py"

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The installed demo, or the one in the source tree when pytop runs
 * uninstalled from its build directory. */
static bool find_demo(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;
	static const char *const rel[] = { "demo/", "../demo/", PYTOP_SRCDIR "/demo/" };
	int w = snprintf(buf, len, "%s/%s", PYTOP_DATADIR, DEMO_NAME);

	if (w > 0 && (size_t)w < len && readable(buf))
		return true;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return false;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return false;
	slash[1] = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		w = snprintf(buf, len, "%s%s%s", rel[i][0] == '/' ? "" : self, rel[i], DEMO_NAME);

		if (w > 0 && (size_t)w < len && readable(buf))
			return true;
	}
	return false;
}

/* `pytop dump`: one look, printed; 0, or 1 with the one-line reason. */
static int run_dump(const struct options *o)
{
	struct pytop_error err = { 0 };
	struct dump d;
	int rc;

	if (dump_take(o, &d, &err) != 0) {
		fprintf(stderr, "pytop: %s\n", err.text);
		return 1;
	}
	if (o->json)
		rc = dump_print_json(&d, stdout, o->subprocesses);
	else {
		dump_print_text(&d, stdout);
		rc = fflush(stdout) == 0 ? 0 : -1;
	}
	dump_free(&d);
	if (rc != 0)
		fprintf(stderr, "pytop: could not write the dump to stdout; check where "
		        "it goes (a full disk, a closed pipe)\n");
	return rc != 0;
}

/* `pytop export FILE`: a window of a recording, written by the same
 * writers as a live export.  The recording is checked whole before the
 * output is created, so a bad one leaves nothing behind. */
/* The chrome format's timeline (empty for the others). */
struct timeline {
	struct chrome_slice *v;
	size_t n;
};

static int write_recording(const struct options *o, enum export_format f,
                           const struct snapshot *s, const struct record_info *info,
                           const struct timeline *t)
{
	struct export_meta m = {
		.command = info->command, .python_version = info->python_version,
		.rate_hz = info->rate_hz, .duration_s = s->elapsed_s,
		.start_time = info->started + (o->from_s > 0 ? o->from_s : 0),
	};
	char msg[512];
	FILE *out = o->output != NULL ? export_file_create(o->output, o->force, msg, sizeof msg)
	                              : stdout;
	int rc;

	if (out == NULL) {
		fprintf(stderr, "pytop: %s\n", msg);
		return 1;
	}
	rc = f == EXPORT_CHROME ? export_chrome(out, s, &m, t->v, t->n)
	                        : export_write(out, f, s, &m);
	if (o->output != NULL) {
		if (export_file_close(out, o->output, rc != 0, msg, sizeof msg) != 0) {
			fprintf(stderr, "pytop: %s\n", msg);
			return 1;
		}
		return 0;
	}
	if (rc != 0 || fflush(stdout) != 0) {
		fprintf(stderr, "pytop: could not write the export to stdout; check where "
		        "it goes (a full disk, a closed pipe)\n");
		return 1;
	}
	return 0;
}

/* Each thread's dominant stack per bucket, as the chrome writer takes it. */
static int read_timeline(struct record_reader *r, const struct options *o,
                         struct timeline *t, struct pytop_error *err)
{
	struct record_slice *sl = NULL;
	size_t n = 0;

	if (record_read_slices(r, o->from_s > 0 ? o->from_s : 0,
	                       o->to_s >= 0 ? o->to_s : INFINITY, &sl, &n, err) != 0)
		return -1;
	t->v = calloc(n ? n : 1, sizeof *t->v);
	if (t->v == NULL) {
		free(sl);
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory reading the recording's "
		          "timeline; export a shorter window (--from, --to)");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		t->v[i] = (struct chrome_slice){
			.t_start = sl[i].t_start, .t_end = sl[i].t_end, .pid = sl[i].pid,
			.tid = sl[i].tid, .node = sl[i].node, .samples = sl[i].samples,
			.thread_name = sl[i].thread_name,
		};
	t->n = n;
	free(sl);
	return 0;
}

static int run_export(const struct options *o)
{
	enum export_format f = export_format_named(o->format);
	struct pytop_error err = { 0 };
	struct record_reader *r;
	struct snapshot s;
	struct timeline t = { 0 };
	int rc;

	if (f == EXPORT_NONE) {
		fprintf(stderr, "pytop: unknown export format '%s'; give one of %s\n",
		        o->format, export_format_list());
		return 2;
	}
	if (f == EXPORT_PPROF && o->output == NULL && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "pytop: pprof is binary (gzipped protobuf), not for a terminal; "
		        "give -o FILE\n");
		return 2;
	}
	r = record_read_open(o->export_input, &err);
	if (r == NULL ||
	    record_read_window(r, o->from_s > 0 ? o->from_s : 0,
	                       o->to_s >= 0 ? o->to_s : INFINITY, &s, &err) != 0) {
		fprintf(stderr, "pytop: %s\n", err.text);
		record_read_close(r);
		return 1;
	}
	if (f == EXPORT_CHROME && read_timeline(r, o, &t, &err) != 0) {
		fprintf(stderr, "pytop: %s\n", err.text);
		rc = 1;
	} else {
		rc = write_recording(o, f, &s, record_read_info(r), &t);
	}
	free(t.v);
	snapshot_free(&s);
	record_read_close(r);
	return rc;
}

/* `pytop replay FILE`: the recording through the views.  It is checked
 * (and the window with it) before anything is printed or the terminal
 * taken. */
static int run_replay(const struct options *o)
{
	struct pytop_error err = { 0 };
	struct replay *r = replay_open(o->replay_input, o->from_s, o->to_s, o->batch, &err);
	struct snapshot_source src;
	struct export_live none;
	int rc;

	if (r == NULL) {
		fprintf(stderr, "pytop: %s\n", err.text);
		return 1;
	}
	src = replay_source(r);
	memset(&none, 0, sizeof none); /* a replay exports with pytop export */
	rc = o->batch ? replay_run_batch(o, &src, stdout) : app_run_tui(o, &src, &none);
	if (replay_failure(r) != NULL) {
		fprintf(stderr, "pytop: %s\n", replay_failure(r));
		rc = 1;
	} else if (rc != 0 && o->batch) {
		fprintf(stderr, "pytop: could not write the replay to stdout; check where "
		        "it goes (a full disk, a closed pipe)\n");
	}
	replay_close(r);
	return rc != 0;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct pytop_error err = { 0 };
	struct session *session;
	struct snapshot_source src;
	static char demo_path[PATH_MAX];
	static char python[] = "python3";
	char *demo_argv[] = { python, demo_path, NULL };
	struct export_live exports;
	static struct push_live push; /* its source outlives the views */
	char export_err[512];
	int ui_rc, status;

	/* A reader that goes away (pytop -b | head) makes the next write fail
	 * with EPIPE instead of killing pytop on the spot: the batch loop then
	 * ends as if time were up, and a launched program is stopped with it
	 * rather than left running. */
	signal(SIGPIPE, SIG_IGN);
	/* glibc's allocation defaults on purpose (no mallopt): what grew under
	 * -s was the per-process readers' tables, which now come from memory
	 * mapped for each process and unmapped with it (cpython/mem_region.h).
	 * A global M_MMAP_THRESHOLD of 128 KiB, the earlier fix, made every
	 * larger block of the aggregator a mapping of its own, and its RSS
	 * grew under thread and process churn. */
	switch (options_parse(argc, argv, isatty(STDOUT_FILENO), &opts)) {
	case OPTIONS_OK:
		break;
	case OPTIONS_EXIT_OK:
		return 0;
	default:
		return 2;
	}
	if (opts.dump)
		return run_dump(&opts);
	if (opts.export_recording)
		return run_export(&opts);
	if (opts.replay)
		return run_replay(&opts);
	if (opts.demo) {
		if (!find_demo(demo_path, sizeof(demo_path))) {
			fprintf(stderr, "pytop: the demo program %s is not installed in %s; "
			        "reinstall pytop (make install)\n", DEMO_NAME, PYTOP_DATADIR);
			return 1;
		}
		opts.command = demo_argv;
	}
	/* Before anything runs: a bad output path is said at once, and the
	 * file is ours from now on. */
	if (export_live_open(&exports, &opts, export_err, sizeof export_err) != 0) {
		fprintf(stderr, "pytop: %s\n", export_err);
		return 2;
	}
	/* A bad --push URL is a usage error, said before anything runs. */
	if (push_live_open(&push, &opts, export_err, sizeof export_err) != 0) {
		fprintf(stderr, "pytop: %s\n", export_err);
		export_live_close(&exports);
		return 2;
	}
	session = session_open(&opts, &err);
	if (session == NULL) {
		fprintf(stderr, "pytop: %s\n", err.text);
		push_live_close(&push, false);
		export_live_close(&exports);
		return 1;
	}
	if (session_sandbox_off(session) != NULL)
		fprintf(stderr, "pytop: warning: %s\n", session_sandbox_off(session));
	src = push_live_source(&push, session_source(session));
	if (opts.record) {
		ui_rc = record_loop_run(&opts, &src, &exports, push_live_on(&push));
	} else {
		ui_rc = opts.batch ? app_run_batch(&opts, &src, stdout, &exports)
		                   : app_run_tui(&opts, &src, &exports);
	}
	/* The last period, from a snapshot of everything counted; a server
	 * that does not answer costs at most PUSH_EXIT_WAIT_S. */
	push_live_close(&push, true);
	status = session_close(session);
	export_live_close(&exports);
	return ui_rc != 0 ? 1 : status;
}
