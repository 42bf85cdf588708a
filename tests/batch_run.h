/* batch_run.h - what the live session tests that run pytop -b on a
 * workload script (test_export_live, test_push) share: the command line,
 * and the last JSON block of its output. */
#ifndef PYTOP_TESTS_BATCH_RUN_H
#define PYTOP_TESTS_BATCH_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Into argv[max]: pytop -b (--json when json) -d 0.25, opts then extra
 * (each NULL-terminated; NULL: none), then -- and the Debian Python
 * running script with the argument seconds; NULL-terminated.  Fails the
 * test when that does not fit. */
void batch_argv(const char *argv[], size_t max, bool json,
                const char *const opts[], const char *const extra[],
                const char *script, const char *seconds);

/* The last of the JSON lines of out (owned), NULL when there is none;
 * fails the test when a line is not JSON. */
json_t *batch_last_json(const char *out);

#endif
