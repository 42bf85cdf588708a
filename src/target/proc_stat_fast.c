/* proc_stat_fast.c - /proc/PID/stat through a kept descriptor
 * (proc_stat_fast.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/proc_stat_fast.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "target/proc_threads.h"

struct proc_stat_fast {
	int fd;
	uint64_t ns_per_tick, page_bytes;
};

struct proc_stat_fast *proc_stat_fast_open(pid_t pid)
{
	struct proc_stat_fast *f = calloc(1, sizeof *f);
	char path[48];
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);

	if (f == NULL)
		return NULL;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	f->ns_per_tick = NSEC_PER_SEC / (uint64_t)(hz > 0 ? hz : 100);
	f->page_bytes = (uint64_t)(page > 0 ? page : 4096);
	return f;
}

void proc_stat_fast_close(struct proc_stat_fast *f)
{
	if (f == NULL)
		return;
	close(f->fd);
	free(f);
}

bool proc_stat_fast_read(struct proc_stat_fast *f, struct proc_stat_fast_read *out)
{
	/* comm is at most 64 bytes (escaped by the parser), the fields ~50
	 * numbers: 1 KiB holds the line. */
	char buf[1024];
	struct proc_stat_line line;
	ssize_t n = pread(f->fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!proc_threads_parse_stat(buf, &line))
		return false;
	*out = (struct proc_stat_fast_read){
		.rss = line.rss_pages * f->page_bytes,
		.minflt = line.minflt, .majflt = line.majflt,
		.utime_ns = line.utime_ticks * f->ns_per_tick,
		.stime_ns = line.stime_ticks * f->ns_per_tick,
	};
	return true;
}
