/* native_target.c - a C program with known hot functions, for
 * tests/test_native.c: it splits its time 70/30 between hot_a() and
 * hot_b() in rounds of 10.4 ms (not a multiple of any timer tick: a
 * sampler whose stops land on ticks would otherwise see the same few
 * phases of every round) and measures how long each
 * really ran: its CPU time ("wall", for the format's sake, is the two
 * together).  CPU time, not wall time: a sample can only be taken of the
 * thread where it last ran, so on a busy machine a wait for a CPU in the
 * middle of hot_a (whose budget is wall time) is not more of hot_a.
 * Built by the test suite with -g, so pytop --native must name both with
 * their source file and lines.
 *
 * usage: native_target SECONDS TRUTH_FILE
 * Prints "ready PID" once the measured part starts; at the end writes
 * "NAME SECONDS LOOP_LINE" for hot_a and hot_b, then "wall SECONDS". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* The budgets in wall time read through the vDSO: no system call in the
 * hot loops.  A ptrace interrupt may take effect only at the thread's
 * next kernel entry (the next timer tick on some VMs), so system calls in
 * the loops would be where most samples land (see the man page).  The CPU
 * clock, a system call, is read only between the calls, in main. */

static double cpu(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

#if defined(__clang__)
#define NOCLONE
#else
#define NOCLONE __attribute__((noclone)) /* keep the names exact at -O2 */
#endif

static volatile double sink;
static int line_a, line_b;

__attribute__((noinline)) NOCLONE void hot_a(double budget);
__attribute__((noinline)) NOCLONE void hot_a(double budget)
{
	double x = 1.0, end = now() + budget;

	line_a = __LINE__ + 3;
	while (now() < end)
		for (int i = 0; i < 2000; i++)
			x = x * 1.000001 + 0.25;
	sink = x;
}

__attribute__((noinline)) NOCLONE void hot_b(double budget);
__attribute__((noinline)) NOCLONE void hot_b(double budget)
{
	double x = 2.0, end = now() + budget;

	line_b = __LINE__ + 3;
	while (now() < end)
		for (int i = 0; i < 2000; i++)
			x = x * 0.999999 + 0.5;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0, start, end, spent_a = 0, spent_b = 0;
	FILE *f;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	start = now();
	end = start + seconds;
	while (now() < end) {
		double t = cpu();

		hot_a(0.00728);
		spent_a += cpu() - t;
		t = cpu();
		hot_b(0.00312);
		spent_b += cpu() - t;
	}
	if (argc > 2 && (f = fopen(argv[2], "w")) != NULL) {
		fprintf(f, "hot_a %f %d\nhot_b %f %d\nwall %f\n", spent_a, line_a, spent_b, line_b,
		        spent_a + spent_b);
		fclose(f);
	}
	return 0;
}
