/* sql_exec.h - damaging a recording on purpose: the bad-input tests of
 * pytop export and pytop replay run one SQL statement on a copy. */
#ifndef PYTOP_TESTS_SQL_EXEC_H
#define PYTOP_TESTS_SQL_EXEC_H

/* Run stmt on the SQLite file at path; the test fails if it cannot. */
void sql_exec(const char *path, const char *stmt);

#endif
