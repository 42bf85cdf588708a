/* text.h - terminal-safe text: the display width of UTF-8 strings, and
 * fitting them into a number of columns with an ellipsis.  Every string
 * that reaches the screen or the batch output goes through text_fit, so
 * control bytes and invalid UTF-8 can never reach the terminal. */
#ifndef PYTOP_UI_TEXT_H
#define PYTOP_UI_TEXT_H

#include <stdbool.h>
#include <stddef.h>

enum text_cut {
	TEXT_CUT_RIGHT, /* keep the start: "long_na…" */
	TEXT_CUT_LEFT,  /* keep the end:   "…/pkg/mod.py" */
};

/* utf8 = the output can show UTF-8.  When false, every non-ASCII
 * character is shown as '?'.  Control characters and invalid bytes are
 * always shown as '?'. */

/* Columns the string takes once sanitised. */
int text_width(const char *s, bool utf8);

/* Write s, sanitised, into buf (always NUL-terminated) using at most
 * max_cols columns (max_cols < 0: no limit).  When s does not fit it is
 * cut on the given side and an ellipsis marks the cut.  Returns the
 * columns written. */
int text_fit(char *buf, size_t size, const char *s, int max_cols,
             enum text_cut cut, bool utf8);

/* text_fit, cutting on the right, for a function name the reader may have
 * shortened to its start and "…[+N chars]" (over 1000 characters,
 * cpython/py_name_text.h): where the name must be cut, the count stays in
 * view after the ellipsis ("Lxxxx…[+9000 chars]"), since it is what tells
 * a shortened name from one merely cut to the column. */
int text_fit_name(char *buf, size_t size, const char *s, int max_cols, bool utf8);

/* The ellipsis text_fit uses, and its width (1). */
const char *text_ellipsis(bool utf8);

/* Format n with thousands separators ("97,004"). */
void text_thousands(char *buf, size_t size, unsigned long long n);

/* v in units[0], or divided by step into the first unit that keeps it
 * below step ("1.5K" for 1536 with step 1024); one decimal when the scaled
 * value is below decimals_below, none above. */
void text_scaled(char *buf, size_t size, double v, double step,
                 const char *const *units, size_t nunits, double decimals_below);

/* A byte count in binary units, at most 5 columns: "830B", "4.0K",
 * "512M", "1.2G" (one decimal below 10 units). */
void text_bytes(char *buf, size_t size, unsigned long long n);

/* A non-negative number in at most 4 columns: "0", "0.4", "12", "120",
 * "1.2k", "12k", "1.2M" (decimal units; NaN and negatives print "0"). */
void text_compact(char *buf, size_t size, double v);

/* Replace s's invalid UTF-8 bytes and control characters by '?' so the
 * result is valid UTF-8 (for JSON).  Returns a malloc'd copy (caller owns)
 * or NULL on allocation failure. */
char *text_sanitized_copy(const char *s);

#endif
