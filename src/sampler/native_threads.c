/* native_threads.c - (--native) the threads of a process without Python,
 * from /proc/PID/task, described as Python threads without frames
 * (native_threads.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/native_threads.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_TASKS 4096

struct native_threads {
	pid_t pid;
	struct py_thread_sample t[MAX_TASKS];
	size_t n;
};

struct native_threads *native_threads_new(pid_t pid)
{
	struct native_threads *nt = calloc(1, sizeof(*nt));

	if (nt != NULL)
		nt->pid = pid;
	return nt;
}

void native_threads_free(struct native_threads *nt)
{
	free(nt);
}

static void describe(struct py_thread_sample *t, pid_t tid, struct proc_threads *pt, bool idle)
{
	struct proc_thread_stat st;

	proc_threads_read(pt, tid, &st);
	*t = (struct py_thread_sample){
		.tid = tid, .state = st.state, .utime_ns = st.utime_ns, .stime_ns = st.stime_ns,
		.run_ns = st.run_ns, .delay_ns = st.delay_ns,
	};
	if (st.state == 'R')
		t->flags |= SAMPLE_RUNNING;
	/* A thread in uninterruptible sleep would only stop once it wakes. */
	if (st.state == 'R' || (idle && st.state != 0 && st.state != 'D' && st.state != 'Z'))
		t->status = PY_THREAD_OK;
}

int native_threads_sample(struct native_threads *nt, struct proc_threads *pt, bool idle)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)nt->pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	nt->n = 0;
	while ((e = readdir(d)) != NULL && nt->n < MAX_TASKS) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		describe(&nt->t[nt->n], (pid_t)tid, pt, idle);
		/* A zombie thread stays listed until the process is reaped,
		 * which its parent may never do: it is gone. */
		if (nt->t[nt->n].state != 0 && nt->t[nt->n].state != 'Z' &&
		    nt->t[nt->n].state != 'X')
			nt->n++;
	}
	closedir(d);
	proc_threads_sweep(pt);
	return nt->n > 0 ? (int)nt->n : -1;
}

const struct py_thread_sample *native_threads_get(const struct native_threads *nt, size_t i)
{
	return i < nt->n ? &nt->t[i] : NULL;
}
