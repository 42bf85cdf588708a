/* py_name_text.h - the code units of a target's str made into the text
 * pytop keeps, sends and shows: valid UTF-8 with no control character,
 * whatever the target put in the str, and of bounded length.
 *
 * Names are escaped here, on the reader's side, once, when a code object
 * is first read, and not at display: only here are the code points known.
 * A file name that was not UTF-8 on disk reaches Python as lone surrogates
 * U+DC80..U+DCFF (surrogateescape), which no valid UTF-8 can carry, so
 * after this point the original byte could not be told apart any more.
 * Escaping once also means everything downstream (the ring's records, the
 * code and string tables, the TUI, batch text, JSON) holds valid text and
 * no view can forget to escape.
 *
 *   U+0000..U+001F, U+007F..U+009F   \xNN (as Python's repr writes them)
 *   U+DC80..U+DCFF                   \xNN: the byte the name had on disk
 *   other lone surrogates            \udNNN
 *   bidirectional overrides and      \uNNNN (they reorder what a terminal
 *   isolates, U+200E/F, U+2028/9     shows around them)
 *   anything past PY_NAME_KEEP_CHARS "…[+N chars]", N the characters left
 *                                    out
 *
 * A backslash is kept as it is: a name that holds "\x1b" as four
 * characters reads the same as one holding ESC (rare, and harmless). */
#ifndef PYTOP_PY_NAME_TEXT_H
#define PYTOP_PY_NAME_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Characters of a name kept before the marker.  A record carries at most
 * 65535 bytes of each name: PY_NAME_TEXT_MAX_BYTES stays well below. */
#define PY_NAME_KEEP_CHARS 1000
/* The longest text py_name_text returns, NUL excluded: six bytes per kept
 * character (\uNNNN) and the marker. */
#define PY_NAME_TEXT_MAX_BYTES (6 * PY_NAME_KEEP_CHARS + 40)

/* The first n code units (each `kind` bytes: 1, 2 or 4, little-endian as
 * the target stores them) of a str of `length` characters, as malloc'd
 * text (the caller frees it).  n <= length and n <= PY_NAME_KEEP_CHARS;
 * when n < length the marker counts the rest.  NULL when a unit is not a
 * code point at all (past U+10FFFF: the bytes are not a str), when kind or
 * n is out of range, or when out of memory. */
char *py_name_text(const uint8_t *units, size_t n, unsigned kind, uint64_t length);

#endif
