/* escape.h - text from the target made safe for a terminal that is not
 * under curses (stderr): control characters (C0, DEL, C1) become \xNN,
 * and so does every byte that is not part of valid UTF-8, so no escape
 * sequence in a file or program name reaches the user's terminal. */
#ifndef PYTOP_ESCAPE_H
#define PYTOP_ESCAPE_H

#include <stddef.h>

/* Write s escaped into buf (always NUL-terminated when size > 0); an
 * escape or a character that does not fit whole is left out, with all
 * that follows.  Returns the bytes written. */
size_t escape_text(char *buf, size_t size, const char *s);

#endif
