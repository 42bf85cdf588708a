/* record_timeline.c - a recording's refreshes, gauges and lifetimes
 * (record_timeline.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "record/record_timeline.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* A hand-made file may hold millions of rows: a replay shows at most
 * this many refreshes, threads or processes. */
#define TIMELINE_MAX_ROWS 262144

static sqlite3_stmt *prep(struct record_reader *r, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(record_read_db(r), sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

static double col_time(sqlite3_stmt *st, int k)
{
	double v = sqlite3_column_double(st, k);

	return isfinite(v) ? v : 0;
}

static uint64_t col_count(sqlite3_stmt *st, int k)
{
	sqlite3_int64 v = sqlite3_column_int64(st, k);

	return v > 0 ? (uint64_t)v : 0;
}

bool record_timeline_index(struct record_reader *r)
{
	return sqlite3_exec(record_read_db(r), "CREATE INDEX IF NOT EXISTS "
	                    "pytop_replay_t_end ON buckets(t_end);", NULL, NULL, NULL) == SQLITE_OK;
}

static const char REFRESHES_SQL[] =
	"SELECT DISTINCT b.t_end FROM refreshes f JOIN buckets b ON b.id = f.bucket "
	"ORDER BY b.t_end;";

static bool has_table(struct record_reader *r, const char *name)
{
	sqlite3_stmt *st = prep(r, "SELECT 1 FROM sqlite_master WHERE type = 'table' "
	                        "AND name = ?;");
	bool yes;

	if (st == NULL)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int record_timeline_refreshes(struct record_reader *r, double **t, size_t *n,
                              struct pytop_error *err)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = SQLITE_DONE;

	*t = NULL;
	*n = 0;
	if (!has_table(r, "refreshes"))
		return 0;
	st = prep(r, REFRESHES_SQL);
	if (st == NULL) {
		record_read_damaged(r, err);
		return -1;
	}
	while (*n < TIMELINE_MAX_ROWS && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		double v = col_time(st, 0);

		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			double *g = realloc(*t, ncap * sizeof *g);

			if (g == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			*t = g;
			cap = ncap;
		}
		if (v > 0 && (*n == 0 || v > (*t)[*n - 1]))
			(*t)[(*n)++] = v;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(*t);
		*t = NULL;
		*n = 0;
		record_read_damaged(r, err);
		return -1;
	}
	return 0;
}

static const char GAUGES_SQL[] =
	"SELECT t_end, ticks, errors, dropped, gauges_valid, rss, rss_peak, minflt, majflt,"
	" cpu_user, cpu_system, os_threads FROM buckets WHERE t_end <= ?1"
	" AND (?2 = 0 OR gauges_valid != 0) ORDER BY t_end DESC LIMIT 1;";

bool record_timeline_gauges(struct record_reader *r, double at, bool valid,
                            struct record_gauges_at *g)
{
	sqlite3_stmt *st = prep(r, GAUGES_SQL);

	memset(g, 0, sizeof *g);
	if (st == NULL)
		return false;
	sqlite3_bind_double(st, 1, at);
	sqlite3_bind_int(st, 2, valid);
	if (sqlite3_step(st) == SQLITE_ROW) {
		g->found = true;
		g->t_end = col_time(st, 0);
		g->ticks = col_count(st, 1);
		g->errors = col_count(st, 2);
		g->dropped = col_count(st, 3);
		g->valid = sqlite3_column_int(st, 4) != 0 &&
		           sqlite3_column_type(st, 5) != SQLITE_NULL;
		g->rss = col_count(st, 5);
		g->rss_peak = col_count(st, 6);
		g->minflt = col_count(st, 7);
		g->majflt = col_count(st, 8);
		g->cpu_user = col_time(st, 9);
		g->cpu_system = col_time(st, 10);
		g->threads = (int)col_count(st, 11);
	}
	sqlite3_finalize(st);
	return g->found;
}

static int read_lives(struct record_reader *r, const char *sql, bool process,
                      struct record_life **v, size_t *n, struct pytop_error *err)
{
	sqlite3_stmt *st = prep(r, sql);
	size_t cap = 0;
	int rc = SQLITE_ERROR;

	*v = NULL;
	*n = 0;
	while (st != NULL && *n < TIMELINE_MAX_ROWS && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct record_life *l;

		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct record_life *g = realloc(*v, ncap * sizeof *g);

			if (g == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			*v = g;
			cap = ncap;
		}
		l = &(*v)[(*n)++];
		l->id = (pid_t)sqlite3_column_int64(st, 0);
		l->parent = (pid_t)sqlite3_column_int64(st, 1);
		l->name = record_read_string(r, sqlite3_column_int64(st, 2));
		l->python = process ? record_read_string(r, sqlite3_column_int64(st, 3)) : "";
		l->first_s = col_time(st, 4);
		l->last_s = col_time(st, 5);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		free(*v);
		*v = NULL;
		*n = 0;
		record_read_damaged(r, err);
		return -1;
	}
	return 0;
}

int record_timeline_threads(struct record_reader *r, struct record_life **v, size_t *n,
                            struct pytop_error *err)
{
	return read_lives(r, "SELECT t.tid, t.pid, t.name, 0, f.t_start, l.t_end FROM threads t"
	                  " LEFT JOIN buckets f ON f.id = t.first_bucket"
	                  " LEFT JOIN buckets l ON l.id = t.last_bucket"
	                  " WHERE t.tid > 0 ORDER BY t.tid, t.pid;", false, v, n, err);
}

int record_timeline_processes(struct record_reader *r, struct record_life **v, size_t *n,
                              struct pytop_error *err)
{
	return read_lives(r, "SELECT p.pid, COALESCE(p.ppid, 0), COALESCE(p.command, -1),"
	                  " COALESCE(p.python, -1), f.t_start, l.t_end FROM processes p"
	                  " LEFT JOIN buckets f ON f.id = p.first_bucket"
	                  " LEFT JOIN buckets l ON l.id = p.last_bucket"
	                  " ORDER BY p.pid;", true, v, n, err);
}
