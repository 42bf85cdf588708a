/* test_native_option.c - which way --native takes native stacks: perf
 * events by default (ptrace where they are refused), ptrace when asked
 * with --native=ptrace, and --native-perf kept as the name --native=perf
 * had before it became the default; any other method is one usage line. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

/* options_parse of "pytop ARGS... -p 1" (batch), its stderr in err. */
static enum options_result parse(struct options *o, char *err, size_t len, const char *a,
                                 const char *b)
{
	char *argv[] = { "pytop", (char *)a, (char *)b, "-b", "-p", "1", NULL };
	int argc = 6, saved = dup(STDERR_FILENO);
	FILE *tmp = tmpfile();
	enum options_result r;
	size_t n;

	if (b == NULL) { /* shift "-b -p 1" down over the missing one */
		memmove(&argv[2], &argv[3], 4 * sizeof(argv[0]));
		argc--;
	}
	cr_assert(saved >= 0 && tmp != NULL);
	dup2(fileno(tmp), STDERR_FILENO);
	r = options_parse(argc, argv, false, o);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return r;
}

static void expect_method(const char *a, const char *b, bool perf, bool all)
{
	struct options o;
	char err[512];

	cr_assert_eq(parse(&o, err, sizeof err, a, b), OPTIONS_OK, "%s %s: %s", a,
	             b ? b : "", err);
	cr_expect(o.native, "%s %s: no native stacks", a, b ? b : "");
	cr_expect_eq(o.native_perf, perf, "%s %s: %s, not %s", a, b ? b : "",
	             o.native_perf ? "perf" : "ptrace", perf ? "perf" : "ptrace");
	cr_expect_eq(o.native_all, all, "%s %s: --native-all %d", a, b ? b : "", o.native_all);
}

Test(native_option, perf_by_default)
{
	expect_method("--native", NULL, true, false);
	expect_method("--native-all", NULL, true, true);
}

Test(native_option, ptrace_when_asked)
{
	expect_method("--native=ptrace", NULL, false, false);
	expect_method("--native=ptrace", "--native-all", false, true);
	expect_method("--native-all", "--native=ptrace", false, true);
}

Test(native_option, perf_by_name)
{
	expect_method("--native=perf", NULL, true, false);
	expect_method("--native-perf", NULL, true, false);
	expect_method("--native=ptrace", "--native-perf", true, false);
}

Test(native_option, other_method_refused)
{
	struct options o;
	char err[512];

	cr_assert_eq(parse(&o, err, sizeof err, "--native=gdb", NULL), OPTIONS_ERROR);
	cr_expect_str_eq(err, "pytop: --native takes perf or ptrace, not 'gdb'; use --native "
	                      "(perf events, ptrace where refused) or --native=ptrace\n");
}
