/* tap_note.h - a "# ..." diagnostic line for the test log (figures such
 * as offsets checked, ns per sample, accuracy), from a Criterion test
 * worker or from an end-to-end test's own process: the one note writer
 * of the tests (harness.h's h_note is this). */
#ifndef PYTOP_TAP_NOTE_H
#define PYTOP_TAP_NOTE_H

/* A newline is added unless fmt's text ends with one.  It goes to the
 * file h_keep_notes named (env PYTOP_NOTES), else to stderr, else (a
 * Criterion worker's stderr is /dev/null under TAP) to the runner's
 * stderr. */
void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
