/* busy_program.c - the recording tests' busy Python program. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "busy_program.h"

#include <criterion/criterion.h>
#include <stdio.h>

#include "harness.h"

static const char BUSY_FMT[] =
	"import time\n"
	"def leaf(n):\n"
	"    s = 0\n"
	"    for i in range(n):\n"
	"        s += i\n"
	"    return s\n"
	"def mid(k):\n"
	"    return leaf(2000 + k)\n"
	"def other(k):\n"
	"    return sum(range(3000 + k))\n"
	"def top(secs):\n"
	"    end = time.time() + secs\n"
	"    while time.time() < end:\n"
	"        for k in range(5):\n"
	"            mid(k)\n"
	"            other(k)\n"
	"%s"
	"top(%g)\n";

char *busy_program_write(const char *dir, double secs, bool say_ready)
{
	char *path = h_path(dir, "busy.py");
	FILE *f = fopen(path, "w");

	cr_assert(f != NULL, "cannot write %s", path);
	fprintf(f, BUSY_FMT, say_ready ? "print('ready', flush=True)\n" : "",
	        secs);
	fclose(f);
	return path;
}
