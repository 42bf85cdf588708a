/* patience.c - wait deadlines that forgive starvation (see patience.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "patience.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h" /* h_now, h_note */

#define SCAN_EVERY_S 0.1
#define PLAIN_BELOW_S 1.0
#define MAX_PROCESSES 64

/* What one test process has been forgiven in all, over its waits. */
static double g_forgiven_total;

static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static unsigned long long previous_delay(const struct patience *w, pid_t tid)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->tasks[i].tid == tid)
			return w->tasks[i].delay_ns;
	return 0; /* new since the last scan: all its delay is since then */
}

static void add_task(struct patience_task **tasks, size_t *n, size_t *cap,
                     pid_t tid, unsigned long long delay)
{
	if (*n == *cap) {
		size_t grown = *cap ? *cap * 2 : 32;
		struct patience_task *t = realloc(*tasks, grown * sizeof *t);
		if (t == NULL)
			return; /* a task less watched: the wait is plainer */
		*tasks = t;
		*cap = grown;
	}
	(*tasks)[(*n)++] = (struct patience_task){tid, delay};
}

/* The children of one thread, appended to pids[*n..max). */
static void add_children(pid_t pid, long tid, pid_t *pids, size_t *n,
                         size_t max)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/children", (int)pid, tid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return;
	char *p = buf, *end;
	for (long child; *n < max && (child = strtol(p, &end, 10)) > 0; p = end)
		pids[(*n)++] = (pid_t)child;
}

/* The threads of process pid into the new table, and its children onto
 * the list to visit; returns the largest delay one of its threads
 * accrued since the last scan, in ns. */
static unsigned long long scan_process(const struct patience *w, pid_t pid,
                                       struct patience_task **tasks,
                                       size_t *n, size_t *cap,
                                       pid_t *pids, size_t *npids)
{
	char path[96], buf[128];
	unsigned long long most = 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (d == NULL)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || tid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%ld/schedstat",
		         (int)pid, tid);
		unsigned long long run_ns, delay_ns;
		if (read_small(path, buf, sizeof buf) > 0 &&
		    sscanf(buf, "%llu %llu", &run_ns, &delay_ns) == 2) {
			unsigned long long before = previous_delay(w, (pid_t)tid);
			if (delay_ns > before && delay_ns - before > most)
				most = delay_ns - before;
			add_task(tasks, n, cap, (pid_t)tid, delay_ns);
		}
		add_children(pid, tid, pids, npids, MAX_PROCESSES);
	}
	closedir(d);
	return most;
}

/* Read the run_delay of every thread of root and its descendants (the
 * first MAX_PROCESSES of them: a fork storm is not worth a long walk);
 * returns the largest growth of one since the last scan, in seconds: the
 * time at least that one was kept off a CPU it wanted. */
static double scan(struct patience *w)
{
	struct patience_task *tasks = NULL;
	size_t n = 0, cap = 0, npids = 1;
	unsigned long long most = 0;
	pid_t pids[MAX_PROCESSES] = {w->root};
	for (size_t i = 0; i < npids; i++) {
		unsigned long long m = scan_process(w, pids[i], &tasks, &n, &cap,
		                                    pids, &npids);
		if (m > most)
			most = m;
	}
	free(w->tasks);
	w->tasks = tasks;
	w->n = n;
	return (double)most / 1e9;
}

void patience_start(struct patience *w, pid_t root, double timeout_s)
{
	double t = h_now();
	*w = (struct patience){.deadline = t + timeout_s,
	                       .next_scan = t + SCAN_EVERY_S};
	if (timeout_s < PLAIN_BELOW_S)
		return;
	w->root = root;
	if (root > 0)
		scan(w); /* the baseline: delay before the wait is not its own */
}

bool patience_over(struct patience *w)
{
	double t = h_now();
	if (w->root > 0 && t >= w->next_scan) {
		double starved = scan(w), room = PATIENCE_MAX_S - g_forgiven_total;
		if (starved > room)
			starved = room > 0 ? room : 0;
		w->deadline += starved;
		w->forgiven += starved;
		g_forgiven_total += starved;
		w->next_scan = t + SCAN_EVERY_S;
	}
	return t > w->deadline;
}

double patience_left(struct patience *w)
{
	return w->deadline - h_now();
}

void patience_end(struct patience *w, const char *what)
{
	if (w->forgiven >= 0.5)
		h_note("patience: %s waited %.1f s longer, the time its "
		          "programs spent waiting for a CPU (%.1f s of %.0f "
		          "forgiven in this test so far)", what, w->forgiven,
		          g_forgiven_total, PATIENCE_MAX_S);
	free(w->tasks);
	w->tasks = NULL;
	w->n = 0;
}
