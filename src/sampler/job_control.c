/* job_control.c - pytop's SIGTSTP/SIGTTIN/SIGTTOU handlers: release the
 * target (sampler pause) before pytop stops (job_control.h).
 *
 * The file-scope state is what the signal handler must reach: there is one
 * process, one set of handlers and one sampler to pause. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/job_control.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/sampler.h"

static const int stop_signals[] = { SIGTSTP, SIGTTIN, SIGTTOU };
#define NSTOP (sizeof stop_signals / sizeof stop_signals[0])

static struct sampler *volatile paused_sampler;
static volatile pid_t main_tid;
static struct sigaction old_actions[NSTOP];

static pid_t this_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Stop the whole process with sig's default action, then put back the
 * handler that is installed now (this one, or the view's in front). */
static void stop_with_default(int sig)
{
	struct sigaction dfl, cur;
	sigset_t set;

	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, &cur);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig); /* stops here until SIGCONT */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sigaction(sig, &cur, NULL);
}

/* Async-signal-safe throughout (sampler_pause is). */
static void on_stop_signal(int sig)
{
	int saved_errno = errno;
	struct sampler *s = paused_sampler;

	if (this_tid() != main_tid) {
		syscall(SYS_tgkill, getpid(), main_tid, sig);
	} else {
		if (s != NULL)
			sampler_pause(s);
		stop_with_default(sig);
		if (s != NULL)
			sampler_resume(s);
	}
	errno = saved_errno;
}

void job_control_install(struct sampler *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaddset(&sa.sa_mask, stop_signals[i]); /* one stop at a time */
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = SA_RESTART; /* a stop is no reason to fail a read */
	main_tid = this_tid();
	paused_sampler = s;
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &sa, &old_actions[i]);
}

void job_control_remove(struct sampler *s)
{
	if (paused_sampler != s || s == NULL)
		return;
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &old_actions[i], NULL);
	paused_sampler = NULL;
}
