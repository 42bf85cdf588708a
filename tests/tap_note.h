/* tap_note.h - a "# ..." diagnostic line for the test log, from inside a
 * Criterion test (figures such as offsets checked or ns per sample). */
#ifndef PYTOP_TAP_NOTE_H
#define PYTOP_TAP_NOTE_H

void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
