/* Which /proc files a read of a thread's kernel facts costs
 * (src/target/proc_threads.c), on a forked child that blocks on a pipe
 * until told, then spins:
 *
 * - schedstat, for a runnable thread, only when it can matter
 *   (sched_due): at its first runnable read, whenever its CPU time in
 *   stat moved (the reads at which the split settles its queued samples
 *   with these figures), and at least every 10 ms; at every read when
 *   asked (--native by perf events);
 * - a thread asleep at its last stat read is not read again while its
 *   wchan names a wait (read_light): a woken thread is seen runnable at
 *   once, a sleeping one gets a real stat read every 100 ms (the threads
 *   panel's times), and nothing of this happens when the shortcut is off
 *   (--idle).  A light read shows as faults_known false: a stat read
 *   after the first always knows them. */
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
#define EVERY_NS 10000000ull       /* proc_threads.c's SCHED_EVERY_NS */
#define STAT_EVERY_NS 100000000ull /* proc_threads.c's */

static pid_t child;
static int go[2];
static struct proc_threads *pt;

/* The child, blocked in a read of the pipe until release_child. */
static void start(void)
{
	cr_assert(pipe(go) == 0);
	child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		char c;
		volatile unsigned long x = 0;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		for (;;)
			x++;
	}
	close(go[0]);
	pt = proc_threads_new(child);
	cr_assert(pt != NULL);
}

static void release_child(void)
{
	cr_assert(write(go[1], "x", 1) == 1);
}

static void start_spinning(void)
{
	start();
	release_child();
}

static void stop(void)
{
	proc_threads_free(pt);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(go[1]);
}

TestSuite(proc_threads_sched, .init = start_spinning, .fini = stop);
TestSuite(proc_threads_light, .init = start, .fini = stop);

/* ---- schedstat when due ------------------------------------------------------ */

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

/* ---- sleepers by wchan ------------------------------------------------------ */

static void pause_ms(long ms)
{
	nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 }, NULL);
}

/* Read until the child is asleep in its read (a stat read says so);
 * returns when that read started. */
static uint64_t until_asleep(void)
{
	struct proc_thread_stat st;

	for (int i = 0; i < 500; i++) {
		uint64_t at = clock_now_ns();

		proc_threads_read_stat(pt, child, &st);
		if (st.state == 'S')
			return at;
		pause_ms(2);
	}
	cr_assert_fail("the child never slept");
	return 0;
}

/* The checks below compare times taken around each read with the stat
 * read's, so that a test descheduled on a busy machine cannot fail them. */
Test(proc_threads_light, a_sleeper_is_read_light_until_it_wakes)
{
	struct proc_thread_stat st;
	int light = 0, reads = 0;

	proc_threads_light_sleepers(pt, true);
	uint64_t stat_at = until_asleep();
	for (int i = 0; i < 40; i++) {
		proc_threads_read(pt, child, &st);
		cr_assert_eq(st.state, 'S', "a sleeping child read as '%c'", st.state);
		if (clock_now_ns() - stat_at < STAT_EVERY_NS) {
			light += !st.faults_known;
			reads++;
		}
		pause_ms(1);
	}
	/* One may not be light: a thread caught after it set its sleeping
	 * state but before it left the run queue has wchan "0" (seen in 2
	 * of 20 runs, at the first read). */
	cr_expect_geq(light, reads - 1, "%d of %d reads within 100 ms of the stat read were light",
	              light, reads);
	cr_expect_gt(reads, 0);
	/* Woken, it must be seen runnable at once (wchan says "0"), not at
	 * the next stat read, due up to 100 ms later.  A few reads allow for
	 * a wake-up the kernel finishes on the child's CPU. */
	proc_threads_read_stat(pt, child, &st);
	release_child();
	uint64_t woke = clock_now_ns();
	bool seen = false;
	for (int i = 0; !seen && i < 5; i++) {
		proc_threads_read(pt, child, &st);
		seen = st.state == 'R';
		pause_ms(1);
	}
	cr_assert(seen || clock_now_ns() - woke >= STAT_EVERY_NS,
	          "the woken child did not read as runnable in 5 reads");
	cr_expect(st.faults_known, "the runnable child's read was not a stat read");
	/* A runnable thread is never read light. */
	for (int i = 0; i < 50; i++) {
		proc_threads_read(pt, child, &st);
		cr_expect(st.faults_known && st.state == 'R', "a spinning child read light ('%c')",
		          st.state);
	}
}

Test(proc_threads_light, a_sleeper_gets_a_stat_read_every_100_ms)
{
	struct proc_thread_stat st;
	int due = 0;

	proc_threads_light_sleepers(pt, true);
	until_asleep();
	/* Times after each stat read: "100 ms after" this is surely due. */
	uint64_t stat_at = clock_now_ns(), t0 = stat_at;
	while (clock_now_ns() - t0 < 350000000ull) {
		uint64_t at = clock_now_ns();

		proc_threads_read(pt, child, &st);
		if (at - stat_at >= STAT_EVERY_NS) {
			due++;
			cr_expect(st.faults_known, "no stat read %.0f ms after the last",
			          (double)(at - stat_at) / 1e6);
		}
		if (st.faults_known)
			stat_at = clock_now_ns();
		pause_ms(5);
	}
	cr_expect_gt(due, 0);
}

Test(proc_threads_light, off_every_read_is_a_stat_read)
{
	struct proc_thread_stat st;

	proc_threads_light_sleepers(pt, false);
	until_asleep();
	for (int i = 0; i < 20; i++) {
		proc_threads_read(pt, child, &st);
		cr_expect(st.faults_known, "read %d was light with the shortcut off", i);
		pause_ms(1);
	}
}
