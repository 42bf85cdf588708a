/* debug_package.h - the Debian package with the debug symbols of a module
 * the target maps, for the header's hint when --native finds functions
 * without names.  The module's owner comes from the target's own dpkg
 * database (/var/lib/dpkg/status, then info/PACKAGE.list), read through
 * the target's root with its rights as dpkg -S would read it (pytop runs
 * no program: its sandbox forbids exec).  Debian ships the symbols of its
 * Python interpreters in python3.X-dbg, and those of other packages in
 * PACKAGE-dbgsym (the debug archive, deb.debian.org/debian-debug). */
#ifndef PYTOP_PROFILE_DEBUG_PACKAGE_H
#define PYTOP_PROFILE_DEBUG_PACKAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The package whose debug symbols name path's functions, in out; false
 * when no installed package owns path (or the database is unreadable). */
bool debug_package_of(pid_t pid, const char *path, char *out, size_t size);

/* The debug package for owner, the binary package that owns a module. */
void debug_package_name(const char *owner, char *out, size_t size);

#endif
