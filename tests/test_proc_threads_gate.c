/* proc_threads_read's schedstat gate (src/target/proc_threads.h): a
 * thread that stays runnable costs one schedstat read, not a stat read
 * each time, and the gate never hides a change of state: a thread that
 * went to sleep is reported asleep at the first read after it did, and
 * one that woke is reported runnable. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target/proc_threads.h"

struct child {
	pid_t pid;
	int ctl; /* write end: 'g' spin, 's' stop spinning, 'q' quit */
};

/* Blocks on its pipe (state S); after a 'g' spins (R) until the next
 * byte comes. */
static void child_main(int fd)
{
	char c;

	for (;;) {
		if (read(fd, &c, 1) != 1 || c == 'q')
			_exit(0);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		while (poll(&p, 1, 0) == 0)
			;
		if (read(fd, &c, 1) != 1)
			_exit(0);
	}
}

static struct child start_child(void)
{
	int fds[2];
	struct child c;

	cr_assert_eq(pipe(fds), 0);
	c.pid = fork();
	cr_assert_geq(c.pid, 0);
	if (c.pid == 0) {
		close(fds[1]);
		child_main(fds[0]);
	}
	close(fds[0]);
	c.ctl = fds[1];
	return c;
}

static void stop_child(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	close(c->ctl);
}

static void say(struct child *c, char what)
{
	cr_assert_eq(write(c->ctl, &what, 1), 1);
}

/* The state letter as /proc says it right now, read afresh. */
static char true_state(pid_t pid)
{
	char path[64], buf[512], *paren;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	cr_assert_not_null(paren);
	return paren[2];
}

static void wait_true_state(pid_t pid, char want)
{
	char got = 0;

	for (int i = 0; i < 5000 && (got = true_state(pid)) != want; i++)
		usleep(1000);
	cr_assert_eq(got, want, "the child never got to state %c (%c)", want, got ? got : '0');
}

static bool have_schedstat(void)
{
	unsigned long long run = 0, delay = 0, count = 0;
	FILE *f = fopen("/proc/self/schedstat", "r");
	bool ok = f != NULL && fscanf(f, "%llu %llu %llu", &run, &delay, &count) == 3 &&
	          (run != 0 || count != 0);

	if (f != NULL)
		fclose(f);
	return ok;
}

Test(proc_threads_gate, a_running_thread_costs_no_stat_read_while_it_runs)
{
	struct child c;
	struct proc_threads *pt;
	struct proc_thread_stat st;
	const int reads = 1000;

	if (!have_schedstat())
		cr_skip_test("this kernel keeps no schedstat (CONFIG_SCHED_INFO)");
	c = start_child();
	pt = proc_threads_new(c.pid);
	cr_assert_not_null(pt);
	wait_true_state(c.pid, 'S'); /* it ran: a new process may not have */
	say(&c, 'g');
	wait_true_state(c.pid, 'R');
	proc_threads_read(pt, c.pid, &st);
	uint64_t before = proc_threads_stat_reads(pt);
	for (int i = 0; i < reads; i++) {
		proc_threads_read(pt, c.pid, &st);
		cr_assert_eq(st.state, 'R', "read %d: state %c of a spinning thread", i,
		             st.state ? st.state : '0');
		cr_assert(st.sched_known, "read %d: no run time for a runnable thread", i);
	}
	uint64_t stats = proc_threads_stat_reads(pt) - before;
	cr_log_info("%d reads of a spinning thread read stat %llu times\n", reads,
	            (unsigned long long)stats);
	/* Its stat is read again only when the scheduler's clock tick or a
	 * switch moved its counters: a few times, even on a busy machine. */
	cr_assert_lt(stats, (uint64_t)reads / 2, "stat read %llu times in %d reads",
	             (unsigned long long)stats, reads);
	proc_threads_free(pt);
	stop_child(&c);
}

Test(proc_threads_gate, changes_of_state_show_at_the_next_read)
{
	struct child c = start_child();
	struct proc_threads *pt = proc_threads_new(c.pid);
	struct proc_thread_stat st;

	cr_assert_not_null(pt);
	for (int round = 0; round < 20; round++) {
		wait_true_state(c.pid, 'S');
		proc_threads_read(pt, c.pid, &st);
		cr_assert_eq(st.state, 'S', "round %d: asleep, read as %c", round,
		             st.state ? st.state : '0');
		say(&c, 'g');
		wait_true_state(c.pid, 'R');
		proc_threads_read(pt, c.pid, &st);
		cr_assert_eq(st.state, 'R', "round %d: woken, read as %c", round,
		             st.state ? st.state : '0');
		for (int i = 0; i < 50; i++) /* let the gate settle on R */
			proc_threads_read(pt, c.pid, &st);
		say(&c, 's');
	}
	proc_threads_free(pt);
	stop_child(&c);
}
