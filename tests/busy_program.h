/* busy_program.h - the Python program the recording tests (test_record,
 * test_export_recording) profile: busy for a while in a few functions
 * (top -> mid -> leaf, and other), then it exits. */
#ifndef PYTOP_TESTS_BUSY_PROGRAM_H
#define PYTOP_TESTS_BUSY_PROGRAM_H

#include <stdbool.h>

/* Write it as dir/busy.py, busy for secs seconds, printing "ready" on
 * its standard output first when say_ready; the path (owned). */
char *busy_program_write(const char *dir, double secs, bool say_ready);

#endif
