/* record_read.c - reading a recording back (record_read.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/record_read.h"

#include <math.h>
#include <stdio.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_copy.h"
#include "record/record_schema.h"

/* A table's ids, ascending, and what each maps to (a string, a frame
 * index): found by binary search, so a hostile id is only "not found". */
struct id_map {
	int64_t *ids;
	size_t n;
};

struct record_reader {
	struct record_copy copy;
	sqlite3 *db;
	const char *path;           /* the user's, borrowed: named in errors */
	struct record_info info;
	struct id_map strings;
	char **text;                /* per strings entry, owned */
	struct id_map nodes;        /* the last window's: node k's stack id */
};

static long id_find(const struct id_map *m, int64_t id)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ids[mid] == id)
			return (long)mid;
		if (m->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static sqlite3_stmt *prep(struct record_reader *r, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

static void damaged(struct record_reader *r, struct pytop_error *err)
{
	error_set(err, PYTOP_ERR_FILE, "the recording %s is damaged (%s); it cannot be "
	          "exported: record the session again", r->path, sqlite3_errmsg(r->db));
}

/* ---- checks ------------------------------------------------------------- */

static bool check_sqlite(struct record_reader *r, struct pytop_error *err)
{
	sqlite3_stmt *st = prep(r, "PRAGMA user_version;");
	int rc = st != NULL ? sqlite3_step(st) : sqlite3_errcode(r->db);
	long long version = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;

	sqlite3_finalize(st);
	if (sqlite3_errcode(r->db) == SQLITE_NOTADB || rc == SQLITE_NOTADB) {
		error_set(err, PYTOP_ERR_FILE, "%s is not a pytop recording (not an SQLite "
		          "database); give a file written by pytop record -o or -w", r->path);
		return false;
	}
	if (rc != SQLITE_ROW) {
		damaged(r, err);
		return false;
	}
	if (version > RECORD_SCHEMA_VERSION) {
		error_set(err, PYTOP_ERR_FILE, "%s is from a newer pytop (recording schema %lld; "
		          "this pytop reads up to %d); export it with the pytop that wrote it, or "
		          "upgrade", r->path, version, RECORD_SCHEMA_VERSION);
		return false;
	}
	return true;
}

/* quick_check reads every page: a truncated or overwritten file is said
 * here, before any figure is taken from it. */
static bool check_intact(struct record_reader *r, struct pytop_error *err)
{
	sqlite3_stmt *st = prep(r, "PRAGMA quick_check(1);");
	bool ok = st != NULL && sqlite3_step(st) == SQLITE_ROW &&
	          strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;

	if (!ok && st != NULL && sqlite3_column_text(st, 0) != NULL) {
		/* "*** in database main ***\nOn tree page 3 ...": the last line
		 * says what is wrong, on the one line an error gets. */
		const char *why = (const char *)sqlite3_column_text(st, 0);
		const char *nl = strrchr(why, '\n');

		error_set(err, PYTOP_ERR_FILE, "the recording %s is damaged (%s); it cannot be "
		          "exported: record the session again", r->path, nl ? nl + 1 : why);
	}
	else if (!ok)
		damaged(r, err);
	sqlite3_finalize(st);
	return ok;
}

static const char *meta_text(struct record_reader *r, const char *key, char *buf, size_t len)
{
	sqlite3_stmt *st = prep(r, "SELECT CAST(value AS TEXT) FROM meta WHERE key = ?;");

	buf[0] = '\0';
	if (st == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

static double query_double(struct record_reader *r, const char *sql, bool *ok)
{
	sqlite3_stmt *st = prep(r, sql);
	double v = 0;

	*ok = st != NULL && sqlite3_step(st) == SQLITE_ROW;
	if (*ok)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static bool read_info(struct record_reader *r, struct pytop_error *err)
{
	struct record_info *i = &r->info;
	char buf[64];
	bool ok1, ok2;

	if (meta_text(r, "format", buf, sizeof buf) == NULL ||
	    strcmp(buf, RECORD_FORMAT_NAME) != 0) {
		error_set(err, PYTOP_ERR_FILE, "%s is an SQLite database but not a pytop "
		          "recording; give a file written by pytop record -o or -w", r->path);
		return false;
	}
	meta_text(r, "command", i->command, sizeof i->command);
	meta_text(r, "python_version", i->python_version, sizeof i->python_version);
	i->rate_hz = atoi(meta_text(r, "rate_hz", buf, sizeof buf));
	i->started = atof(meta_text(r, "started", buf, sizeof buf));
	i->pid = (pid_t)atol(meta_text(r, "pid", buf, sizeof buf));
	i->delay_s = atof(meta_text(r, "delay_s", buf, sizeof buf));
	if (!(i->delay_s >= 0.01 && i->delay_s <= 86400))
		i->delay_s = 1.0; /* recorded before replay, or hostile */
	i->idle = atoi(meta_text(r, "idle", buf, sizeof buf)) != 0;
	i->no_split = atoi(meta_text(r, "no_split", buf, sizeof buf)) != 0;
	i->native = atoi(meta_text(r, "native", buf, sizeof buf)) != 0;
	i->subprocesses = atoi(meta_text(r, "subprocesses", buf, sizeof buf)) != 0;
	i->exited = atoi(meta_text(r, "exited", buf, sizeof buf)) != 0;
	i->exit_status = i->exited && buf[0] != '\0'
	                 ? atoi(meta_text(r, "exit_status", buf, sizeof buf)) : -1;
	/* Times that are not numbers (or run backwards) would place every
	 * window wrong: the file is damaged, not merely short. */
	if (query_double(r, "SELECT COUNT(*) FROM buckets WHERE typeof(t_start) NOT IN "
	                 "('real', 'integer') OR typeof(t_end) NOT IN ('real', 'integer') "
	                 "OR NOT (t_end >= t_start);", &ok1) != 0 || !ok1) {
		error_set(err, PYTOP_ERR_FILE, "the recording %s is damaged (a bucket's times "
		          "are not numbers, or end before they start); it cannot be read: "
		          "record the session again", r->path);
		return false;
	}
	i->end_s = query_double(r, "SELECT COALESCE(MAX(t_end), 0) FROM buckets;", &ok1);
	i->samples = (unsigned long long)query_double(
		r, "SELECT COALESCE(SUM(samples), 0) FROM samples;", &ok2);
	if (!ok1 || !ok2) {
		damaged(r, err);
		return false;
	}
	if (i->samples == 0) {
		error_set(err, PYTOP_ERR_FILE, "the recording %s holds no samples (it ended "
		          "before the first 100 ms bucket was written); record for longer", r->path);
		return false;
	}
	return true;
}

/* ---- strings -------------------------------------------------------------- */

static bool load_strings(struct record_reader *r)
{
	bool ok;
	size_t cap = (size_t)query_double(r, "SELECT COUNT(*) FROM strings;", &ok);
	sqlite3_stmt *st = ok ? prep(r, "SELECT id, text FROM strings ORDER BY id;") : NULL;

	if (st == NULL)
		return false;
	r->strings.ids = calloc(cap ? cap : 1, sizeof *r->strings.ids);
	r->text = calloc(cap ? cap : 1, sizeof *r->text);
	while (r->strings.ids && r->text && r->strings.n < cap && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 1);
		size_t k = r->strings.n;

		r->strings.ids[k] = sqlite3_column_int64(st, 0);
		r->text[k] = strdup(t != NULL ? (const char *)t : "");
		if (r->text[k] == NULL)
			break;
		r->strings.n++;
	}
	sqlite3_finalize(st);
	return r->strings.n == cap;
}

static const char *string_of(const struct record_reader *r, int64_t id)
{
	long k = id_find(&r->strings, id);

	return k >= 0 ? r->text[k] : "";
}

/* ---- open / close --------------------------------------------------------- */

struct record_reader *record_read_open(const char *path, struct pytop_error *err)
{
	struct record_reader *r = calloc(1, sizeof *r);

	if (r == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return NULL;
	}
	r->path = path;
	if (record_copy_make(&r->copy, path, err) != 0) {
		free(r);
		return NULL;
	}
	if (sqlite3_open_v2(r->copy.path, &r->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
	                    NULL) != SQLITE_OK) {
		damaged(r, err);
		record_read_close(r);
		return NULL;
	}
	if (!check_sqlite(r, err) || !check_intact(r, err) || !read_info(r, err)) {
		record_read_close(r);
		return NULL;
	}
	if (!load_strings(r)) {
		damaged(r, err);
		record_read_close(r);
		return NULL;
	}
	return r;
}

const struct record_info *record_read_info(const struct record_reader *r)
{
	return &r->info;
}

void record_read_close(struct record_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->strings.n; i++)
		free(r->text[i]);
	free(r->text);
	free(r->strings.ids);
	free(r->nodes.ids);
	sqlite3_close(r->db);
	record_copy_remove(&r->copy);
	free(r);
}

struct sqlite3 *record_read_db(struct record_reader *r)
{
	return r->db;
}

const char *record_read_string(const struct record_reader *r, int64_t id)
{
	return string_of(r, id);
}

void record_read_damaged(struct record_reader *r, struct pytop_error *err)
{
	damaged(r, err);
}

/* ---- a window as a snapshot's stack table --------------------------------- */

static size_t count_of(struct record_reader *r, const char *sql)
{
	bool ok;
	double n = query_double(r, sql, &ok);

	return ok && n > 0 ? (size_t)n : 0;
}

/* Frame 0 is unused, as in a live snapshot (pprof's location k is frame
 * k); recorded frame k (ascending ids) is frame k + 1. */
static bool load_frames(struct record_reader *r, struct snapshot *s, struct id_map *fm)
{
	size_t cap = count_of(r, "SELECT COUNT(*) FROM frames;");
	sqlite3_stmt *st = prep(r, "SELECT id, name, file, line, first_line, native, module, "
	                        "other FROM frames ORDER BY id;");

	fm->ids = calloc(cap + 1, sizeof *fm->ids);
	s->stack_frames = calloc(cap + 1, sizeof *s->stack_frames);
	if (fm->ids == NULL || s->stack_frames == NULL) {
		sqlite3_finalize(st);
		return false;
	}
	fm->ids[0] = INT64_MIN;
	s->stack_frames[0] = (struct snap_frame){ .name = "", .file = "", .module = "" };
	fm->n = 1;
	while (st && fm->n <= cap && sqlite3_step(st) == SQLITE_ROW) {
		struct snap_frame *f = &s->stack_frames[fm->n];

		fm->ids[fm->n++] = sqlite3_column_int64(st, 0);
		f->name = string_of(r, sqlite3_column_int64(st, 1));
		f->file = string_of(r, sqlite3_column_int64(st, 2));
		f->line = sqlite3_column_int(st, 3);
		f->first_line = sqlite3_column_int(st, 4);
		f->native = sqlite3_column_int(st, 5) != 0;
		f->module = string_of(r, sqlite3_column_int64(st, 6));
		f->other = sqlite3_column_int(st, 7) != 0;
	}
	sqlite3_finalize(st);
	s->nstack_frames = fm->n;
	return st != NULL && fm->n == cap + 1;
}

/* A node that cannot be walked to the root: its own parent (see below)
 * or no frame. */
static bool node_bad(const struct snapshot *s, uint32_t k)
{
	return k != 0 && (s->stack_nodes[k].parent == k ||
	                  s->stack_nodes[k].frame == UINT32_MAX);
}

/* Node 0 is the root; recorded stack k (ascending ids) is node k + 1.  A
 * parent that is not an earlier good node leaves the node its own parent,
 * which node_bad and export_node_ok refuse. */
static bool load_nodes(struct record_reader *r, struct snapshot *s, const struct id_map *fm,
                       struct id_map *nm)
{
	size_t cap = count_of(r, "SELECT COUNT(*) FROM stacks;");
	sqlite3_stmt *st = prep(r, "SELECT id, parent, frame FROM stacks ORDER BY id;");

	nm->ids = calloc(cap + 1, sizeof *nm->ids);
	s->stack_nodes = calloc(cap + 1, sizeof *s->stack_nodes);
	if (nm->ids == NULL || s->stack_nodes == NULL) {
		sqlite3_finalize(st);
		return false;
	}
	nm->ids[0] = INT64_MIN; /* the root: found by parent 0 alone */
	nm->n = 1;
	while (st && nm->n <= cap && sqlite3_step(st) == SQLITE_ROW) {
		uint32_t n = (uint32_t)nm->n;
		int64_t parent = sqlite3_column_int64(st, 1);
		long p = parent == 0 ? 0 : id_find(nm, parent);

		if (p == 0 && parent != 0)
			p = -1;
		long f = id_find(fm, sqlite3_column_int64(st, 2));
		/* ids that are not ascending (a hand-made file) can make the
		 * search miss: never an index out of range. */
		struct snap_stack_node *node = &s->stack_nodes[n];

		nm->ids[nm->n++] = sqlite3_column_int64(st, 0);
		node->parent = p >= 0 && (uint32_t)p < n && !node_bad(s, (uint32_t)p)
		               ? (uint32_t)p : n;
		node->frame = f > 0 ? (uint32_t)f : UINT32_MAX;
		node->depth = node->parent < n ? s->stack_nodes[node->parent].depth + 1 : 0;
	}
	sqlite3_finalize(st);
	s->nstack_nodes = nm->n;
	return st != NULL && nm->n == cap + 1;
}

static const char WINDOW_SQL[] =
	"SELECT s.stack, t.tid, t.pid, SUM(s.samples), SUM(s.us), SUM(s.python), "
	"SUM(s.native), SUM(s.system), SUM(s.cpu_wait), SUM(s.gil_wait), SUM(s.waiting), "
	"SUM(s.mem_growth), SUM(s.mem_shrink), SUM(s.minflt), SUM(s.majflt) "
	"FROM samples s JOIN buckets b ON b.id = s.bucket LEFT JOIN threads t ON t.id = s.thread "
	"WHERE b.t_start >= ?1 AND b.t_start < ?2 GROUP BY s.stack, s.thread;";

static void row_to_stack(sqlite3_stmt *st, struct snap_stack *k)
{
	const double u = RECORD_SPLIT_PER_SAMPLE;

	k->tid = (pid_t)sqlite3_column_int64(st, 1);
	k->pid = (pid_t)sqlite3_column_int64(st, 2);
	k->samples = k->samples_win = (uint64_t)sqlite3_column_int64(st, 3);
	k->seconds = (double)sqlite3_column_int64(st, 4) / 1e6;
	k->split = (struct snap_split){
		.python = sqlite3_column_double(st, 5) / u,
		.native = sqlite3_column_double(st, 6) / u,
		.system = sqlite3_column_double(st, 7) / u,
		.cpu_wait = sqlite3_column_double(st, 8) / u,
		.gil_wait = sqlite3_column_double(st, 9) / u,
		.waiting = sqlite3_column_double(st, 10) / u,
		.mem_growth = (uint64_t)sqlite3_column_int64(st, 11),
		.mem_shrink = (uint64_t)sqlite3_column_int64(st, 12),
		.minflt = (uint64_t)sqlite3_column_int64(st, 13),
		.majflt = (uint64_t)sqlite3_column_int64(st, 14),
	};
	k->split_win = k->split;
}

/* Samples on a stack that was never defined, or cannot be walked to the
 * root, would vanish from every export: the file is refused instead. */
static bool stack_ok(struct record_reader *r, const struct snapshot *s, long n, int64_t id,
                     struct pytop_error *err)
{
	if (n > 0 && !node_bad(s, (uint32_t)n))
		return true;
	error_set(err, PYTOP_ERR_FILE, "the recording %s is damaged (samples on stack %lld, "
	          "%s); it cannot be exported: record the session again", r->path,
	          (long long)id, n > 0 ? "whose frames or parents are not in the file"
	                               : "which is not defined");
	return false;
}

static bool load_stacks(struct record_reader *r, struct snapshot *s, const struct id_map *nm,
                        double from, double to, struct pytop_error *err)
{
	sqlite3_stmt *st = prep(r, WINDOW_SQL);
	size_t cap = 0;
	int rc = SQLITE_DONE;

	if (st == NULL)
		return false;
	sqlite3_bind_double(st, 1, from);
	sqlite3_bind_double(st, 2, to);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long n = id_find(nm, sqlite3_column_int64(st, 0));

		if (sqlite3_column_int64(st, 3) <= 0)
			continue;
		if (!stack_ok(r, s, n, sqlite3_column_int64(st, 0), err)) {
			sqlite3_finalize(st);
			return false;
		}
		if (s->nstacks == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			struct snap_stack *g = realloc(s->stacks, ncap * sizeof *g);

			if (g == NULL)
				break;
			s->stacks = g;
			cap = ncap;
		}
		memset(&s->stacks[s->nstacks], 0, sizeof s->stacks[0]);
		s->stacks[s->nstacks].node = (uint32_t)n;
		row_to_stack(st, &s->stacks[s->nstacks]);
		s->samples += s->stacks[s->nstacks].samples;
		s->nstacks++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE;
}

static bool window_ok(struct record_reader *r, double from, double to, struct pytop_error *err)
{
	double end = r->info.end_s;

	if (!(from >= 0) || !(from < end)) {
		error_set(err, PYTOP_ERR_FILE, "--from %g is outside the recording %s, which "
		          "covers 0 to %.1f s; give --from below %.1f", from, r->path, end, end);
		return false;
	}
	if (!(to > from)) {
		error_set(err, PYTOP_ERR_FILE, "--from %g is not before --to %g; give a window "
		          "with --from < --to", from, to);
		return false;
	}
	if (isfinite(to) && to > end + RECORD_BUCKET_S) {
		error_set(err, PYTOP_ERR_FILE, "--to %g is past the end of the recording %s, "
		          "which covers 0 to %.1f s; give --to %.1f or less, or leave it out",
		          to, r->path, end, end);
		return false;
	}
	return true;
}

int record_read_span(struct record_reader *r, double from, double to,
                     struct snapshot *out, struct pytop_error *err)
{
	struct id_map fm = { 0 }, nm = { 0 };
	bool ok;

	memset(out, 0, sizeof *out);
	if (!window_ok(r, from, to, err))
		return -1;
	err->text[0] = '\0';
	ok = load_frames(r, out, &fm) && load_nodes(r, out, &fm, &nm) &&
	     load_stacks(r, out, &nm, from, to, err) && snapshot_own_strings(out);
	free(fm.ids);
	free(r->nodes.ids);
	r->nodes = nm;
	if (!ok) {
		if (err->text[0] == '\0')
			damaged(r, err);
		snapshot_free(out);
		return -1;
	}
	out->samples_win = out->samples;
	out->requested_hz = r->info.rate_hz;
	out->target_started = r->info.started;
	out->elapsed_s = out->window_s = fmin(to, r->info.end_s) - from;
	snprintf(out->command, sizeof out->command, "%s", r->info.command);
	snprintf(out->python_version, sizeof out->python_version, "%s", r->info.python_version);
	return 0;
}

int record_read_window(struct record_reader *r, double from, double to,
                       struct snapshot *out, struct pytop_error *err)
{
	if (record_read_span(r, from, to, out, err) != 0)
		return -1;
	if (out->samples == 0) {
		error_set(err, PYTOP_ERR_FILE, "no bucket of the recording %s with samples starts "
		          "at or after --from %g and before --to %g; widen the window", r->path,
		          from, to);
		snapshot_free(out);
		return -1;
	}
	return 0;
}

/* ---- a window's timeline: each thread's dominant stack per bucket ---------- */

/* SQLite gives a bare column the row of the one MAX() in the query: the
 * stack of the (bucket, thread) row with most samples. */
static const char SLICES_SQL[] =
	"SELECT b.t_start, b.t_end, t.pid, t.tid, s.stack, MAX(s.samples), SUM(s.samples), "
	"t.name FROM samples s JOIN buckets b ON b.id = s.bucket "
	"LEFT JOIN threads t ON t.id = s.thread "
	"WHERE b.t_start >= ?1 AND b.t_start < ?2 GROUP BY s.bucket, s.thread "
	"ORDER BY t.pid, t.tid, b.t_start;";

static void row_to_slice(struct record_reader *r, sqlite3_stmt *st, struct record_slice *sl)
{
	long n = id_find(&r->nodes, sqlite3_column_int64(st, 4));

	sl->t_start = sqlite3_column_double(st, 0);
	sl->t_end = sqlite3_column_double(st, 1);
	sl->pid = (pid_t)sqlite3_column_int64(st, 2);
	sl->tid = (pid_t)sqlite3_column_int64(st, 3);
	sl->node = n > 0 ? (uint32_t)n : 0;
	sl->samples = (unsigned long long)sqlite3_column_int64(st, 6);
	sl->thread_name = string_of(r, sqlite3_column_int64(st, 7));
}

int record_read_slices(struct record_reader *r, double from, double to,
                       struct record_slice **out, size_t *n, struct pytop_error *err)
{
	sqlite3_stmt *st = prep(r, SLICES_SQL);
	struct record_slice *v = NULL;
	size_t cap = 0;
	int rc = SQLITE_ERROR;

	*n = 0;
	if (st != NULL) {
		sqlite3_bind_double(st, 1, from);
		sqlite3_bind_double(st, 2, to);
	}
	while (st != NULL && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			struct record_slice *g = realloc(v, ncap * sizeof *g);

			if (g == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = g;
			cap = ncap;
		}
		row_to_slice(r, st, &v[(*n)++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		damaged(r, err);
		free(v);
		*n = 0;
		return -1;
	}
	*out = v;
	return 0;
}
