/* sql_exec.c - see sql_exec.h. */
#include <criterion/criterion.h>
#include <sqlite3.h>

#include "sql_exec.h"

void sql_exec(const char *path, const char *stmt)
{
	sqlite3 *db = NULL;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, stmt, NULL, NULL, NULL), SQLITE_OK, "%s: %s", stmt,
	             sqlite3_errmsg(db));
	sqlite3_close(db);
}
