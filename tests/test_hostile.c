/* test_hostile.c - pytop against targets that misbehave on purpose
 * (issue 15, item 6), each on the oldest and the newest supported CPython:
 * 200 threads started and ended a second, exec into a program that is not
 * Python, a fork storm with and without -s, an abrupt exit at a random
 * moment, code objects freed and reallocated at the same addresses, a
 * 5 000-frame recursion, hostile names and file names, a source file
 * rewritten and deleted, and a target in its own PID and mount namespaces.
 *
 * Every case runs two pytops side by side in batch mode (-d 0.5) on the
 * same target: one with --json launches it (or attaches to it), one
 * printing text attaches to it once the first snapshot named its PID.  It
 * checks of each that it
 *   - kept running: ended by itself (--duration or the target's end) with
 *     the expected exit status, at least a snapshot every other refresh
 *     and never 5 s without one, and printed no error line nor
 *     sanitizer report;
 *   - counted what it skipped: every JSON snapshot has errors <= ticks;
 *   - shows no garbage: its output is valid UTF-8 without control bytes
 *     (newlines apart), and so is every string of every JSON snapshot once
 *     decoded (an escaped "\u001b" is still an escape on a terminal);
 *   - kept its RSS flat (see RSS_GROWTH_KB);
 *   - left nothing stopped: no process of its process group (the target
 *     and its descendants) and no attached target in state T or t.
 * The cases whose target does something a profiler could get wrong check
 * that too (names never mixed up, hostile names counted, exit status).
 * The lines view (TUI, tmux) of a source rewritten with escapes and then
 * deleted is checked on screen.
 *
 * The cases run four at a time (see main): they assert no accuracy figure.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define RUN_S 4.0            /* pytop's --duration */
#define DELAY_S 0.5          /* pytop's -d */
#define GRACE_S 20.0         /* beyond RUN_S before a pytop counts as hung */
#define RSS_EVERY_S 0.1
#define MAX_RSS 512
/* How much pytop's RSS may grow from the first half of a run to the
 * second.  Its tables are bounded (aggregator rows, 64 threads, code
 * definitions aged out), but the 16 MiB ring's pages are touched for the
 * first time as records flow through it (100-200 KiB/s with ordinary
 * stacks), so most cases grow by a few hundred KiB (noted in the log); a
 * leak per thread, per fork, per sample at the rates of these targets
 * (hundreds to a thousand a second) exceeds this in two seconds as soon
 * as it reaches a few KiB each (a planted 4 KiB per record is caught in
 * every case with samples). */
#define RSS_GROWTH_KB 2048
/* Where the target makes new code objects all the time (code churn; each
 * child of a fork storm under -s is a new process whose codes are new to
 * pytop), growth is by design: a code's definition is kept 18 s after its
 * last sample (code_table_age, docs/architecture.md), longer than the run,
 * at about 1 KiB each, so a run's second half adds what the first did
 * (1-2 MiB measured). */
#define RSS_GROWTH_CODE_CHURN_KB 6144
/* A fork storm under -s: each child is a new process whose codes are new
 * to pytop, with its own reader (up to 32 at once), rows and records; RSS
 * measured at most 7.8 MiB on a loaded machine.  Before each reader's
 * tables were mapped for its process alone (cpython/mem_region.h), with
 * glibc's defaults the readers' freed blocks stayed resident: 19 to 28 MiB
 * within the 4 s. */
#define RSS_MAX_FOLLOW_KB 16384
/* 2 048-frame samples (16 KiB records) touch the 16 MiB ring's pages for
 * the first time over its first lap, a second or more at 1 kHz, which on a
 * busy machine ends in the second half.  A bounded, one-time growth. */
#define RSS_GROWTH_DEEP_KB (RSS_GROWTH_KB + 16 * 1024)
/* "Keeps running": a snapshot at least every MAX_GAP_S (ten refreshes: a
 * consumer stuck draining the ring went 10 to 12 s without one, before
 * session.c bounded the poll; on a machine loaded twenty deep on two
 * cores pytop's starved main thread was seen to take 3 s) and at least
 * half the refreshes. */
#define MAX_GAP_S 5.0

/* One pytop and what was measured of it while it ran. */
struct hrun {
	struct h_proc p;
	bool json;
	double late;              /* started this long after the first run,
	                             attached to its target: exits 0 */
	double rss_at[MAX_RSS];   /* seconds since start */
	long rss_kb[MAX_RSS];
	int nrss;
	json_t *snaps;            /* owned, JSON run only, after run_checks */
};

/* A case: both runs, their interpreter and what to expect of them. */
struct hcase {
	const char *name, *slot;
	char *python;             /* owned */
	char *dir;                /* owned: removed at the end */
	char *target_dir;         /* owned: the target's own directory (@DIR) */
	struct hrun runs[2];      /* [0] JSON, [1] text */
	int expect_status;        /* of the first run; -1: do not check */
	double min_seconds;       /* the first run must last at least this long */
	double duration;          /* the first run's --duration */
	long rss_growth_kb;       /* RSS_GROWTH_KB unless new codes never stop */
	long rss_max_kb;          /* 0, or a bound on every reading */
};

static void case_init(struct hcase *c, const char *name, const char *slot)
{
	memset(c, 0, sizeof *c);
	c->name = name;
	c->slot = slot;
	c->python = h_need_python_slot(slot);
	c->dir = h_tmpdir();
	c->expect_status = 128 + SIGTERM; /* pytop ends the target at --duration */
	c->min_seconds = RUN_S - 0.3;
	c->duration = RUN_S;
	c->rss_growth_kb = RSS_GROWTH_KB;
	c->target_dir = h_path(c->dir, "target");
	cr_assert_eq(mkdir(c->target_dir, 0755), 0);
	for (int i = 0; i < 2; i++)
		c->runs[i].json = i == 0;
}

static void case_free(struct hcase *c)
{
	for (int i = 0; i < 2; i++) {
		h_proc_free(&c->runs[i].p);
		json_decref(c->runs[i].snaps);
	}
	free(c->target_dir);
	h_rmtree(c->dir);
	free(c->dir);
	free(c->python);
}

/* ---- running ---------------------------------------------------------- */

static long rss_kb(pid_t pid)
{
	char path[64];
	long size, resident;
	snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	int n = fscanf(f, "%ld %ld", &size, &resident);
	fclose(f);
	return n == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

static void sample_rss(struct hrun *r)
{
	long kb = r->p.exited || r->p.pid <= 0 ? -1 : rss_kb(r->p.pid);
	if (kb > 0 && r->nrss < MAX_RSS) {
		r->rss_at[r->nrss] = h_now() - r->p.started;
		r->rss_kb[r->nrss++] = kb;
	}
}

#define MAX_ARGS 40

/* pytop's command line for one run: its options, `extra` (NULL-ended, may
 * be NULL), then `target` (NULL-ended) with "@DIR" replaced by dir and
 * "@GO" by go.  duration is the caller's buffer for --duration's text. */
static void build_argv(const char *argv[MAX_ARGS], char duration[16], const struct hrun *r,
                       double seconds, const char *dir, const char *go,
                       const char *const extra[], const char *const target[])
{
	int n = 0;
	snprintf(duration, 16, "%.1f", seconds);
	argv[n++] = h_pytop();
	argv[n++] = "-b";
	if (r->json)
		argv[n++] = "--json";
	argv[n++] = "-d";
	argv[n++] = "0.5";
	argv[n++] = "--duration";
	argv[n++] = duration;
	for (int i = 0; extra != NULL && extra[i] != NULL; i++)
		argv[n++] = extra[i];
	for (int i = 0; target[i] != NULL && n < MAX_ARGS - 1; i++)
		argv[n++] = strcmp(target[i], "@DIR") == 0 ? dir :
		            strcmp(target[i], "@GO") == 0 ? go : target[i];
	argv[n] = NULL;
}

static void pump_both(struct hcase *c)
{
	for (int i = 0; i < 2; i++) {
		sample_rss(&c->runs[i]);
		if (c->runs[i].p.pid > 0)
			h_proc_pump(&c->runs[i].p, RSS_EVERY_S / 2);
	}
}

/* The target's PID from the JSON run's first snapshot, 0 if it ended
 * without one. */
static pid_t first_pid(struct hcase *c, double deadline)
{
	struct h_proc *p = &c->runs[0].p;
	const char *at;
	while ((p->out.data == NULL || (at = strstr(p->out.data, "\"pid\":")) == NULL) &&
	       !p->exited && h_now() < deadline)
		pump_both(c);
	if (p->out.data == NULL || (at = strstr(p->out.data, "\"pid\":")) == NULL)
		return 0;
	return (pid_t)atoi(at + strlen("\"pid\":"));
}

#define GO_FILE "go"
#define GO_AFTER_S 0.7 /* after the second pytop started */

/* Both pytops, side by side, until both ended (or GRACE_S past RUN_S:
 * then killed and marked timed out), their RSS sampled meanwhile.  With
 * `target` the JSON run runs it (launches it, or attaches: "-p PID") and
 * the text run attaches to the same process once the first snapshot named
 * it; with attach_pid (target NULL) both attach from the start. */
static void run_both(struct hcase *c, const char *const extra[],
                     const char *const target[], const char *attach_pid)
{
	const char *argv[MAX_ARGS];
	const char *both[] = {"-p", attach_pid, NULL};
	double deadline = h_now() + c->duration + GRACE_S;
	char pid[16], duration[16];
	/* GO_FILE, for the workloads that wait for it: both pytops are on. */
	char *go = h_path(c->target_dir, GO_FILE);
	bool gone = false;

	build_argv(argv, duration, &c->runs[0], c->duration, c->target_dir, go, extra,
	           target ? target : both);
	cr_assert(h_proc_start(&c->runs[0].p, argv), "cannot start pytop");
	if (target == NULL) {
		snprintf(pid, sizeof pid, "%s", attach_pid);
	} else {
		pid_t p = first_pid(c, deadline);
		cr_assert_gt(p, 0, "%s %s: no first snapshot; stderr: %s", c->name, c->slot,
		             c->runs[0].p.err.data);
		snprintf(pid, sizeof pid, "%d", (int)p);
		c->runs[1].late = h_now() - c->runs[0].p.started;
	}
	build_argv(argv, duration, &c->runs[1], c->duration - c->runs[1].late, c->target_dir,
	           go, extra, (const char *[]){"-p", pid, NULL});
	cr_assert(h_proc_start(&c->runs[1].p, argv), "cannot start pytop");
	while (!(c->runs[0].p.exited && c->runs[1].p.exited) && h_now() < deadline) {
		pump_both(c);
		if (!gone && h_now() - c->runs[1].p.started >= GO_AFTER_S) {
			FILE *f = fopen(go, "w");
			cr_assert_not_null(f);
			fclose(f);
			gone = true;
		}
	}
	free(go);
	for (int i = 0; i < 2; i++)
		h_proc_finish(&c->runs[i].p, 0);
}

/* ---- checks ----------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (shortest form, no surrogates,
 * at most U+10FFFF), 0 if there is none. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	size_t n;
	unsigned cp;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* NULL if s[0..len) is valid UTF-8 without control bytes (but `allowed`),
 * else where the first bad byte is (borrowed, into s). */
static const char *garbage_at(const char *s, size_t len, const char *allowed)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len(u + i, len - i);
		if (n == 0 || ((u[i] < 0x20 || u[i] == 0x7f) && !strchr(allowed, u[i])))
			return s + i;
		/* C1 controls (U+0080..U+009F) act on some terminals too. */
		if (n == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)
			return s + i;
		i += n;
	}
	return NULL;
}

static void expect_clean(const char *what, const char *s, size_t len,
                         const char *allowed)
{
	const char *bad = garbage_at(s, len, allowed);
	if (bad != NULL) {
		size_t from = bad - s > 40 ? (size_t)(bad - s) - 40 : 0;
		cr_expect_fail("%s: byte 0x%02x at offset %zu is a control byte or not UTF-8: "
		        "\"%.80s\"", what, (unsigned char)*bad, (size_t)(bad - s), s + from);
	}
}

/* Every string in j, keys too, once decoded. */
static void expect_clean_strings(json_t *j, const char *where)
{
	const char *key;
	json_t *v;
	size_t i;
	if (json_is_string(j))
		expect_clean(where, json_string_value(j), json_string_length(j), "");
	else if (json_is_array(j))
		json_array_foreach(j, i, v)
			expect_clean_strings(v, where);
	else if (json_is_object(j))
		json_object_foreach(j, key, v) {
			expect_clean(where, key, strlen(key), "");
			expect_clean_strings(v, where);
		}
}

/* RSS in the second half of the run against the first: the largest of
 * each, so that one sample taken mid-allocation does not decide.  The
 * first refresh interval is pytop's own start (libraries mapped, the ring
 * allocated, attaching), not growth: an attached pytop read 2.5 MiB then. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

static void check_rss(const struct hcase *c, const struct hrun *r)
{
#ifdef UNDER_ASAN
	/* ASan keeps freed memory in quarantine (256 MiB by default) and adds
	 * shadow pages: RSS says nothing about pytop's own tables there. */
	h_note("hostile %s %s (%s): RSS not compared under AddressSanitizer",
	       c->name, c->slot, r->json ? "json" : "text");
	return;
#endif
	double half = r->p.seconds / 2;
	long first = 0, second = 0;
	int n1 = 0, n2 = 0;
	for (int i = 0; i < r->nrss; i++) {
		if (r->rss_at[i] < DELAY_S)
			continue;
		if (r->rss_at[i] < half) {
			first = r->rss_kb[i] > first ? r->rss_kb[i] : first;
			n1++;
		} else {
			second = r->rss_kb[i] > second ? r->rss_kb[i] : second;
			n2++;
		}
	}
	h_note("hostile %s %s (%s): pytop RSS %ld KiB in the first half, %ld KiB "
	       "in the second (%+ld KiB; %d+%d readings over %.1f s)", c->name,
	       c->slot, r->json ? "json" : "text", first, second, second - first, n1,
	       n2, r->p.seconds);
	/* Ten a second, unless the test itself got next to no CPU (a loaded
	 * machine, a short run): then there is nothing to compare. */
	if (n1 < 2 || n2 < 2) {
		h_note("hostile %s %s (%s): RSS not compared, %d+%d readings", c->name,
		       c->slot, r->json ? "json" : "text", n1, n2);
		return;
	}
	if (c->rss_max_kb > 0)
		cr_expect_leq(first > second ? first : second, c->rss_max_kb, "%s %s (%s): "
		              "pytop's RSS reached %ld KiB", c->name, c->slot,
		              r->json ? "json" : "text", first > second ? first : second);
	cr_expect_leq(second - first, c->rss_growth_kb, "%s %s (%s): pytop's RSS grew "
	              "by %ld KiB, from %ld to %ld KiB", c->name, c->slot,
	              r->json ? "json" : "text", second - first, first, second);
}

/* No process of group pgid stopped (pytop's launched target and its
 * descendants keep pytop's process group). */
static void check_none_stopped(const char *what, pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[512];
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		char *close = strrchr(buf, ')');
		char state;
		int ppid, group;
		if (close == NULL || sscanf(close + 1, " %c %d %d", &state, &ppid, &group) != 3)
			continue;
		cr_expect(group != pgid || (state != 'T' && state != 't'),
		          "%s: process %d (group %d) left stopped after pytop exited",
		          what, (int)pid, (int)pgid);
	}
	closedir(d);
}

static int count_prefix_lines(const char *s, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (const char *l = s; l != NULL && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		n += strncmp(l, prefix, len) == 0;
	return n;
}

/* What every run of every case must show.  Leaves the JSON run's
 * snapshots in c->runs[0].snaps. */
static void check_runs(struct hcase *c)
{
	for (int i = 0; i < 2; i++) {
		struct hrun *r = &c->runs[i];
		const char *kind = r->json ? "json" : "text";
		cr_assert(r->p.exited && !r->p.timed_out, "%s %s (%s): pytop hung; "
		          "stderr: %s", c->name, c->slot, kind, r->p.err.data);
		cr_expect(strstr(r->p.err.data, "Sanitizer") == NULL &&
		          strstr(r->p.err.data, "runtime error") == NULL &&
		          strstr(r->p.err.data, "pytop:") == NULL &&
		          strstr(r->p.err.data, "Traceback") == NULL,
		          "%s %s (%s): stderr: %s", c->name, c->slot, kind, r->p.err.data);
		/* Attached, pytop ends with 0 at --duration or the target's end. */
		int status = r->late > 0 ? 0 : c->expect_status;
		double min_seconds = c->min_seconds - r->late;
		int min_snaps = min_seconds / DELAY_S / 2 >= 1 ? (int)(min_seconds / DELAY_S / 2) : 1;
		if (status >= 0)
			cr_expect_eq(r->p.status, status, "%s %s (%s): exit status %d, "
			             "expected %d; stderr: %s", c->name, c->slot, kind,
			             r->p.status, status, r->p.err.data);
		cr_expect_geq(r->p.seconds, min_seconds, "%s %s (%s): pytop ended "
		              "after %.2f s", c->name, c->slot, kind, r->p.seconds);
		expect_clean(kind, r->p.out.data, r->p.out.len, "\n");
		check_rss(c, r);
		check_none_stopped(c->name, r->p.pid);
		if (!r->json) {
			int n = count_prefix_lines(r->p.out.data, "Samples ");
			cr_expect_geq(n, min_snaps, "%s %s (text): %d snapshots",
			              c->name, c->slot, n);
			continue;
		}
		int bad = 0;
		r->snaps = h_json_lines(r->p.out.data, &bad);
		cr_assert_not_null(r->snaps, "%s %s: JSON line %d unreadable", c->name,
		                   c->slot, bad);
		cr_expect_geq(json_array_size(r->snaps), (size_t)min_snaps,
		              "%s %s: %zu snapshots", c->name, c->slot,
		              json_array_size(r->snaps));
		size_t k;
		json_t *snap;
		double prev = 0;
		json_array_foreach(r->snaps, k, snap) {
			cr_expect_leq(h_num(snap, "elapsed") - prev, MAX_GAP_S, "%s %s: no "
			              "snapshot from %.2f s to %.2f s", c->name, c->slot, prev,
			              h_num(snap, "elapsed"));
			prev = h_num(snap, "elapsed");
			json_t *errors = json_object_get(snap, "errors");
			cr_assert(json_is_integer(errors), "%s: snapshot %zu has no errors count",
			          c->name, k + 1);
			cr_expect(h_num(snap, "errors") >= 0 &&
			          h_num(snap, "errors") <= h_num(snap, "ticks"),
			          "%s: snapshot %zu: %.0f errors of %.0f ticks", c->name, k + 1,
			          h_num(snap, "errors"), h_num(snap, "ticks"));
			expect_clean_strings(snap, c->name);
		}
	}
}

static json_t *last_snap(const struct hcase *c)
{
	json_t *s = c->runs[0].snaps;
	cr_assert(json_array_size(s) > 0, "%s: no snapshot", c->name);
	return json_array_get(s, json_array_size(s) - 1);
}

static void note_counts(const struct hcase *c, const char *extra)
{
	json_t *s = last_snap(c);
	h_note("hostile %s %s: %.0f samples, %.0f errors, %.0f ticks%s", c->name,
	       c->slot, h_num(s, "samples"), h_num(s, "errors"), h_num(s, "ticks"),
	       extra ? extra : "");
}

/* ---- the cases -------------------------------------------------------- */

/* Runs the workload with args (NULL-ended) under both pytops (with extra
 * options, NULL-ended or NULL), then the common checks. */
static void launch(struct hcase *c, const char *const extra[], const char *workload,
                   const char *const args[])
{
	const char *target[MAX_ARGS];
	char *wl = h_workload(workload);
	int n = 0;
	target[n++] = "--";
	target[n++] = c->python;
	target[n++] = wl;
	for (int i = 0; args[i] != NULL && n < MAX_ARGS - 1; i++)
		target[n++] = args[i];
	target[n] = NULL;
	run_both(c, extra, target, NULL);
	free(wl);
	check_runs(c);
}

static void thread_churn(const char *slot)
{
	struct hcase c;
	case_init(&c, "thread_churn", slot);
	launch(&c, NULL, "hostile_threads.py", (const char *[]){"60", "200", NULL});
	char extra[64];
	snprintf(extra, sizeof extra, ", %.0f threads at the end",
	         h_num(last_snap(&c), "threads_total"));
	note_counts(&c, extra);
	case_free(&c);
}

static void exec_other(const char *slot)
{
	struct hcase c;
	case_init(&c, "exec_sleep", slot);
	/* Once both pytops are on (a second one could not attach to sleep). */
	launch(&c, NULL, "hostile_exec.py",
	       (const char *[]){"@GO", "/bin/sleep", "60", NULL});
	json_t *last = last_snap(&c);
	cr_expect(json_is_true(json_object_get(last, "exec")),
	          "exec into /bin/sleep not reported (\"exec\" false)");
	cr_expect(json_is_false(json_object_get(last, "exited")), "sleep is still running");
	note_counts(&c, NULL);
	case_free(&c);
}

static void fork_storm(const char *slot, bool follow)
{
	struct hcase c;
	case_init(&c, follow ? "fork_storm_s" : "fork_storm", slot);
	if (follow) {
		c.rss_growth_kb = RSS_GROWTH_CODE_CHURN_KB;
		c.rss_max_kb = RSS_MAX_FOLLOW_KB;
	}
	launch(&c, follow ? (const char *[]){"-s", NULL} : NULL, "hostile_forks.py",
	       (const char *[]){"60", "200", NULL});
	char extra[64];
	snprintf(extra, sizeof extra, ", %zu processes listed at the end",
	         json_array_size(json_object_get(last_snap(&c), "processes")));
	note_counts(&c, extra);
	case_free(&c);
}

/* The target leaves abruptly at a moment drawn at random (noted in the
 * log), with a status drawn at random: pytop must end with it, soon after,
 * its last snapshot saying so. */
#define EXIT_DURATION_S 30.0
/* From the target's exit to pytop's: the sampler's notice, up to 2 s for
 * the kernel to show the exit (TARGET_EXIT_GRACE_NS), a refresh, and a
 * busy machine's delays. */
#define EXIT_WITHIN_S 6.0

static void random_exit(const char *slot)
{
	struct hcase c;
	char delay[16], status[16];
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	/* 0.2 .. 1.7 s after both pytops are on */
	double at = 0.2 + (double)(rand_r(&seed) % 1500) / 1000.0;
	int code = 3 + rand_r(&seed) % 120;
	case_init(&c, "random_exit", slot);
	snprintf(delay, sizeof delay, "%.3f", at);
	snprintf(status, sizeof status, "%d", code);
	c.expect_status = code;
	c.min_seconds = at;
	/* Far beyond: pytop must end because its target did. */
	c.duration = EXIT_DURATION_S;
	launch(&c, NULL, "hostile_exit.py", (const char *[]){"@GO", delay, status, NULL});
	/* From the JSON run's start */
	double exit_at = c.runs[1].late + GO_AFTER_S + at;
	for (int i = 0; i < 2; i++)
		cr_expect_lt(c.runs[i].p.seconds, exit_at - c.runs[i].late + EXIT_WITHIN_S,
		             "pytop (%s) did not end with its target (%.2f s)",
		             c.runs[i].json ? "json" : "text", c.runs[i].p.seconds);
	json_t *last = last_snap(&c);
	cr_expect(json_is_true(json_object_get(last, "exited")),
	          "the last snapshot does not say the target exited");
	cr_expect_eq(h_num(last, "exit_status"), code, "last snapshot's exit_status");
	char extra[64];
	snprintf(extra, sizeof extra, ", exit %d %s s after both attached", code, delay);
	note_counts(&c, extra);
	case_free(&c);
}

#define CHURN_BUDGET_MS "15"
#define MAX_CHURN_N 8192

/* Each churn round's rows in one snapshot: [0] churn_N, [1] its module. */
struct churn_rows {
	double own[2][MAX_CHURN_N];
	bool seen[2][MAX_CHURN_N];
	int newest; /* the highest N shown */
};

/* Every row of a <hostile_churn_N> file must be churn_N from line N, or
 * the module code that defines it, from line 1; a line row must be in
 * N .. N + 5 (the def and the body), or the module's line 0 or 1.  Every
 * churn_N row must be in <hostile_churn_N>.  Function rows are noted in
 * `out` (NULL for line rows). */
static int check_churn_rows(json_t *rows, struct churn_rows *out)
{
	size_t i;
	json_t *r;
	int seen = 0;
	bool lines = out == NULL;
	json_array_foreach(rows, i, r) {
		const char *name = json_string_value(json_object_get(r, "name"));
		const char *file = json_string_value(json_object_get(r, "file"));
		int line = (int)h_num(r, "line"), nf = -1, nn = -1;
		char tail;
		bool churn_file = file && sscanf(file, "<hostile_churn_%d%c", &nf, &tail) == 2 &&
		                  tail == '>';
		bool churn_name = name && sscanf(name, "churn_%d", &nn) == 1;
		bool module = churn_file && name && strcmp(name, "<module>") == 0;
		if (!churn_file && !churn_name)
			continue;
		seen++;
		cr_expect(module || (churn_file && churn_name && nf == nn),
		          "%s row mixes up codes: %s in %s", lines ? "line" : "function",
		          name, file);
		/* Module code starts with RESUME on line 0 (co_lines), and a
		 * frame caught before its first instruction is on the code's
		 * first line, 1 for a module. */
		if (lines)
			cr_expect((line >= nf && line <= nf + 5) || (module && line <= 1),
			          "line row %s %s:%d", name, file, line);
		else
			cr_expect_eq(line, module ? 1 : nf, "function row %s %s:%d", name,
			             file, line);
		if (out != NULL && churn_file && nf > 0 && nf < MAX_CHURN_N) {
			out->own[module][nf] = h_num(r, "own");
			out->seen[module][nf] = true;
			out->newest = nf > out->newest ? nf : out->newest;
		}
	}
	return seen;
}

/* Rounds run one after the other and the ring delivers samples in order:
 * once a snapshot showed round N, every older round had ended and all its
 * samples were in, so no later snapshot may show it with more (or show it
 * for the first time).  A code shown for a newer one that took its address
 * does. */
static void check_churn_frozen(const struct churn_rows *prev,
                               const struct churn_rows *cur, int snap)
{
	for (int n = 1; n < prev->newest; n++)
		for (int m = 0; m < 2; m++)
			if (cur->seen[m][n])
				cr_expect(prev->seen[m][n] && cur->own[m][n] == prev->own[m][n],
				          "snapshot %d: %s of round %d has %.0f samples, %.0f "
				          "before, after round %d was shown", snap,
				          m ? "the module" : "the function", n, cur->own[m][n],
				          prev->own[m][n], prev->newest);
}

static void code_churn(const char *slot)
{
	struct hcase c;
	struct churn_rows *rows = calloc(2, sizeof *rows);
	cr_assert_not_null(rows);
	case_init(&c, "code_churn", slot);
	c.rss_growth_kb = RSS_GROWTH_CODE_CHURN_KB;
	launch(&c, NULL, "hostile_code_churn.py",
	       (const char *[]){"60", CHURN_BUDGET_MS, NULL});
	size_t i;
	json_t *snap;
	int funcs = 0, lines = 0, newest = 0;
	json_array_foreach(c.runs[0].snaps, i, snap) {
		struct churn_rows *cur = &rows[i % 2], *prev = &rows[(i + 1) % 2];
		memset(cur, 0, sizeof *cur);
		funcs += check_churn_rows(json_object_get(snap, "functions"), cur);
		lines += check_churn_rows(json_object_get(snap, "lines"), NULL);
		if (i > 0)
			check_churn_frozen(prev, cur, (int)i + 1);
		newest = cur->newest;
	}
	/* Else the checks above saw nothing to check. */
	cr_expect_geq(funcs, 50, "only %d churn_N function rows in all snapshots", funcs);
	cr_expect_geq(lines, 50, "only %d churn_N line rows in all snapshots", lines);
	char extra[128];
	snprintf(extra, sizeof extra, ", %d function and %d line rows of churned code "
	         "checked, round %d shown last", funcs, lines, newest);
	note_counts(&c, extra);
	free(rows);
	case_free(&c);
}

static json_t *func_named(json_t *snap, const char *name)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(snap, "functions"), i, r)
		if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0)
			return r;
	return NULL;
}

/* What pytop shows of a stack deeper than its frame limit is only noted
 * here: tests/test_deep_stacks.c checks the outer Totals and the
 * "[N more frames]" marker. */
static void deep_recursion(const char *slot)
{
	struct hcase c;
	case_init(&c, "deep_5000", slot);
	c.rss_growth_kb = RSS_GROWTH_DEEP_KB;
	launch(&c, NULL, "hostile_deep.py", (const char *[]){"60", "5000", NULL});
	json_t *last = last_snap(&c);
	double samples = h_num(last, "samples");
	const char *names[] = {"spin", "recurse", "outermost", "<module>"};
	char extra[256];
	int n = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		json_t *f = func_named(last, names[i]);
		n += snprintf(extra + n, sizeof extra - n, "; %s own %.1f%% total %.1f%%",
		              names[i], f && samples > 0 ? 100 * h_num(f, "own") / samples : 0,
		              f && samples > 0 ? 100 * h_num(f, "total") / samples : 0);
	}
	note_counts(&c, extra);
	case_free(&c);
}

/* The rows of the three hostile names, as pytop must show them: escaped,
 * the long one cut with its marker.  Returns which one (0-2), or -1. */
static int hostile_row(json_t *r)
{
	const char *name = json_string_value(json_object_get(r, "name"));
	const char *file = json_string_value(json_object_get(r, "file"));
	if (!name || !file)
		return -1;
	if (strncmp(name, "Lxxxxxxxx", 9) == 0)
		return strlen(name) == 1000 + strlen("\xe2\x80\xa6[+9000 chars]") &&
		       strcmp(name + 1000, "\xe2\x80\xa6[+9000 chars]") == 0 ? 0 : -1;
	if (strcmp(name, "ctl\\x1b[2J\\x07name") == 0)
		return 1;
	size_t n = strlen(file), m = strlen("/hostile_\\xe9\\xff.py");
	return strcmp(name, "in_bad_file") == 0 && n >= m &&
	       strcmp(file + n - m, "/hostile_\\xe9\\xff.py") == 0 ? 2 : -1;
}

static void hostile_names(const char *slot)
{
	struct hcase c;
	case_init(&c, "names", slot);
	launch(&c, NULL, "hostile_names.py", (const char *[]){"60", "@DIR", NULL});
	json_t *last = last_snap(&c), *r;
	double shown = 0, errors = h_num(last, "errors");
	double all = errors + h_num(last, "samples");
	bool seen[3] = {false, false, false};
	size_t i;
	json_array_foreach(json_object_get(last, "functions"), i, r) {
		int k = hostile_row(r);
		if (k >= 0) {
			seen[k] = true;
			shown += h_num(r, "own");
		}
	}
	/* The workload spends nearly all its time in the three functions;
	 * start-up (imports, writing the file) takes a few percent.  Their
	 * samples are kept and shown escaped, not counted as errors. */
	cr_expect(seen[0] && seen[1] && seen[2], "hostile names not shown escaped: "
	          "long %d, control %d, latin-1 file %d", seen[0], seen[1], seen[2]);
	cr_expect_geq(shown, 0.8 * all, "samples in hostile names: %.0f shown of %.0f "
	              "(%.0f errors)", shown, all, errors);
	cr_expect_leq(errors, 0.02 * all, "%.0f errors of %.0f samples", errors, all);
	char extra[64];
	snprintf(extra, sizeof extra, ", %.0f samples shown in hostile names", shown);
	note_counts(&c, extra);
	case_free(&c);
}

static void sources_changed(const char *slot)
{
	struct hcase c;
	case_init(&c, "sources", slot);
	launch(&c, NULL, "hostile_sources.py",
	       (const char *[]){"60", "@DIR", "0.7", "1.4", NULL});
	char *deleted = h_path(c.target_dir, "deleted");
	cr_expect(access(deleted, F_OK) == 0, "the workload never deleted its source");
	free(deleted);
	cr_expect_not_null(func_named(last_snap(&c), "hot"), "hot() not shown");
	note_counts(&c, NULL);
	case_free(&c);
}

/* The target in new PID and mount namespaces (as a container seen from
 * the host), churning threads; both pytops attach to it by its host PID. */
static void in_namespace(const char *slot)
{
	struct hcase c;
	struct h_proc unshare;
	char *wl = h_workload("hostile_threads.py");
	char comm[16], pid[16], *copy;
	h_need_program("unshare");
	if (geteuid() != 0)
		cr_skip_test("unshare needs root to create PID and mount namespaces");
	case_init(&c, "namespace", slot);
	const char *argv[] = {"unshare", "-p", "-f", "-m", "--mount-proc", c.python, wl,
	                      "60", "200", NULL};
	cr_assert(h_proc_start(&unshare, argv), "cannot start unshare");
	copy = strdup(c.python);
	snprintf(comm, sizeof comm, "%s", basename(copy));
	free(copy);
	pid_t host = 0;
	for (double end = h_now() + 10; host <= 0 && h_now() < end; h_sleep(0.05))
		host = h_find_child(unshare.pid, comm);
	cr_assert_gt(host, 1, "no %s under unshare: %s", comm, unshare.err.data);
	h_sleep(0.3); /* its interpreter up */
	snprintf(pid, sizeof pid, "%d", (int)host);
	c.expect_status = 0;
	run_both(&c, NULL, NULL, pid);
	check_runs(&c);
	cr_expect(h_proc_state(host) != 'T' && h_proc_state(host) != 't',
	          "the target is left stopped");
	cr_expect_eq(h_tracer_pid(host), 0, "the target is left traced");
	check_none_stopped("namespace", unshare.pid);
	note_counts(&c, NULL);
	h_proc_free(&unshare);
	free(wl);
	case_free(&c);
}

/* ---- the lines view of a source rewritten and deleted (TUI) ----------- */

#define TUI_WORKLOAD_S "30" /* rewritten at 2 s, deleted when asked (run.sh) */
#define TUI_WAIT_S 15.0
#define TUI_LIFETIME_S 60

struct tui_case {
	struct h_tmux tmux;
	char *dir, *screen;   /* owned */
};

static void tui_see(struct tui_case *u, const char *needle, const char *why)
{
	char *last = NULL;
	free(u->screen);
	u->screen = h_tmux_wait_for(&u->tmux, needle, TUI_WAIT_S, &last);
	cr_assert_not_null(u->screen, "%s: \"%s\" never appeared; screen:\n%s", why,
	                   needle, last ? last : "(no capture)");
	free(last);
}

static void tui_key(struct tui_case *u, const char *k)
{
	const char *const ks[] = {k, NULL};
	cr_assert(h_tmux_keys(&u->tmux, ks), "send-keys %s failed", k);
}

/* The screen line holding needle (borrowed from u->screen, cut at its
 * end in place), or NULL. */
static char *tui_line(struct tui_case *u, const char *needle)
{
	char *hit = strstr(u->screen, needle), *start = hit;
	if (hit == NULL)
		return NULL;
	while (start > u->screen && start[-1] != '\n')
		start--;
	char *end = strchr(hit, '\n');
	if (end != NULL)
		*end = '\0';
	return start;
}

static void open_hot(struct tui_case *u)
{
	tui_key(u, "/");
	cr_assert(h_tmux_literal(&u->tmux, "hot"));
	tui_key(u, "Enter");
	/* The second Enter only once the filtered table is on screen: sent
	 * at once, on a busy machine it can reach the table before the filter
	 * has rebuilt it and open whichever row was selected before. */
	tui_see(u, "[filter: hot]", "the filtered table");
	tui_key(u, "Enter");
	tui_see(u, "Source of hot", "the lines view of hot()");
}

/* pytop's lines view shows hot()'s source after the file was rewritten
 * with terminal escapes, C1 controls and bytes that are not UTF-8: each
 * shown as text, not obeyed (a raw ESC [ 2 J would have wiped the title
 * and eaten "[2J"), and after it was deleted: a reason, no crash. */
static void tui_sources(const char *slot)
{
	struct tui_case u = {0};
	char *python = h_need_python_slot(slot);
	char *wl = h_workload("hostile_sources.py");
	h_need_program("tmux");
	u.dir = h_tmpdir();
	char *script = h_path(u.dir, "run.sh");
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f, "cd '%s'\n'%s' -- '%s' '%s' %s '%s' 2 asked\necho $? > exit_status\n"
	        "echo PYTOP-DONE\nexec sleep %d\n", u.dir, h_pytop(), python, wl,
	        TUI_WORKLOAD_S, u.dir, TUI_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&u.tmux, 120, 30, script, TUI_LIFETIME_S), "cannot start tmux");

	char *rewritten = h_path(u.dir, "rewritten"), *deleted = h_path(u.dir, "deleted");
	cr_assert(h_tmux_wait_file(&u.tmux, rewritten, TUI_WAIT_S), "the source was never rewritten");
	tui_see(&u, "hostile_src_mod.py", "hot() in the table");
	open_hot(&u);
	tui_see(&u, "HIJACK", "the rewritten line");
	cr_expect_not_null(strstr(u.screen, "Source of hot"), "the title is gone:\n%s",
	                   u.screen);
	char *line = tui_line(&u, "HIJACK");
	cr_expect(strstr(line, "[2J") != NULL && strstr(line, "]0;title") != NULL,
	          "the escapes were not shown as text: %s", line);
	const char *text = strstr(line, "HIJACK");
	text = text - line > 12 ? text - 12 : line;
	h_note("hostile tui_sources %s: the rewritten line shows as \"%.60s\"", slot, text);
	tui_see(&u, "surrogate", "the line that is not UTF-8");
	line = tui_line(&u, "surrogate");
	cr_expect_not_null(strstr(line, "bad "), "the line that is not UTF-8: %s", line);

	tui_key(&u, "Left");
	char *ask = h_path(u.dir, "delete-now");
	FILE *a = fopen(ask, "w");
	cr_assert_not_null(a);
	fclose(a);
	free(ask);
	cr_assert(h_tmux_wait_file(&u.tmux, deleted, TUI_WAIT_S), "the source was never deleted");
	tui_key(&u, "Enter");
	tui_see(&u, "source not available", "the lines view of a deleted file");
	tui_key(&u, "q");
	tui_see(&u, "PYTOP-DONE", "pytop quits");
	char *status_path = h_path(u.dir, "exit_status"), *status = h_read_file(status_path);
	char *pid_text = h_read_file(rewritten);
	cr_assert(status && pid_text);
	/* pytop ended the workload (SIGTERM) on q. */
	cr_expect_eq(atoi(status), 128 + SIGTERM, "pytop's exit status %s", status);
	char state = h_proc_state((pid_t)atoi(pid_text));
	cr_expect(state != 'T' && state != 't', "the target is left stopped");
	h_note("hostile tui_sources %s: escapes shown as text, deleted source "
	       "explained, exit status %d", slot, atoi(status));
	free(status_path);
	free(status);
	free(pid_text);
	free(rewritten);
	free(deleted);
	free(script);
	h_tmux_kill(&u.tmux);
	h_rmtree(u.dir);
	free(u.dir);
	free(u.screen);
	free(wl);
	free(python);
}

#define BOTH_PYTHONS(fn, name)                                                 \
	Test(hostile, name##_py311_debian, .timeout = 90) { fn("py311_debian"); } \
	Test(hostile, name##_py315_sid, .timeout = 90) { fn("py315_sid"); }

static void fork_storm_plain(const char *slot) { fork_storm(slot, false); }
static void fork_storm_follow(const char *slot) { fork_storm(slot, true); }

BOTH_PYTHONS(thread_churn, thread_churn)
BOTH_PYTHONS(exec_other, exec_into_sleep)
BOTH_PYTHONS(fork_storm_plain, fork_storm)
BOTH_PYTHONS(fork_storm_follow, fork_storm_subprocesses)
BOTH_PYTHONS(random_exit, exit_at_random)
BOTH_PYTHONS(code_churn, code_churn_names)
BOTH_PYTHONS(deep_recursion, recursion_5000)
BOTH_PYTHONS(hostile_names, long_and_non_utf8_names)
BOTH_PYTHONS(sources_changed, sources_rewritten_and_deleted)
BOTH_PYTHONS(in_namespace, own_pid_and_mount_namespace)
BOTH_PYTHONS(tui_sources, lines_view_of_rewritten_and_deleted_source)

/* Four cases at a time unless CRITERION_JOBS says otherwise: the cases
 * check no figure that a busy CPU could skew, and each spends most of
 * its few seconds waiting for --duration. */
int main(int argc, char *argv[])
{
	h_keep_notes();
	struct criterion_test_set *tests = criterion_initialize();
	int result = 0;
	if (criterion_handle_args(argc, argv, true)) {
		if (!getenv("CRITERION_JOBS"))
			criterion_options.jobs = 4;
		result = !criterion_run_all_tests(tests);
	}
	criterion_finalize(tests);
	return result;
}
