/* safe_create.h - create a new file that nobody else can have prepared.
 *
 * pytop often runs as root, and any name it would create in a shared
 * directory (/tmp) is a name another local user can plant first: a symlink
 * to a file to truncate, a dangling one to make root create a file, a file
 * of their own to receive the output, a FIFO to hang pytop in open().  So
 * a file is created only inside a fresh private directory (mkdtemp, mode
 * 0700, a name nobody can predict), where nothing exists yet
 * (O_CREAT|O_EXCL), never through a symlink (O_NOFOLLOW), mode 0600.  A
 * path that does not fit is an error, never cut short.  Recordings and
 * exports are meant to be made here too.
 */
#ifndef PYTOP_SAFE_CREATE_H
#define PYTOP_SAFE_CREATE_H

#include <stddef.h>

#include "errors.h"

/* Create <dir>/<prefix>XXXXXX/<name>: a new directory of our own (0700)
 * under dir, then the file in it (0600), opened for writing (O_CLOEXEC).
 * The full name goes into path[path_len].  Returns the descriptor, or -1
 * and *err (whose fix part is `fix`, e.g. "set TMPDIR to a writable
 * directory"); path is then "". */
int safe_create_private(const char *dir, const char *prefix, const char *name,
                        char *path, size_t path_len, const char *fix,
                        struct pytop_error *err);

#endif
