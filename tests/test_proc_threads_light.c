/* A thread asleep at its last stat read is not read again while its wchan
 * names a wait (src/target/proc_threads.c, read_light): the tick learns
 * "still asleep" for half the kernel's work.  What must hold: a thread
 * that woke is seen runnable at once, a sleeping one gets a real stat
 * read every 100 ms (the threads panel's times), and nothing of this
 * happens when the shortcut is off (--idle).  A light read shows as
 * faults_known false: a stat read after the first always knows them.
 * The thread is a forked child blocked on a pipe, then spinning. */
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

static pid_t child;
static int go[2];
static struct proc_threads *pt;

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

static void stop(void)
{
	proc_threads_free(pt);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(go[1]);
}

TestSuite(proc_threads_light, .init = start, .fini = stop);

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

#define STAT_EVERY_NS 100000000ull /* proc_threads.c's */

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
	cr_assert(write(go[1], "x", 1) == 1);
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
