/* prompt.h - a one-line text input on the bottom row (the filter).  It is
 * fed keys by the loop like everything else, so sampling goes on while
 * the user types. */
#ifndef PYTOP_UI_PROMPT_H
#define PYTOP_UI_PROMPT_H

#include <stdbool.h>
#include <stddef.h>

#include "crt.h"

#define PROMPT_MAX 128 /* bytes of input */

struct prompt {
	bool active;
	const char *label;     /* borrowed, static text */
	char text[PROMPT_MAX]; /* UTF-8, NUL-terminated */
};

enum prompt_result {
	PROMPT_EDITING,   /* still typing */
	PROMPT_ACCEPTED,  /* Enter: text holds the answer */
	PROMPT_CANCELLED, /* Esc */
};

/* Start editing, with initial text (may be NULL). */
void prompt_open(struct prompt *p, const char *label, const char *initial);

/* Feed one key (crt_read_key).  The prompt closes on Enter or Esc. */
enum prompt_result prompt_key(struct prompt *p, int key);

/* Draw "label: text_" with a hint on row y. */
void prompt_draw(const struct prompt *p, const struct crt *crt, int y);

#endif
