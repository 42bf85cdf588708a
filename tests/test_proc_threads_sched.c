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
	int runnable, known;
	int due, due_known;         /* CPU time moved, or 10 ms since the last */
	int not_due, not_due_known; /* neither, by a margin */
};

/* Each read is judged by times taken around it against those around the
 * last read that read schedstat, so that a test descheduled on a busy
 * machine cannot fail it. */
static struct tally read_many(void)
{
	struct tally n = { 0 };
	struct proc_thread_stat st;
	uint64_t known_start = 0, known_end = 0, known_cpu = 0, last_run = 0;
	uint64_t t0 = clock_now_ns();

	for (int i = 0; i < READS || (n.not_due < 20 && clock_now_ns() - t0 < 2000000000ull);
	     i++) {
		uint64_t start = clock_now_ns(), end;

		proc_threads_read(pt, child, &st);
		end = clock_now_ns();
		cr_assert_neq(st.state, 0, "the child's stat was unreadable");
		if (st.state != 'R')
			continue;
		n.runnable++;
		uint64_t cpu = st.utime_ns + st.stime_ns;
		if (known_end == 0) {
			cr_expect(st.sched_known, "the first runnable read reads schedstat");
		} else if (cpu != known_cpu || start - known_end >= EVERY_NS) {
			n.due++;
			n.due_known += st.sched_known;
		} else if (end - known_start < EVERY_NS) {
			n.not_due++;
			n.not_due_known += st.sched_known;
		}
		if (st.sched_known) {
			n.known++;
			cr_expect_geq(st.run_ns, last_run, "run time went back");
			last_run = st.run_ns;
			known_start = start;
			known_end = end;
			known_cpu = cpu;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	}
	return n;
}

Test(proc_threads_sched, read_when_cpu_time_moves_or_overdue)
{
	struct tally n = read_many();

	cr_expect_eq(n.due_known, n.due,
	             "schedstat read at %d of the %d reads where CPU time moved or 10 ms passed",
	             n.due_known, n.due);
	cr_expect_gt(n.not_due, 0, "no read came within 10 ms of the last with CPU time unmoved");
	cr_expect_eq(n.not_due_known, 0, "schedstat read at %d of %d reads where it was not due",
	             n.not_due_known, n.not_due);
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
