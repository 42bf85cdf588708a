/* collapsed_text.h - reading a collapsed export ("frame;frame;leaf N"
 * lines) back in the tests that check one against pytop's own figures. */
#ifndef PYTOP_TESTS_COLLAPSED_TEXT_H
#define PYTOP_TESTS_COLLAPSED_TEXT_H

/* The sum of the counts; the test fails on a line without one. */
long long collapsed_sum(const char *text);

/* Own samples of a function: the lines whose leaf frame is
 * "name (file:...)". */
long long collapsed_own(const char *text, const char *name, const char *file);

#endif
