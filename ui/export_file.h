/* export_file.h - creating the file an export goes to, safely.
 *
 * pytop often runs as root, and the output path is often in a shared
 * directory: a symlink planted at it must never be followed (to truncate
 * or create a file elsewhere), an existing file never overwritten unless
 * asked (--force), and a FIFO must not hang pytop.  So the file is
 * created O_CREAT|O_EXCL|O_NOFOLLOW (with --force: O_NOFOLLOW, a regular
 * file only, truncated once opened).
 *
 * Not src/target/safe_create.h: that one makes a file nobody names (the
 * launched program's output) in a private directory; this one creates
 * the very path the user named, and lives with the views that write it.
 *
 * Errors are one line, "problem; fix", into err[errlen].
 */
#ifndef PYTOP_UI_EXPORT_FILE_H
#define PYTOP_UI_EXPORT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

/* Create path for writing (see above); NULL and err on failure. */
FILE *export_file_create(const char *path, bool force, char *err, size_t errlen);

/* path with a UTC time stamp (and, seq > 1, "-seq") inserted before the
 * extension (from the first dot of the file name):
 * "out/prof.pb.gz" -> "out/prof-20261126T193012Z.pb.gz".  false when it
 * does not fit in buf[len]. */
bool export_file_stamped(const char *path, time_t t, int seq, char *buf,
                         size_t len);

/* Create a time-stamped sibling of path that does not exist yet (a later
 * sequence number when one of that second exists: never an overwrite);
 * its name into made[madelen].  NULL and err on failure. */
FILE *export_file_create_stamped(const char *path, time_t t, char *made,
                                 size_t madelen, char *err, size_t errlen);

/* Flush and close f, written to path.  0, or -1 and err (the incomplete
 * file is removed: no half profile is left to be mistaken for one). */
int export_file_close(FILE *f, const char *path, bool write_failed,
                      char *err, size_t errlen);

#endif
