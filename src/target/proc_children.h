/* proc_children.h - find a process's descendants (children, grandchildren,
 * ...) and their kernel facts in one pass over /proc.
 *
 * /proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN, which common
 * kernels (this one included) leave out, so the family is rebuilt from
 * every process's parent PID.  A scan costs about 5 us per process on the
 * machine, so it belongs on a slow clock (a few times a second), off the
 * sampler's.
 */
#ifndef PYTOP_PROC_CHILDREN_H
#define PYTOP_PROC_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One live member of the family. */
struct proc_child {
	pid_t pid, ppid;
	int depth;          /* 0 = the root, 1 = its children, ... */
	char state;         /* /proc state letter */
	uint64_t began;     /* start time (clock ticks after boot): with the
	                       PID, names the process across PID reuse */
	uint64_t exec_id;   /* start of its stack: a new program (exec) gets a
	                       new one */
	uint64_t utime_ns, stime_ns; /* CPU time so far, all threads */
	uint64_t rss_bytes;
};

struct proc_children;

struct proc_children *proc_children_new(void);
void proc_children_free(struct proc_children *pc);

/* Scan /proc for root and its descendants, parents before their children
 * (depth-first, children by PID), zombies left out.  *out is owned by pc
 * and valid until the next scan.  Returns the number of members (0: the
 * root itself is gone), -1 on failure (out of memory, /proc unreadable). */
int proc_children_scan(struct proc_children *pc, pid_t root,
                       const struct proc_child **out);

/* Parse one NUL-terminated /proc/PID/stat line (hostile: comm is the
 * process's own) into *out, with pc's clock tick and page size.  false
 * when the line has no state after the command name. */
bool proc_children_parse_stat(const struct proc_children *pc, pid_t pid,
                              const char *line, struct proc_child *out);

/* The n bytes of a /proc/PID/cmdline (buf[n] is NUL): arguments joined by
 * spaces, trailing NULs and spaces dropped, in place. */
void proc_children_join_cmdline(char *buf, size_t n);

/* The command line of pid, arguments joined by spaces, NUL-terminated;
 * "" when unreadable or empty (a zombie or a kernel thread). */
void proc_children_cmdline(struct proc_children *pc, pid_t pid, char *buf, size_t len);

#endif
