/* test_options.c - every accepted command-line form parses to the exact
 * values, and every bad one gets its exact one-line message on stderr. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define MAX_ARGS 32

/* One call of options_parse with stdout and stderr captured. */
struct run {
	char *argv[MAX_ARGS + 2]; /* owns nothing: string literals */
	enum options_result r;
	struct options o;
	char out[8192];
	char err[1024];
};

/* Redirect fd `fd` to a fresh temporary file; returns the saved fd. */
static int capture_begin(int fd, FILE **tmp)
{
	int saved = dup(fd);

	*tmp = tmpfile();
	cr_assert(saved >= 0 && *tmp != NULL, "capture set-up failed");
	cr_assert(dup2(fileno(*tmp), fd) >= 0);
	return saved;
}

static void capture_end(int fd, int saved, FILE *tmp, char *buf, size_t len)
{
	size_t n;

	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

/* Parse "pytop ARGS..." (args NULL-terminated) as if stdout were, or
 * were not, a terminal. */
static void parse_argv(struct run *run, bool tty, const char *const *args)
{
	FILE *tmp_out, *tmp_err;
	int saved_out, saved_err, argc = 1;

	memset(run, 0, sizeof(*run));
	run->argv[0] = (char *)"pytop";
	for (; *args != NULL; args++) {
		cr_assert(argc <= MAX_ARGS);
		run->argv[argc++] = (char *)*args;
	}
	run->argv[argc] = NULL;

	fflush(stdout);
	fflush(stderr);
	saved_out = capture_begin(STDOUT_FILENO, &tmp_out);
	saved_err = capture_begin(STDERR_FILENO, &tmp_err);
	run->r = options_parse(argc, run->argv, tty, &run->o);
	fflush(stdout);
	fflush(stderr);
	capture_end(STDERR_FILENO, saved_err, tmp_err, run->err,
	            sizeof(run->err));
	capture_end(STDOUT_FILENO, saved_out, tmp_out, run->out,
	            sizeof(run->out));
}

static void parse(struct run *run, int tty, ...)
{
	const char *args[MAX_ARGS + 1];
	size_t n = 0;
	va_list ap;

	va_start(ap, tty);
	while ((args[n] = va_arg(ap, const char *)) != NULL)
		cr_assert(++n < MAX_ARGS);
	va_end(ap);
	parse_argv(run, tty != 0, args);
}

static void clean_env(void)
{
	unsetenv("NO_COLOR");
}

TestSuite(options, .init = clean_env);

/* ---- accepted forms ------------------------------------------------- */

Test(options, attach_with_defaults)
{
	struct run run;

	parse(&run, true, "-p", "1234", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert_str_empty(run.out);
	cr_assert_eq(run.o.pid, 1234);
	cr_assert_null(run.o.command);
	cr_assert_not(run.o.demo);
	cr_assert_eq(run.o.rate_hz, PYTOP_DEFAULT_RATE_HZ);
	cr_assert_float_eq(run.o.delay_s, 1.0, 1e-12);
	cr_assert_not(run.o.batch);
	cr_assert_eq(run.o.iterations, 0);
	cr_assert_float_eq(run.o.duration_s, 0.0, 1e-12);
	cr_assert_not(run.o.json);
	cr_assert_not(run.o.idle);
	cr_assert_not(run.o.no_split);
	cr_assert_not(run.o.no_color);
}

Test(options, every_long_option_with_equals)
{
	struct run run;

	parse(&run, true, "--pid=77", "--rate=250", "--delay=0.5", "--batch",
	      "--iterations=3", "--duration=2.5", "--json", "--idle",
	      "--no-color", "--no-split", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert_eq(run.o.pid, 77);
	cr_assert_eq(run.o.rate_hz, 250);
	cr_assert_float_eq(run.o.delay_s, 0.5, 1e-12);
	cr_assert(run.o.batch);
	cr_assert_eq(run.o.iterations, 3);
	cr_assert_float_eq(run.o.duration_s, 2.5, 1e-12);
	cr_assert(run.o.json);
	cr_assert(run.o.idle);
	cr_assert(run.o.no_color);
	cr_assert(run.o.no_split);
}

Test(options, long_options_with_separate_values)
{
	struct run run;

	parse(&run, true, "--pid", "9", "--rate", "10000", "--delay", "3",
	      "--iterations", "1", "--duration", "60", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_eq(run.o.pid, 9);
	cr_assert_eq(run.o.rate_hz, PYTOP_MAX_RATE_HZ);
	cr_assert_float_eq(run.o.delay_s, 3.0, 1e-12);
	cr_assert_eq(run.o.iterations, 1);
	cr_assert_float_eq(run.o.duration_s, 60.0, 1e-12);
}

Test(options, short_options_clustered_and_attached)
{
	struct run run;

	parse(&run, true, "-bn3", "-p42", "-r", "1", "-d.25", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert(run.o.batch);
	cr_assert_eq(run.o.iterations, 3);
	cr_assert_eq(run.o.pid, 42);
	cr_assert_eq(run.o.rate_hz, 1);
	cr_assert_float_eq(run.o.delay_s, 0.25, 1e-12);
}

Test(options, last_value_wins)
{
	struct run run;

	parse(&run, true, "-r", "200", "-r", "300", "-p", "5", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_eq(run.o.rate_hz, 300);
}

Test(options, launch_after_double_dash)
{
	struct run run;

	parse(&run, true, "-r", "200", "--", "python3", "-c", "pass", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert_eq(run.o.rate_hz, 200);
	cr_assert_eq(run.o.pid, 0);
	cr_assert_not_null(run.o.command);
	cr_assert_eq(run.o.command, &run.argv[4], "command borrows argv");
	cr_assert_str_eq(run.o.command[0], "python3");
	cr_assert_str_eq(run.o.command[1], "-c");
	cr_assert_str_eq(run.o.command[2], "pass");
	cr_assert_null(run.o.command[3]);
}

/* Option parsing stops at the first non-option: later options are the
 * command's, not pytop's. */
Test(options, launch_without_double_dash)
{
	struct run run;

	parse(&run, true, "-b", "python3", "app.py", "-p", "5", "--json",
	      NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert(run.o.batch);
	cr_assert_eq(run.o.pid, 0);
	cr_assert_not(run.o.json);
	cr_assert_str_eq(run.o.command[0], "python3");
	cr_assert_str_eq(run.o.command[1], "app.py");
	cr_assert_str_eq(run.o.command[2], "-p");
	cr_assert_str_eq(run.o.command[3], "5");
	cr_assert_str_eq(run.o.command[4], "--json");
	cr_assert_null(run.o.command[5]);
}

Test(options, double_dash_keeps_option_like_command)
{
	struct run run;

	parse(&run, true, "--", "-weird-name", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_eq(run.o.command[0], "-weird-name");
	cr_assert_null(run.o.command[1]);
}

Test(options, demo)
{
	struct run run;

	parse(&run, true, "--demo", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_str_empty(run.err);
	cr_assert(run.o.demo);
	cr_assert_eq(run.o.pid, 0);
	cr_assert_null(run.o.command);

	parse(&run, true, "-b", "-n", "2", "--demo", "--json", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert(run.o.demo && run.o.batch && run.o.json);
	cr_assert_eq(run.o.iterations, 2);
}

Test(options, no_color_from_environment)
{
	struct run run;

	setenv("NO_COLOR", "1", 1);
	parse(&run, true, "-p", "1", NULL);
	cr_assert(run.o.no_color, "NO_COLOR=1 disables colour");

	setenv("NO_COLOR", "", 1);
	parse(&run, true, "-p", "1", NULL);
	cr_assert_not(run.o.no_color, "an empty NO_COLOR does not");

	unsetenv("NO_COLOR");
	parse(&run, true, "-p", "1", NULL);
	cr_assert_not(run.o.no_color);
}

Test(options, not_a_terminal_falls_back_to_batch)
{
	struct run run;

	parse(&run, false, "-p", "1", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert(run.o.batch);
	cr_assert_str_eq(run.err,
	                 "pytop: stdout is not a terminal; using --batch output\n");

	parse(&run, false, "-b", "-p", "1", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert(run.o.batch);
	cr_assert_str_empty(run.err, "no notice when --batch was given");

	parse(&run, true, "-p", "1", NULL);
	cr_assert_not(run.o.batch, "a terminal keeps the TUI");
}

Test(options, version)
{
	struct run run;

	parse(&run, true, "-V", NULL);
	cr_assert_eq(run.r, OPTIONS_EXIT_OK);
	cr_assert_str_eq(run.out, "pytop " PACKAGE_VERSION "\n");
	cr_assert_str_empty(run.err);

	parse(&run, true, "--version", "-p", "nonsense", NULL);
	cr_assert_eq(run.r, OPTIONS_EXIT_OK);
	cr_assert_str_eq(run.out, "pytop " PACKAGE_VERSION "\n");
}

Test(options, help_goes_to_stdout)
{
	struct run run;

	parse(&run, true, "--help", NULL);
	cr_assert_eq(run.r, OPTIONS_EXIT_OK);
	cr_assert_str_empty(run.err);
	cr_assert(strncmp(run.out, "Usage: pytop [OPTIONS] -p PID\n", 30) == 0,
	          "help starts with the synopsis: %s", run.out);

	parse(&run, true, "-h", NULL);
	cr_assert_eq(run.r, OPTIONS_EXIT_OK);
	cr_assert(strstr(run.out, "--rate") != NULL);
}

/* Every option and every default is in the help text. */
Test(options, help_lists_every_option_and_default)
{
	static const char *const wanted[] = {
		"-p, --pid PID", "-r, --rate HZ", "-d, --delay SECONDS",
		"-b, --batch", "-n, --iterations N", "--duration SECONDS",
		"--json", "--idle", "--no-split", "--no-color", "--demo", "-h, --help",
		"-V, --version", "[--] COMMAND [ARGS...]",
		"1 to 10000 (default 1000)", "(default 1)",
		"(default: no limit)", "NO_COLOR", "CAP_SYS_PTRACE",
		"2 on\nusage errors",
	};
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	options_print_help(f);
	fclose(f);
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		cr_expect(strstr(text, wanted[i]) != NULL,
		          "help lacks \"%s\"", wanted[i]);
	free(text);
}

/* ---- rejected forms: exact message, one line, nothing on stdout ----- */

struct bad_case {
	const char *args[6]; /* NULL-terminated */
	bool tty;
	const char *message;
};

#define RATE_MSG(v) "pytop: invalid rate '" v "': must be an integer from " \
	"1 to 10000 (Hz)\n"
#define DELAY_MSG(v) "pytop: invalid delay '" v "': must be a number of " \
	"seconds greater than 0 and at most 86400 (e.g. 0.5)\n"
#define ITER_MSG(v) "pytop: invalid iteration count '" v "': must be an " \
	"integer of 1 or more\n"
#define DURATION_MSG(v) "pytop: invalid duration '" v "': must be a " \
	"number of seconds greater than 0 (e.g. 30 or 2.5)\n"
#define PID_MSG(v) "pytop: invalid PID '" v "': must be a positive " \
	"integer (find it with pgrep or ps)\n"
#define NOTHING_MSG "pytop: nothing to profile: give -p PID, a command " \
	"after --, or --demo (see pytop --help)\n"

static const struct bad_case bad_cases[] = {
	{{"-r", "0", "-p", "1"}, true, RATE_MSG("0")},
	{{"-r", "-5", "-p", "1"}, true, RATE_MSG("-5")},
	{{"--rate=abc", "-p", "1"}, true, RATE_MSG("abc")},
	{{"-r", "10x", "-p", "1"}, true, RATE_MSG("10x")},
	{{"-r", "10001", "-p", "1"}, true, RATE_MSG("10001")},
	{{"-r", "1.5", "-p", "1"}, true, RATE_MSG("1.5")},
	{{"-r", "", "-p", "1"}, true, RATE_MSG("")},
	{{"-r", " 5", "-p", "1"}, true, RATE_MSG(" 5")},
	{{"-r", "+5", "-p", "1"}, true, RATE_MSG("+5")},
	{{"-r", "99999999999999999999999", "-p", "1"}, true,
	 RATE_MSG("99999999999999999999999")},
	{{"-d", "0", "-p", "1"}, true, DELAY_MSG("0")},
	{{"-d", "-1", "-p", "1"}, true, DELAY_MSG("-1")},
	{{"-d", "abc", "-p", "1"}, true, DELAY_MSG("abc")},
	{{"-d", "1x", "-p", "1"}, true, DELAY_MSG("1x")},
	{{"-d", "nan", "-p", "1"}, true, DELAY_MSG("nan")},
	{{"-d", "inf", "-p", "1"}, true, DELAY_MSG("inf")},
	{{"-d", "1e999", "-p", "1"}, true, DELAY_MSG("1e999")},
	{{"-d", "86401", "-p", "1"}, true, DELAY_MSG("86401")},
	{{"-d", "0.0", "-p", "1"}, true, DELAY_MSG("0.0")},
	{{"-n", "0", "-p", "1"}, true, ITER_MSG("0")},
	{{"-n", "-3", "-p", "1"}, true, ITER_MSG("-3")},
	{{"-n", "x", "-p", "1"}, true, ITER_MSG("x")},
	{{"-n", "99999999999999999999999", "-p", "1"}, true,
	 ITER_MSG("99999999999999999999999")},
	{{"--duration", "0", "-p", "1"}, true, DURATION_MSG("0")},
	{{"--duration=-2", "-p", "1"}, true, DURATION_MSG("-2")},
	{{"--duration", "soon", "-p", "1"}, true, DURATION_MSG("soon")},
	{{"-p", "0"}, true, PID_MSG("0")},
	{{"-p", "-1"}, true, PID_MSG("-1")},
	{{"-p", "abc"}, true, PID_MSG("abc")},
	{{"-p", "12x"}, true, PID_MSG("12x")},
	{{"--pid=99999999999"}, true, PID_MSG("99999999999")},
	{{"-p", "99999999999999999999999"}, true,
	 PID_MSG("99999999999999999999999")},
	{{"--json", "-p", "1"}, true,
	 "pytop: --json needs --batch (JSON goes to stdout one object per "
	 "refresh)\n"},
	{{"--json", "-p", "1"}, false,
	 "pytop: --json needs --batch (JSON goes to stdout one object per "
	 "refresh)\n"},
	{{"-p", "1", "--", "python3"}, true,
	 "pytop: -p and a command are mutually exclusive; give -p PID to "
	 "attach or -- COMMAND to launch, not both\n"},
	{{"-p", "1", "python3", "x.py"}, true,
	 "pytop: -p and a command are mutually exclusive; give -p PID to "
	 "attach or -- COMMAND to launch, not both\n"},
	{{"--demo", "-p", "1"}, true,
	 "pytop: --demo runs its own program; drop -p or the command, or drop "
	 "--demo\n"},
	{{"--demo", "python3"}, true,
	 "pytop: --demo runs its own program; drop -p or the command, or drop "
	 "--demo\n"},
	{{NULL}, true, NOTHING_MSG},
	{{NULL}, false, NOTHING_MSG},
	{{"-b", "-r", "100"}, true, NOTHING_MSG},
	{{"--"}, true, NOTHING_MSG},
	{{"-p", "1", "-r"}, true,
	 "pytop: option -r/--rate needs a value; see pytop --help\n"},
	{{"-p", "1", "--duration"}, true,
	 "pytop: option --duration needs a value; see pytop --help\n"},
	{{"-x", "-p", "1"}, true,
	 "pytop: unknown option '-x'; see pytop --help\n"},
	{{"-bx", "-p", "1"}, true,
	 "pytop: unknown option '-x'; see pytop --help\n"},
	{{"--idle", "-xb", "-p", "1"}, true,
	 "pytop: unknown option '-x'; see pytop --help\n"},
	{{"--frobnicate", "-p", "1"}, true,
	 "pytop: unknown option '--frobnicate'; see pytop --help\n"},
	{{"--d", "1", "-p", "1"}, true,
	 "pytop: ambiguous option '--d'; spell it out (see pytop --help)\n"},
	{{"--batch=yes", "-p", "1"}, true,
	 "pytop: option -b/--batch takes no value; see pytop --help\n"},
	{{"--json=1", "-b", "-p", "1"}, true,
	 "pytop: option --json takes no value; see pytop --help\n"},
};

static void describe(const struct bad_case *c, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; c->args[i] != NULL && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " %s", c->args[i]);
}

Test(options, bad_input_gets_one_exact_line)
{
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct run run;
		char args[256];

		describe(c, args, sizeof(args));
		parse_argv(&run, c->tty, c->args);
		cr_expect_eq(run.r, OPTIONS_ERROR, "pytop%s: result %d",
		             args, run.r);
		cr_expect_str_eq(run.err, c->message, "pytop%s\n got: %s want: %s",
		                 args, run.err, c->message);
		cr_expect_str_empty(run.out, "pytop%s printed to stdout", args);
		cr_expect(strchr(run.err, '\n') ==
		          run.err + strlen(run.err) - 1,
		          "pytop%s: not exactly one line", args);
	}
}

/* A failed parse must not leave a half-parsed state that a second parse
 * inherits (getopt keeps global state between calls). */
Test(options, parses_again_after_an_error)
{
	struct run run;

	parse(&run, true, "-r", "0", "-p", "1", NULL);
	cr_assert_eq(run.r, OPTIONS_ERROR);
	parse(&run, true, "-bx", "-p", "1", NULL);
	cr_assert_eq(run.r, OPTIONS_ERROR);
	parse(&run, true, "-p", "8", NULL);
	cr_assert_eq(run.r, OPTIONS_OK);
	cr_assert_eq(run.o.pid, 8);
	cr_assert_eq(run.o.rate_hz, PYTOP_DEFAULT_RATE_HZ);
	cr_assert_not(run.o.batch);
}
