/* target_files.h - open a file on the target's behalf: its sources, its
 * executable, the objects it maps and their debug files.
 *
 * The target may be another, unprivileged user who controls the paths it
 * reports (co_filename, a replaced or deleted executable, symbolic links,
 * FIFOs).  So every open here:
 *   - resolves the path inside the target's root (/proc/PID/root, with
 *     openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS where the kernel has
 *     it), never falling back to pytop's own mount namespace;
 *   - runs with the target's file-system credentials (fsuid, fsgid and
 *     supplementary groups, switched for the calling thread only) when
 *     pytop may switch them, else checks the opened file's mode against
 *     them, so pytop shows nothing the target could not read itself;
 *   - never follows a symbolic link in the last component (O_NOFOLLOW),
 *     never blocks (O_NONBLOCK), and returns only regular files.
 * Mapped objects are opened through /proc/PID/exe or
 * /proc/PID/map_files/START-END, which name the mapped inode itself, not a
 * path the target could swap; by path only where those are refused. */
#ifndef PYTOP_TARGET_FILES_H
#define PYTOP_TARGET_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TARGET_CREDS_MAX_GROUPS 64

/* Whose rights a file is opened with. */
struct target_creds {
	uid_t uid;   /* the file-system uid (fourth field of Uid:) */
	gid_t gid;   /* the file-system gid */
	gid_t groups[TARGET_CREDS_MAX_GROUPS];
	int ngroups;
};

/* The target's file-system credentials from /proc/PID/status.  0, or -1
 * with errno set. */
int target_creds_read(pid_t pid, struct target_creds *out);

/* Open path (absolute, as the target sees it) below the directory rootfd
 * with the rights of cr (NULL: pytop's own), read-only, under the rules
 * above.  Returns the descriptor (the caller closes it), or -1 with errno:
 * ELOOP for a symbolic link, EINVAL for anything but a regular file,
 * EACCES where cr may not read it, EXDEV where the path leaves the root. */
int target_file_open_at(int rootfd, const struct target_creds *cr,
                        const char *path);

/* The same inside process pid's root with pid's credentials. */
int target_file_open(pid_t pid, const char *path);

/* The executable process pid runs (/proc/PID/exe), or -1 with errno. */
int target_exe_open(pid_t pid);

/* The object mapped at [start, end) in pid, whose path in the target's
 * maps is path: through /proc/PID/map_files, else (no CAP_SYS_ADMIN) by
 * path with target_file_open.  -1 with errno on failure. */
int target_object_open(pid_t pid, uintptr_t start, uintptr_t end,
                       const char *path);

#endif
