/* batch_text.h - plain-text output of a snapshot, like `top -b`: the
 * header lines and the function table with the TUI's columns and
 * formatting, the threads table likewise (under a line naming what its
 * figures are), then a blank line: a block has no blank line inside. */
#ifndef PYTOP_UI_BATCH_TEXT_H
#define PYTOP_UI_BATCH_TEXT_H

#include <stdio.h>

#include "profile/snapshot.h"

#define BATCH_TEXT_ROWS 30    /* function rows per refresh */
#define BATCH_TEXT_THREADS 20 /* thread rows per refresh, busiest first */

/* Print one refresh and flush.  Returns 0, or -1 when out can no longer
 * be written (closed pipe). */
int batch_text_print(FILE *out, const struct snapshot *s);

/* The same with the call tree after the function table (--tree:
 * batch_tree.h). */
int batch_text_print_tree(FILE *out, const struct snapshot *s);

#endif
