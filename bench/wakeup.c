/* bench/wakeup.c - what the sampler's periodic wake-up costs, by way of
 * waking (issue 14 item 3): an absolute clock_nanosleep (what the sampler
 * does, src/clock.c), a timerfd read, and a POSIX timer whose signal is
 * sent to the waiting thread (SIGEV_THREAD_ID) and taken with sigwaitinfo;
 * each under SCHED_OTHER with the default timer slack (50 us), under
 * SCHED_OTHER with a 1 ns slack (what the sampler sets), and under
 * SCHED_FIFO 1 (what the sampler runs at where allowed).
 *
 * A thread of its own wakes at the rate and does nothing else; per case it
 * reports the achieved rate, the thread's own CPU per wake-up (the part of
 * the wake-up charged to the waker: system call, timer, schedule in and
 * out) and how late the wake-ups were (median and 99th percentile).  The
 * cases are run in rotating order, ROUNDS times, and the medians printed,
 * so that the machine's other load falls on all of them alike.  Not a test:
 * exits 0 unless it cannot run at all.
 *
 * usage: bench/wakeup [SECONDS_PER_CASE [ROUNDS]]  (default 1 s, 3 rounds) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum way { WAY_NANOSLEEP, WAY_TIMERFD, WAY_SIGNAL, NWAYS };
enum policy { POL_OTHER_SLACK50, POL_OTHER_SLACK1, POL_FIFO, NPOLS };

static const char *const way_name[NWAYS] = {
	"clock_nanosleep abs", "timerfd", "timer_create+signal",
};
static const char *const pol_name[NPOLS] = {
	"OTHER slack 50us", "OTHER slack 1ns", "FIFO 1",
};
static const int rates[] = { 1000, 10000 };
#define NRATES ((int)(sizeof rates / sizeof rates[0]))

struct result {
	double hz;          /* wake-ups per second achieved */
	double cpu_us;      /* thread CPU per wake-up */
	double late_med_us, late_p99_us;
	int ok;             /* 0: the case could not run (e.g. FIFO refused) */
};

struct job {
	enum way way;
	enum policy pol;
	int rate;
	double seconds;
	struct result r;
};

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return ns_of(&t);
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL,
	                          .tv_nsec = ns % 1000000000LL };
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int set_policy(enum policy p)
{
	struct sched_param sp = { .sched_priority = p == POL_FIFO ? 1 : 0 };

	prctl(PR_SET_TIMERSLACK, p == POL_OTHER_SLACK1 ? 1UL : 50000UL, 0, 0, 0);
	return pthread_setschedparam(pthread_self(),
	                             p == POL_FIFO ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* The waits: each returns when the next period is due (or later).  The
 * timer ways are armed once, before the loop, like a sampler would. */
struct waiter {
	enum way way;
	int64_t period, next;   /* next: absolute CLOCK_MONOTONIC ns */
	int tfd;
	timer_t timer;
	sigset_t set;
};

static int waiter_arm(struct waiter *w)
{
	struct itimerspec it = { .it_interval = ts_of(w->period),
	                         .it_value = ts_of(w->next) };

	if (w->way == WAY_TIMERFD) {
		w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		return w->tfd < 0 ? -1 :
		       timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &it, NULL);
	}
	if (w->way == WAY_SIGNAL) {
		struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID,
		                       .sigev_signo = SIGRTMIN };

		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		sigemptyset(&w->set);
		sigaddset(&w->set, SIGRTMIN);
		pthread_sigmask(SIG_BLOCK, &w->set, NULL);
		if (timer_create(CLOCK_MONOTONIC, &ev, &w->timer) != 0)
			return -1;
		return timer_settime(w->timer, TIMER_ABSTIME, &it, NULL);
	}
	return 0;
}

static void waiter_wait(struct waiter *w)
{
	uint64_t expirations = 1;
	struct timespec t;
	siginfo_t si;

	switch (w->way) {
	case WAY_NANOSLEEP:
		t = ts_of(w->next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
			;
		break;
	case WAY_TIMERFD:
		while (read(w->tfd, &expirations, sizeof expirations) < 0 && errno == EINTR)
			;
		break;
	default:
		while (sigwaitinfo(&w->set, &si) < 0 && errno == EINTR)
			;
		expirations = 1 + (uint64_t)(si.si_overrun > 0 ? si.si_overrun : 0);
		break;
	}
	/* A periodic timer that fired more than once while the thread waited
	 * woke it once: the next due time moves past every expiration. */
	w->next += w->period * (int64_t)expirations;
}

static void waiter_disarm(struct waiter *w)
{
	if (w->way == WAY_TIMERFD && w->tfd >= 0)
		close(w->tfd);
	if (w->way == WAY_SIGNAL)
		timer_delete(w->timer);
}

static void *run_case(void *arg)
{
	struct job *j = arg;
	struct waiter w = { .way = j->way, .period = 1000000000LL / j->rate, .tfd = -1 };
	size_t n = (size_t)(j->seconds * j->rate), i;
	int64_t *late = calloc(n, sizeof *late), t0, c0;

	if (!late || set_policy(j->pol) != 0) {
		free(late);
		return NULL;
	}
	w.next = now_ns(CLOCK_MONOTONIC) + w.period;
	if (waiter_arm(&w) != 0) {
		free(late);
		return NULL;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < n; i++) {
		waiter_wait(&w);
		/* w.next - period: the latest due time this wake-up answers */
		late[i] = now_ns(CLOCK_MONOTONIC) - (w.next - w.period);
	}
	j->r.cpu_us = (double)(now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 1e3 / (double)n;
	j->r.hz = (double)n * 1e9 / (double)(now_ns(CLOCK_MONOTONIC) - t0);
	waiter_disarm(&w);
	qsort(late, n, sizeof *late, cmp_i64);
	j->r.late_med_us = (double)late[n / 2] / 1e3;
	j->r.late_p99_us = (double)late[n * 99 / 100] / 1e3;
	j->r.ok = 1;
	free(late);
	return NULL;
}

/* Each case on a fresh thread, so that a policy never leaks into the next. */
static struct result one_case(enum way way, enum policy pol, int rate, double seconds)
{
	struct job j = { .way = way, .pol = pol, .rate = rate, .seconds = seconds };
	pthread_t t;

	if (pthread_create(&t, NULL, run_case, &j) != 0)
		return j.r;
	pthread_join(t, NULL);
	return j.r;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_dbl);
	return v[n / 2];
}

#define NCASES (NWAYS * NPOLS * NRATES)
#define MAXROUNDS 15

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	static struct result res[MAXROUNDS][NCASES];

	if (seconds <= 0 || seconds > 60 || rounds < 1 || rounds > MAXROUNDS) {
		fprintf(stderr, "usage: %s [SECONDS_PER_CASE (0-60] [ROUNDS 1-%d]]\n",
		        argv[0], MAXROUNDS);
		return 2;
	}
	/* The signal way's SIGRTMIN must never reach a thread that is not
	 * waiting for it: block it in every thread from the start. */
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);

	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NCASES; k++) {
			int c = (k + r * 7) % NCASES; /* rotate the order */

			res[r][c] = one_case((enum way)(c / (NPOLS * NRATES)),
			                     (enum policy)(c / NRATES % NPOLS),
			                     rates[c % NRATES], seconds);
		}

	printf("wake-up alone, %g s per case, median of %d rounds (thread CPU per wake-up; lateness after the due time)\n",
	       seconds, rounds);
	printf("%-20s %-17s %6s %9s %10s %10s %10s\n", "way", "policy", "rate",
	       "achieved", "cpu us", "late med", "late p99");
	for (int c = 0; c < NCASES; c++) {
		double hz[MAXROUNDS], cpu[MAXROUNDS], lm[MAXROUNDS], lp[MAXROUNDS];
		int n = 0;

		for (int r = 0; r < rounds; r++) {
			if (!res[r][c].ok)
				continue;
			hz[n] = res[r][c].hz;
			cpu[n] = res[r][c].cpu_us;
			lm[n] = res[r][c].late_med_us;
			lp[n] = res[r][c].late_p99_us;
			n++;
		}
		printf("%-20s %-17s %6d ", way_name[c / (NPOLS * NRATES)],
		       pol_name[c / NRATES % NPOLS], rates[c % NRATES]);
		if (n == 0) {
			printf("%9s (not permitted here)\n", "-");
			continue;
		}
		printf("%8.1f%% %10.2f %10.1f %10.1f\n",
		       100.0 * median(hz, n) / rates[c % NRATES], median(cpu, n),
		       median(lm, n), median(lp, n));
	}
	return 0;
}
