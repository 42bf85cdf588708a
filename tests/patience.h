/* patience.h - deadlines for the end-to-end tests' waits that do not count
 * the time the programs waited on spent starved of a CPU.
 *
 * A test waits for something a program does: a screen, a file, a line of
 * output, an exit.  scripts/quickstart.sh runs most tests at nice 19
 * beside the accuracy tests at nice 0, and while an accuracy test's
 * workload keeps both cores busy, a nice-19 program gets about 1 % of one
 * (pytop's own verdict on such a workload in a failed CI run: "starved -
 * waiting for a CPU 99 % of runnable time", 27 s after it started, still
 * importing).  A deadline in wall time then fails a program that did
 * nothing wrong.  So a patient wait's deadline moves on by the time the
 * programs it watches (a process and its descendants) spent runnable but
 * not running: the kernel's run_delay (/proc/TID/schedstat), the figure
 * pytop's own CPU-wait column is made of.  A program that gets the CPU and
 * still does not do the thing fails as before; one that hangs asleep
 * accrues no delay.  A test process is forgiven PATIENCE_MAX_S in all,
 * so a wait never outgrows its test's Criterion timeout by more. */
#ifndef PYTOP_TESTS_PATIENCE_H
#define PYTOP_TESTS_PATIENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PATIENCE_MAX_S 60.0

struct patience_task {
	pid_t tid;
	unsigned long long delay_ns; /* run_delay when last read */
};

struct patience {
	pid_t root;                /* watched with its descendants; 0: none */
	double deadline;           /* CLOCK_MONOTONIC seconds; moves on */
	double forgiven;           /* seconds added to it so far */
	double next_scan;
	struct patience_task *tasks; /* owned; as of the last scan */
	size_t n;
};

/* Start a wait of timeout_s for process root and its descendants (0:
 * none, plain wall time).  Waits under a second are plain wall
 * time: they are pauses, not deadlines, and a scan of /proc costs a few
 * milliseconds. */
void patience_start(struct patience *w, pid_t root, double timeout_s);
/* True once the deadline has passed; rescans at most every 0.1 s. */
bool patience_over(struct patience *w);
/* Seconds left until the deadline as it stands (may grow later). */
double patience_left(struct patience *w);
/* Free it; notes in the test's log how much longer it waited, if any. */
void patience_end(struct patience *w, const char *what);

#endif
