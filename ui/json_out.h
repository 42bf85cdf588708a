/* json_out.h - a snapshot as one JSON object on one line (JSON Lines),
 * for scripts.  The schema is documented in json_out.c. */
#ifndef PYTOP_UI_JSON_OUT_H
#define PYTOP_UI_JSON_OUT_H

#include <stdio.h>

#include "profile/snapshot.h"

/* Print one line and flush.  Returns 0, or -1 when out can no longer be
 * written or memory ran out. */
int json_out_print(FILE *out, const struct snapshot *s);

/* The same with the stacks (--stacks: json_stacks.h). */
int json_out_print_stacks(FILE *out, const struct snapshot *s);

#endif
