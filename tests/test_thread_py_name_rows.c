/* test_thread_py_name_rows.c - the names programs give their threads
 * from the record to the rows: REC_THREAD_PY_NAME into the aggregator's
 * thread table (the latest name, kept beside the OS name, across a
 * reset; a record that lies about its length refused and counted), then
 * the threads table (its Name column shows the program's name when known
 * and widens for it, up to a cap) and the JSON snapshot (py_name). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregator.h"
#include "snapshot_builder.h"
#include "transport/record.h"
#include "../ui/json_out.h"
#include "../ui/text.h"
#include "../ui/thread_table.h"

static uint64_t recbuf[(sizeof(struct rec_thread_py_name) + REC_MAX_THREAD_PY_NAME) / 8 + 64];

static size_t mk_py_name(int tid, const char *name, size_t claimed_len)
{
	struct rec_thread_py_name *r = (struct rec_thread_py_name *)recbuf;
	size_t len = strlen(name);

	memset(recbuf, 0, sizeof recbuf);
	r->h.type = REC_THREAD_PY_NAME;
	r->h.size = REC_ALIGN((uint32_t)(sizeof *r + len));
	r->tid = tid;
	r->pid = 1;
	r->name_len = (uint16_t)claimed_len;
	memcpy(r->name, name, len);
	return r->h.size;
}

/* A record whose header claims n bytes. */
static void set_size(size_t n)
{
	struct rec_header h;

	memcpy(&h, recbuf, sizeof h);
	h.size = (uint32_t)n;
	memcpy(recbuf, &h, sizeof h);
}

static size_t mk_os_name(int tid, const char *name)
{
	struct rec_thread *t = (struct rec_thread *)recbuf;

	memset(t, 0, sizeof *t);
	t->h = (struct rec_header){ REC_THREAD, sizeof *t };
	t->tid = tid;
	strncpy(t->name, name, sizeof t->name - 1);
	return sizeof *t;
}

static const struct snap_thread *row(const struct snapshot *s, pid_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	cr_assert_fail("thread %d has no row", (int)tid);
	return NULL;
}

Test(py_name_rows, aggregator_keeps_the_latest_beside_the_os_name)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };

	aggregator_ingest(a, recbuf, mk_os_name(7, "python3"));
	aggregator_ingest(a, recbuf, mk_py_name(7, "before", 6));
	aggregator_ingest(a, recbuf, mk_py_name(7, "after-rename", 12));
	aggregator_ingest(a, recbuf, mk_py_name(8, "alone", 5));
	aggregator_snapshot(a, &s);
	cr_expect_str_eq(row(&s, 7)->py_name, "after-rename");
	cr_expect_str_eq(row(&s, 7)->name, "python3");
	cr_expect_str_eq(row(&s, 8)->py_name, "alone");
	cr_expect_str_eq(row(&s, 8)->name, "");
	cr_expect_eq(aggregator_bad(a), 0);
	snapshot_free(&s);

	/* A reset forgets counts, not names: a thread that samples again
	 * gets its name back (names are not sent again). */
	aggregator_reset(a);
	aggregator_ingest(a, recbuf, mk_os_name(7, "python3"));
	aggregator_snapshot(a, &s);
	cr_expect_str_eq(row(&s, 7)->py_name, "after-rename");
	snapshot_free(&s);
	aggregator_free(a);
}

Test(py_name_rows, lying_records_are_refused_and_counted)
{
	struct aggregator *a = aggregator_new(true);
	struct snapshot s = { 0 };
	size_t n;

	aggregator_ingest(a, recbuf, mk_py_name(5, "good", 4));
	/* Longer than its record, longer than the wire limit, no room for
	 * the fixed part: each is refused and the kept name stays. */
	aggregator_ingest(a, recbuf, mk_py_name(5, "short", 100));
	n = REC_ALIGN(sizeof(struct rec_thread_py_name) + REC_MAX_THREAD_PY_NAME + 1);
	mk_py_name(5, "long", REC_MAX_THREAD_PY_NAME + 1);
	set_size(n);
	aggregator_ingest(a, recbuf, n);
	mk_py_name(5, "x", 1);
	set_size(sizeof(struct rec_header) + 8);
	aggregator_ingest(a, recbuf, sizeof(struct rec_header) + 8);
	cr_expect_eq(aggregator_bad(a), 3);
	aggregator_snapshot(a, &s);
	cr_expect_str_eq(row(&s, 5)->py_name, "good");
	snapshot_free(&s);
	aggregator_free(a);
}

static const struct snap_thread threads[] = {
	{ .tid = 11, .name = "python3", .py_name = "worker-with-a-long-name", .state = THREAD_IDLE },
	{ .tid = 12, .name = "python3", .py_name = "", .state = THREAD_IDLE },
	{ .tid = 13, .name = "python3", .py_name = NULL, .state = THREAD_IDLE },
};

Test(py_name_rows, name_column_shows_and_fits_the_programs_name)
{
	struct snapshot s = sb_snapshot(10, "python3 app.py", "3.12.1", 0);
	struct thread_table tt;
	char line[512];
	int wide = text_width("worker-with-a-long-name", true);

	sb_set_threads(&s, threads, 3);
	thread_table_build(&tt, &s, NULL, THREAD_COL_TID, true);
	cr_assert_eq(tt.n, 3);
	cr_expect_eq(tt.cols[THREAD_COL_NAME].width, wide);
	table_format_row(&tt.table, thread_table_row(&tt, 0), 120, line, sizeof line, NULL);
	cr_expect(strstr(line, "worker-with-a-long-name State") == NULL &&
	          strstr(line, "   11 worker-with-a-long-name idle") != NULL, "row: %s", line);
	/* Without a program's name, the OS name. */
	table_format_row(&tt.table, thread_table_row(&tt, 1), 120, line, sizeof line, NULL);
	cr_expect(strstr(line, "   12 python3 ") != NULL, "row: %s", line);
	thread_table_free(&tt);

	/* Found by either name. */
	thread_table_build(&tt, &s, "LONG-NAME", THREAD_COL_TID, true);
	cr_expect_eq(tt.n, 1);
	thread_table_free(&tt);

	/* A name past the cap is cut with an ellipsis, the column capped. */
	struct snap_thread longer = threads[0];
	longer.py_name = "a-thread-name-far-longer-than-any-column";
	sb_set_threads(&s, &longer, 1);
	thread_table_build(&tt, &s, NULL, THREAD_COL_TID, true);
	cr_expect_eq(tt.cols[THREAD_COL_NAME].width, THREAD_NAME_MAX_COLS);
	table_format_row(&tt.table, thread_table_row(&tt, 0), 120, line, sizeof line, NULL);
	cr_expect(strstr(line, "a-thread-name-far-longe\u2026") != NULL, "row: %s", line);
	thread_table_free(&tt);
	snapshot_free(&s);
}

Test(py_name_rows, json_has_py_name_beside_name)
{
	struct snapshot s = sb_snapshot(10, "python3 app.py", "3.12.1", 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_t *j, *t;

	sb_set_threads(&s, threads, 3);
	cr_assert_eq(json_out_print(f, &s), 0);
	fclose(f);
	j = json_loads(text, 0, NULL);
	cr_assert_not_null(j, "%s", text);
	t = json_array_get(json_object_get(j, "threads"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(t, "py_name")), "worker-with-a-long-name");
	cr_expect_str_eq(json_string_value(json_object_get(t, "name")), "python3");
	t = json_array_get(json_object_get(j, "threads"), 2);
	cr_expect_str_eq(json_string_value(json_object_get(t, "py_name")), "");
	json_decref(j);
	free(text);
	snapshot_free(&s);
}
