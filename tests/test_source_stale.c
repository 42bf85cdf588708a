/* test_source_stale.c - the lines view's "source changed since start"
 * verdict (ui/source_stale.c) on real files: one written before the
 * process started whose def lines match is current; the same file
 * modified after the start, or with its def lines shifted (an older
 * mtime), is not; decorators, async def, class and lambda lines are read
 * as Python writes them.  And the target's start time (proc_gauges) is
 * this process's own, to the clock tick. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "target/proc_gauges.h"
#include "../ui/source_file.h"
#include "../ui/source_stale.h"

static const char program[] =
	"import functools\n"                    /* 1 */
	"\n"                                    /* 2 */
	"\n"                                    /* 3 */
	"def plain(n):\n"                       /* 4 */
	"    return n\n"                        /* 5 */
	"\n"                                    /* 6 */
	"\n"                                    /* 7 */
	"@functools.lru_cache(\n"               /* 8 */
	"    maxsize=None,\n"                   /* 9 */
	")\n"                                   /* 10 */
	"async  def decorated(n):\n"            /* 11 */
	"    return n\n"                        /* 12 */
	"\n"                                    /* 13 */
	"\n"                                    /* 14 */
	"class Klass:\n"                        /* 15 */
	"    def method(self):\n"               /* 16 */
	"        return 1\n"                    /* 17 */
	"\n"                                    /* 18 */
	"\n"                                    /* 19 */
	"square = lambda x: x * x\n"            /* 20 */
	"plainly = 1\n";                        /* 21 */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A file with text, modified `age` seconds ago, loaded into sf. */
static void load(struct source_file *sf, const char *text, double age)
{
	char path[] = "/tmp/pytop-stale-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	double when = now_s() - age;
	struct timespec times[2] = {
		{ (time_t)when, (long)((when - (double)(time_t)when) * 1e9) },
		{ (time_t)when, (long)((when - (double)(time_t)when) * 1e9) },
	};
	cr_assert_eq(futimens(fd, times), 0);
	close(fd);
	cr_assert_eq(source_file_load(sf, NULL, path), 0, "%s", sf->reason);
	unlink(path);
}

Test(source_stale, current_file_matches_every_kind_of_def)
{
	struct source_file sf;
	double started = now_s() - 60; /* the file is 10 minutes older */
	load(&sf, program, 600);
	cr_expect_eq(source_stale(&sf, started, "plain", 4), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "decorated", 8), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "Klass", 15), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "Klass.method", 16), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "<lambda>", 20), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "<module>", 1), SOURCE_CURRENT);
	source_file_free(&sf);
}

Test(source_stale, modified_after_the_start)
{
	struct source_file sf;
	load(&sf, program, 1);
	/* The process started a minute ago, the file was written a second
	 * ago: its def lines still match, its time does not. */
	cr_expect_eq(source_stale(&sf, now_s() - 60, "plain", 4), SOURCE_NEWER);
	/* Unknown start: only the def lines are compared. */
	cr_expect_eq(source_stale(&sf, 0, "plain", 4), SOURCE_CURRENT);
	char why[256];
	source_stale_reason(SOURCE_NEWER, &sf, now_s() - 60, "plain", 4, why, sizeof why);
	cr_expect_not_null(strstr(why, "modified"), "%s", why);
	source_file_free(&sf);
}

Test(source_stale, def_lines_moved)
{
	struct source_file sf;
	char shifted[sizeof program + 64];
	snprintf(shifted, sizeof shifted, "# one\n# two\n%s", program);
	load(&sf, shifted, 600);
	double started = now_s() - 60;
	cr_expect_eq(source_stale(&sf, started, "plain", 4), SOURCE_DEF_MOVED);
	cr_expect_eq(source_stale(&sf, started, "decorated", 8), SOURCE_DEF_MOVED);
	cr_expect_eq(source_stale(&sf, started, "Klass", 15), SOURCE_DEF_MOVED);
	cr_expect_eq(source_stale(&sf, started, "<lambda>", 20), SOURCE_DEF_MOVED);
	/* Two lines further down they match again. */
	cr_expect_eq(source_stale(&sf, started, "plain", 6), SOURCE_CURRENT);
	cr_expect_eq(source_stale(&sf, started, "<lambda>", 22), SOURCE_CURRENT);
	/* A name that is a prefix of the one on the line is not it. */
	cr_expect_eq(source_stale(&sf, started, "plai", 6), SOURCE_DEF_MOVED);
	/* Past the end of the file. */
	cr_expect_eq(source_stale(&sf, started, "plain", 400), SOURCE_DEF_MOVED);
	char why[256];
	source_stale_reason(SOURCE_DEF_MOVED, &sf, started, "plain", 4, why, sizeof why);
	cr_expect_not_null(strstr(why, "line 4 no longer begins plain"), "%s", why);
	source_file_free(&sf);
}

Test(source_stale, own_start_time)
{
	char line[] = "123 (a) b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 20";
	cr_expect_eq(proc_gauges_parse_start(line), 4242);
	cr_expect_eq(proc_gauges_parse_start("123 (x) S 1 2"), 0);
	/* This process: started before now, and not before a minute ago
	 * (the test binary has just been run). */
	double started = proc_gauges_started(getpid()), now = now_s();
	cr_expect(started <= now + 0.02 && started > now - 60, "started %.3f, now %.3f",
	          started, now);
}
