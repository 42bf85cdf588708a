/* A runnable thread's schedstat is read when it can matter, not at every
 * tick (src/target/proc_threads.c, sched_due): at its first runnable
 * read, whenever its CPU time in stat moved (the reads at which the split
 * settles its queued samples with these figures), and at least every
 * 10 ms; at every read when asked (--native by perf events).  The target
 * is a forked child spinning on a CPU, read every 0.2 ms for 0.3 s. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "target/proc_threads.h"

#define READS 1500
#define EVERY_NS 10000000ull /* proc_threads.c's SCHED_EVERY_NS */

static pid_t child;
static struct proc_threads *pt;

static void start(void)
{
	child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		volatile unsigned long x = 0;

		for (;;)
			x++;
	}
	pt = proc_threads_new(child);
	cr_assert(pt != NULL);
}

static void stop(void)
{
	proc_threads_free(pt);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

TestSuite(proc_threads_sched, .init = start, .fini = stop);

struct tally {
	int runnable, known, cpu_moved, cpu_moved_known, overdue, overdue_known;
};

static struct tally read_many(void)
{
	struct tally n = { 0 };
	struct proc_thread_stat st;
	uint64_t last_cpu = 0, known_at = 0, last_run = 0;
	bool first = true;

	for (int i = 0; i < READS; i++) {
		uint64_t before = clock_now_ns();

		proc_threads_read(pt, child, &st);
		cr_assert_neq(st.state, 0, "the child's stat was unreadable");
		if (st.state != 'R')
			continue;
		n.runnable++;
		if (first)
			cr_expect(st.sched_known, "the first runnable read reads schedstat");
		if (!first && st.utime_ns + st.stime_ns != last_cpu) {
			n.cpu_moved++;
			n.cpu_moved_known += st.sched_known;
		}
		if (!first && before - known_at >= EVERY_NS) {
			n.overdue++;
			n.overdue_known += st.sched_known;
		}
		if (st.sched_known) {
			n.known++;
			cr_expect_geq(st.run_ns, last_run, "run time went back");
			last_run = st.run_ns;
			known_at = clock_now_ns();
		}
		last_cpu = st.utime_ns + st.stime_ns;
		first = false;
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
	return n;
}

Test(proc_threads_sched, read_when_cpu_time_moves_or_overdue)
{
	struct tally n = read_many();

	cr_assert_gt(n.runnable, READS / 2, "the child was runnable at %d reads of %d", n.runnable,
	             READS);
	cr_expect_gt(n.cpu_moved, 0, "the child's CPU time never moved");
	cr_expect_eq(n.cpu_moved_known, n.cpu_moved,
	             "schedstat read at %d of the %d reads where CPU time moved",
	             n.cpu_moved_known, n.cpu_moved);
	cr_expect_eq(n.overdue_known, n.overdue,
	             "schedstat read at %d of the %d reads 10 ms after the last",
	             n.overdue_known, n.overdue);
	/* Every 0.2 ms for a thread whose stat CPU time moves every 10 ms:
	 * a read in 50 at most would be due, a few more when late. */
	cr_expect_lt(n.known * 4, n.runnable, "schedstat read at %d of %d runnable reads", n.known,
	             n.runnable);
}

Test(proc_threads_sched, every_read_when_asked)
{
	struct tally n;

	proc_threads_sched_every_read(pt, true);
	n = read_many();
	cr_assert_gt(n.runnable, READS / 2);
	cr_expect_eq(n.known, n.runnable, "schedstat read at %d of %d runnable reads", n.known,
	             n.runnable);
}
