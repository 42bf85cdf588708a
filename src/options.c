/* options.c - argv -> struct options, with one-line errors that name the
 * problem and the fix.  Nothing here touches the target or the terminal. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Upper bounds keep later seconds -> nanoseconds conversions in range. */
#define MAX_DELAY_S 86400.0
#define MAX_DURATION_S 1e9

/* getopt values of the options that have no short form. */
enum {
	OPT_DURATION = 256,
	OPT_JSON,
	OPT_IDLE,
	OPT_NO_SPLIT,
	OPT_NO_COLOR,
	OPT_DEMO,
	OPT_NATIVE,
	OPT_NATIVE_ALL,
	OPT_NATIVE_PERF,
	OPT_NATIVE_PTRACE,
	OPT_LOCALS,
	OPT_TREE,
	OPT_STACKS,
	OPT_FORMAT,
	OPT_EXPORT_EVERY,
	OPT_FORCE,
	OPT_FROM,
	OPT_TO,
	OPT_PUSH,
	OPT_PUSH_EVERY,
	OPT_APP,
	OPT_LABEL,
};

/* '+': stop at the first non-option, which starts the target's command.
 * ':': report a missing value as ':' so we can word the message. */
static const char short_opts[] = "+:p:r:d:bn:sho:w:V";

static const struct option long_opts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"rate", required_argument, NULL, 'r'},
	{"delay", required_argument, NULL, 'd'},
	{"batch", no_argument, NULL, 'b'},
	{"iterations", required_argument, NULL, 'n'},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"json", no_argument, NULL, OPT_JSON},
	{"idle", no_argument, NULL, OPT_IDLE},
	{"no-split", no_argument, NULL, OPT_NO_SPLIT},
	{"subprocesses", no_argument, NULL, 's'},
	{"no-color", no_argument, NULL, OPT_NO_COLOR},
	{"demo", no_argument, NULL, OPT_DEMO},
	{"native", no_argument, NULL, OPT_NATIVE},
	{"native-all", no_argument, NULL, OPT_NATIVE_ALL},
	{"native-perf", no_argument, NULL, OPT_NATIVE_PERF},
	{"native-ptrace", no_argument, NULL, OPT_NATIVE_PTRACE},
	{"locals", no_argument, NULL, OPT_LOCALS},
	{"tree", no_argument, NULL, OPT_TREE},
	{"stacks", no_argument, NULL, OPT_STACKS},
	{"output", required_argument, NULL, 'o'},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"export-every", required_argument, NULL, OPT_EXPORT_EVERY},
	{"force", no_argument, NULL, OPT_FORCE},
	{"from", required_argument, NULL, OPT_FROM},
	{"to", required_argument, NULL, OPT_TO},
	{"push", required_argument, NULL, OPT_PUSH},
	{"push-every", required_argument, NULL, OPT_PUSH_EVERY},
	{"app", required_argument, NULL, OPT_APP},
	{"label", required_argument, NULL, OPT_LABEL},
	{"record", required_argument, NULL, 'w'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Every error is exactly one line: "pytop: <problem>; <fix>". */
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("pytop: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A non-negative decimal integer with nothing before or after it (strtol
 * alone would accept " 5", "+5", "-5" and "5x").  False on garbage or
 * overflow. */
static bool parse_long(const char *s, long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtol(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* A finite decimal number of seconds in (0, max]. */
static bool parse_seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v <= 0.0 || v > max)
		return false;
	*out = v;
	return true;
}

/* --from / --to: seconds from a recording's start, 0 or more, fractions
 * allowed. */
static int set_time(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = ((*arg >= '0' && *arg <= '9') || *arg == '.') ? strtod(arg, &end) : -1.0;
	if (v < 0 || errno != 0 || *end != '\0' || !isfinite(v)) {
		usage_error("invalid %s '%s': give seconds from the recording's start, "
		            "0 or more (e.g. %s 1.5)", opt, arg, opt);
		return -1;
	}
	*out = v;
	return 0;
}

static bool set_pid(const char *arg, struct options *o)
{
	long v;

	if (!parse_long(arg, &v) || v < 1 || v > INT_MAX) {
		usage_error("invalid PID '%s': must be a positive integer "
		            "(find it with pgrep or ps)", arg);
		return false;
	}
	o->pid = (pid_t)v;
	return true;
}

static bool set_rate(const char *arg, struct options *o)
{
	long v;

	if (!parse_long(arg, &v) || v < 1 || v > PYTOP_MAX_RATE_HZ) {
		usage_error("invalid rate '%s': must be an integer from 1 to %d "
		            "(Hz)", arg, PYTOP_MAX_RATE_HZ);
		return false;
	}
	o->rate_hz = (int)v;
	return true;
}

static bool set_delay(const char *arg, struct options *o)
{
	if (!parse_seconds(arg, MAX_DELAY_S, &o->delay_s)) {
		usage_error("invalid delay '%s': must be a number of seconds "
		            "greater than 0 and at most %.0f (e.g. 0.5)", arg,
		            MAX_DELAY_S);
		return false;
	}
	return true;
}

static bool set_iterations(const char *arg, struct options *o)
{
	long v;

	if (!parse_long(arg, &v) || v < 1) {
		usage_error("invalid iteration count '%s': must be an integer "
		            "of 1 or more", arg);
		return false;
	}
	o->iterations = v;
	return true;
}

static bool set_duration(const char *arg, struct options *o)
{
	if (!parse_seconds(arg, MAX_DURATION_S, &o->duration_s)) {
		usage_error("invalid duration '%s': must be a number of seconds "
		            "greater than 0 (e.g. 30 or 2.5)", arg);
		return false;
	}
	return true;
}

static bool set_export_every(const char *arg, struct options *o)
{
	if (!parse_seconds(arg, MAX_DURATION_S, &o->export_every_s)) {
		usage_error("invalid export period '%s': must be a number of "
		            "seconds greater than 0 (e.g. 60)", arg);
		return false;
	}
	return true;
}

static bool set_push_every(const char *arg, struct options *o)
{
	/* The ingest API's from and until are whole seconds. */
	if (!parse_seconds(arg, MAX_DELAY_S, &o->push_every_s) ||
	    o->push_every_s < 1.0) {
		usage_error("invalid push period '%s': must be a number of "
		            "seconds from 1 to %.0f (e.g. 10)", arg, MAX_DELAY_S);
		return false;
	}
	return true;
}

/* Characters a Pyroscope name may carry in an app name or a label:
 * braces, commas, '=' and quotes would break "APP{k=v,...}". */
static bool push_name_ok(const char *s, bool key)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		            (c >= '0' && c <= '9') || c == '_';

		if (!word && (key || (c != '.' && c != '-' && c != ':' && c != '/')))
			return false;
	}
	return true;
}

static bool set_app(const char *arg, struct options *o)
{
	if (!push_name_ok(arg, false)) {
		usage_error("invalid app name '%s': use letters, digits and _ . - : / "
		            "only (e.g. --app billing.worker)", arg);
		return false;
	}
	o->push_app = arg;
	return true;
}

static bool set_label(const char *arg, struct options *o)
{
	const char *eq = strchr(arg, '=');
	char key[64];
	size_t klen = eq != NULL ? (size_t)(eq - arg) : 0;

	if (o->npush_labels >= PYTOP_MAX_PUSH_LABELS) {
		usage_error("too many --label options: at most %d; drop some",
		            PYTOP_MAX_PUSH_LABELS);
		return false;
	}
	if (klen < sizeof key) {
		memcpy(key, arg, klen);
		key[klen] = '\0';
	}
	if (eq == NULL || klen >= sizeof key || !push_name_ok(key, true) ||
	    !push_name_ok(eq + 1, false)) {
		usage_error("invalid label '%s': give KEY=VALUE, the key letters, "
		            "digits and _, the value also . - : / (e.g. --label "
		            "env=prod)", arg);
		return false;
	}
	o->push_labels[o->npush_labels++] = arg;
	return true;
}

static bool is_option_val(int val)
{
	const struct option *lo;

	for (lo = long_opts; lo->name != NULL; lo++)
		if (lo->val == val)
			return true;
	return false;
}

/* "-r/--rate" for an option value getopt reported. */
static void option_name(int val, char *buf, size_t len)
{
	const struct option *lo;

	for (lo = long_opts; lo->name != NULL; lo++) {
		if (lo->val != val)
			continue;
		if (val < 256)
			snprintf(buf, len, "-%c/--%s", val, lo->name);
		else
			snprintf(buf, len, "--%s", lo->name);
		return;
	}
	snprintf(buf, len, "-%c", val);
}

/* How many long options start with the text of `arg` (before any '='). */
static int long_prefix_matches(const char *arg)
{
	size_t n = strcspn(arg, "=");
	const struct option *lo;
	int matches = 0;

	for (lo = long_opts; lo->name != NULL; lo++)
		if (strncmp(lo->name, arg, n) == 0)
			matches++;
	return matches;
}

/* getopt returned '?'.  optopt says which case: 0 = unknown or ambiguous
 * long option (its text is argv[optind - 1]); a known option's value = a
 * long option given "=VALUE" although it takes none; anything else = an
 * unknown short option. */
static void report_bad_option(char **argv)
{
	char name[64];

	if (optopt == 0) {
		const char *text = argv[optind - 1];

		if (strncmp(text, "--", 2) == 0 &&
		    long_prefix_matches(text + 2) > 1)
			usage_error("ambiguous option '%.*s'; spell it out "
			            "(see pytop --help)",
			            (int)strcspn(text, "="), text);
		else
			usage_error("unknown option '%s'; see pytop --help",
			            text);
		return;
	}
	if (is_option_val(optopt)) {
		option_name(optopt, name, sizeof(name));
		usage_error("option %s takes no value; see pytop --help", name);
		return;
	}
	usage_error("unknown option '-%c'; see pytop --help", optopt);
}

static void set_defaults(struct options *o)
{
	const char *no_color = getenv("NO_COLOR");

	memset(o, 0, sizeof(*o));
	o->rate_hz = PYTOP_DEFAULT_RATE_HZ;
	o->delay_s = 1.0;
	o->push_every_s = PYTOP_DEFAULT_PUSH_EVERY_S;
	o->from_s = -1.0;
	o->to_s = -1.0;
	/* https://no-color.org: set and non-empty disables colour. */
	o->no_color = no_color != NULL && no_color[0] != '\0';
}

/* Apply one option getopt returned.  -1 = error (already reported),
 * 0 = go on, 1 = stop: --help or --version was printed. */
static int apply_option(int c, char **argv, struct options *o)
{
	char name[64];

	switch (c) {
	case 'p': return set_pid(optarg, o) ? 0 : -1;
	case 'r': return set_rate(optarg, o) ? 0 : -1;
	case 'd': return set_delay(optarg, o) ? 0 : -1;
	case 'n': return set_iterations(optarg, o) ? 0 : -1;
	case OPT_DURATION: return set_duration(optarg, o) ? 0 : -1;
	case 'b': o->batch = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_IDLE: o->idle = true; return 0;
	case OPT_NO_SPLIT: o->no_split = true; return 0;
	case 's': o->subprocesses = true; return 0;
	case OPT_NO_COLOR: o->no_color = true; return 0;
	case OPT_DEMO: o->demo = true; return 0;
	case OPT_NATIVE: o->native = true; return 0;
	case OPT_NATIVE_ALL: o->native = o->native_all = true; return 0;
	/* Perf events became --native's default way: the old opt-in is
	 * kept as a plain --native, so that scripts keep working. */
	case OPT_NATIVE_PERF: o->native = true; return 0;
	case OPT_NATIVE_PTRACE: o->native = o->native_ptrace = true; return 0;
	case OPT_LOCALS: o->locals = true; return 0;
	case OPT_TREE: o->tree = true; return 0;
	case OPT_STACKS: o->stacks = true; return 0;
	case 'o': o->output = optarg; return 0;
	case OPT_FORMAT: o->format = optarg; return 0;
	case OPT_EXPORT_EVERY: return set_export_every(optarg, o) ? 0 : -1;
	case OPT_FORCE: o->force = true; return 0;
	case OPT_FROM: return set_time("--from", optarg, &o->from_s);
	case OPT_TO: return set_time("--to", optarg, &o->to_s);
	case OPT_PUSH: o->push_url = optarg; return 0;
	case OPT_PUSH_EVERY: return set_push_every(optarg, o) ? 0 : -1;
	case OPT_APP: return set_app(optarg, o) ? 0 : -1;
	case OPT_LABEL: return set_label(optarg, o) ? 0 : -1;
	case 'w': o->record_path = optarg; return 0;
	case 'h': options_print_help(stdout); return 1;
	case 'V': printf("pytop %s\n", PACKAGE_VERSION); return 1;
	case ':':
		option_name(optopt, name, sizeof(name));
		usage_error("option %s needs a value; see pytop --help", name);
		return -1;
	default:
		report_bad_option(argv);
		return -1;
	}
}

/* The target: exactly one of -p, a command, --demo. */
static bool check_target(const struct options *o)
{
	if (o->pid > 0 && o->command != NULL) {
		usage_error("-p and a command are mutually exclusive; give -p PID "
		            "to attach or -- COMMAND to launch, not both");
		return false;
	}
	if (o->demo && (o->pid > 0 || o->command != NULL)) {
		usage_error("--demo runs its own program; drop -p or the command, "
		            "or drop --demo");
		return false;
	}
	if (o->pid == 0 && o->command == NULL && !o->demo) {
		usage_error("nothing to profile: give -p PID, a command after --, "
		            "or --demo (see pytop --help)");
		return false;
	}
	return true;
}

/* `pytop dump`: one look at a running process, so it needs -p; --locals
 * is its alone. */
static bool check_dump(const struct options *o)
{
	if (!o->dump) {
		if (o->locals)
			usage_error("--locals belongs to pytop dump; use pytop dump "
			            "--locals -p PID");
		return !o->locals;
	}
	if (o->command != NULL || o->demo || o->pid == 0) {
		usage_error("the dump command needs a running process; give it -p PID "
		            "(not a command or --demo)");
		return false;
	}
	if (o->batch || o->iterations != 0 || o->duration_s != 0 || o->idle || o->no_split ||
	    o->rate_hz != PYTOP_DEFAULT_RATE_HZ || o->delay_s != 1.0) {
		usage_error("the dump command takes one look: -b, -n, -d, -r, --duration, "
		            "--idle and --no-split do not apply to it; drop them");
		return false;
	}
	return true;
}

/* --tree is batch text's, --stacks the JSON line's (the TUI has T). */
static bool check_tree_stacks(const struct options *o)
{
	if (o->tree && (!o->batch || o->json)) {
		usage_error(o->json ? "--tree is for the batch text; with --json "
		                      "use --stacks"
		                    : "--tree needs --batch (the TUI shows the "
		                      "call tree with the T key)");
		return false;
	}
	if (o->stacks && !o->json) {
		usage_error("--stacks needs --batch --json (text output has "
		            "--tree)");
		return false;
	}
	return true;
}

/* -o and --format go together; the other export options need them. */
static bool check_export(const struct options *o)
{
	/* --force also lets -w replace a recording. */
	bool any = o->output != NULL || o->format != NULL ||
	           o->export_every_s > 0 || (o->force && o->record_path == NULL);

	if (o->dump && any) {
		usage_error("the dump command does not export; drop -o, --format, "
		            "--export-every and --force");
		return false;
	}
	if (any && o->format == NULL) {
		usage_error("-o/--output, --export-every and --force need --format "
		            "FMT; add it (see pytop --help for the formats; to record "
		            "the live view use -w FILE)");
		return false;
	}
	if (any && o->output == NULL) {
		usage_error("--format needs -o FILE, the file the profile is "
		            "written to; add it");
		return false;
	}
	return true;
}

/* --push-every, --app and --label qualify --push; dump does not push. */
static bool check_push(const struct options *o)
{
	bool any = o->push_url != NULL || o->push_app != NULL ||
	           o->npush_labels > 0 ||
	           o->push_every_s != PYTOP_DEFAULT_PUSH_EVERY_S;

	if (o->dump && any) {
		usage_error("the dump command does not push; drop --push, "
		            "--push-every, --app and --label");
		return false;
	}
	if (any && o->push_url == NULL) {
		usage_error("--push-every, --app and --label need --push URL, the "
		            "server to push to; add it");
		return false;
	}
	return true;
}

/* `pytop record`: no view, so none of the view's options.  Its -o is
 * the recording's file, unless --format makes the run a one-step export
 * (-o is then the export's, and -w may record as well); the live view
 * records with -w FILE. */
static bool check_record(struct options *o)
{
	if (o->dump && o->record_path != NULL) {
		usage_error("the dump command does not record; drop -w");
		return false;
	}
	if (!o->record)
		return true;
	if (o->batch || o->json || o->iterations != 0 || o->delay_s != 1.0) {
		usage_error("pytop record shows nothing: -b, --json, -n and -d do not "
		            "apply to it; drop them (--duration limits the recording)");
		return false;
	}
	if (o->format != NULL)
		return true;
	if (o->record_path != NULL) {
		usage_error("pytop record writes to -o FILE; drop -w/--record");
		return false;
	}
	if (o->output == NULL) {
		usage_error("pytop record needs the recording's file: give -o FILE "
		            "(e.g. -o run.pytop), or --format FMT -o FILE to export");
		return false;
	}
	o->record_path = o->output; /* the recording's, not an export's */
	o->output = NULL;
	return true;
}

/* pytop export FILE --format FMT [-o OUT] [--from T] [--to T] [--force]:
 * the one argument is the recording; nothing is sampled. */
static bool check_export_recording(struct options *o)
{
	bool sampling = o->pid != 0 || o->batch || o->json || o->record_path != NULL ||
	                o->export_every_s > 0 || o->push_url != NULL || o->demo;

	if (!o->export_recording) {
		if (!o->replay && (o->from_s >= 0 || o->to_s >= 0)) {
			usage_error("--from and --to select a window of a recording: use them "
			            "with pytop export FILE or pytop replay FILE");
			return false;
		}
		return true;
	}
	if (o->command == NULL || o->command[0] == NULL || o->command[1] != NULL) {
		usage_error("pytop export needs exactly one recording: pytop export FILE "
		            "--format FMT [-o OUT]");
		return false;
	}
	if (sampling) {
		usage_error("pytop export reads a recording and samples nothing: only "
		            "--format, -o, --from, --to and --force apply; drop the others");
		return false;
	}
	if (o->format == NULL) {
		usage_error("pytop export needs --format FMT; add it (see pytop --help "
		            "for the formats)");
		return false;
	}
	if (o->from_s >= 0 && o->to_s >= 0 && o->from_s >= o->to_s) {
		usage_error("--from %g is not before --to %g; give a window with --from "
		            "< --to", o->from_s, o->to_s);
		return false;
	}
	o->export_input = o->command[0];
	o->command = NULL;
	return true;
}

/* pytop replay [-b [--json [--stacks] | --tree]] [--from T] [--to T] FILE:
 * the one argument is the recording; nothing is sampled, so no option
 * of a live session applies. */
static bool check_replay(struct options *o, bool stdout_is_tty)
{
	bool live = o->pid != 0 || o->record_path != NULL || o->output != NULL ||
	            o->format != NULL || o->export_every_s > 0 || o->force ||
	            o->push_url != NULL || o->demo || o->idle || o->no_split ||
	            o->native || o->subprocesses || o->rate_hz != PYTOP_DEFAULT_RATE_HZ ||
	            o->delay_s != 1.0 || o->iterations != 0 || o->duration_s != 0 ||
	            o->npush_labels != 0 || o->push_app != NULL ||
	            o->push_every_s != PYTOP_DEFAULT_PUSH_EVERY_S;

	if (o->command == NULL || o->command[0] == NULL || o->command[1] != NULL) {
		usage_error("pytop replay needs exactly one recording: pytop replay [-b] FILE");
		return false;
	}
	if (live) {
		usage_error("pytop replay shows a recording as it was recorded: only -b, "
		            "--json, --tree, --stacks, --from, --to and --no-color apply; drop "
		            "the others");
		return false;
	}
	if (o->from_s >= 0 && o->to_s >= 0 && o->from_s >= o->to_s) {
		usage_error("--from %g is not before --to %g; give a window with --from "
		            "< --to", o->from_s, o->to_s);
		return false;
	}
	if (o->json && !o->batch) {
		usage_error("--json needs --batch (JSON goes to stdout one object "
		            "per refresh)");
		return false;
	}
	if (!stdout_is_tty && !o->batch) {
		o->batch = true;
		usage_error("stdout is not a terminal; using --batch output");
	}
	o->replay_input = o->command[0];
	o->command = NULL;
	return check_tree_stacks(o);
}

enum options_result options_parse(int argc, char **argv, bool stdout_is_tty,
                                  struct options *out)
{
	int c;
	bool dump = argc > 1 && strcmp(argv[1], "dump") == 0;
	bool record = argc > 1 && strcmp(argv[1], "record") == 0;
	bool export_rec = argc > 1 && strcmp(argv[1], "export") == 0;
	bool replay = argc > 1 && strcmp(argv[1], "replay") == 0;
	bool file_first = export_rec || replay;

	set_defaults(out);
	if (dump || record || file_first) { /* getopt then takes it for the program name */
		out->dump = dump;
		out->record = record;
		out->export_recording = export_rec;
		out->replay = replay;
		argc--;
		argv++;
	}
	opterr = 0;  /* we print our own one-line errors */
	optind = 0;  /* full re-initialisation, so a second call works (tests) */
	/* export's options may follow its FILE (no command to protect from
	 * them): without the leading '+', getopt permutes. */
	while ((c = getopt_long(argc, argv, file_first ? short_opts + 1 : short_opts,
	                        long_opts, NULL)) != -1) {
		int r = apply_option(c, argv, out);

		if (r < 0)
			return OPTIONS_ERROR;
		if (r > 0)
			return OPTIONS_EXIT_OK;
	}
	if (optind < argc)
		out->command = &argv[optind]; /* borrowed; argv[argc] is NULL */
	if (!check_export_recording(out))
		return OPTIONS_ERROR;
	if (out->export_recording)
		return OPTIONS_OK;
	if (out->replay)
		return check_replay(out, stdout_is_tty) ? OPTIONS_OK : OPTIONS_ERROR;
	if (!check_dump(out) || !check_record(out) || !check_export(out) || !check_push(out))
		return OPTIONS_ERROR;
	if (out->dump)
		return OPTIONS_OK;
	if (!check_target(out))
		return OPTIONS_ERROR;
	if (out->record)
		return OPTIONS_OK;
	if (out->json && !out->batch) {
		usage_error("--json needs --batch (JSON goes to stdout one object "
		            "per refresh)");
		return OPTIONS_ERROR;
	}
	if (!stdout_is_tty && !out->batch) {
		out->batch = true;
		usage_error("stdout is not a terminal; using --batch output");
	}
	return check_tree_stacks(out) ? OPTIONS_OK : OPTIONS_ERROR;
}

void options_print_help(FILE *out)
{
	fprintf(out,
"Usage: pytop [OPTIONS] -p PID\n"
"       pytop [OPTIONS] [--] COMMAND [ARGS...]\n"
"       pytop [OPTIONS] --demo\n"
"       pytop [OPTIONS] --format FMT -o FILE (-p PID | [--] COMMAND...)\n"
"       pytop dump [--json] [--locals] [--native] [-s] -p PID\n"
"       pytop record -o FILE [--force] [SAMPLING OPTIONS] [--duration S]\n"
"                    (-p PID | [--] COMMAND [ARGS...])\n"
"       pytop export FILE --format FMT [-o OUT] [--from T] [--to T] [--force]\n"
"       pytop replay [-b [--json [--stacks] | --tree]] [--from T] [--to T] FILE\n"
"\n"
"Live sampling profiler for CPython: shows which functions and lines a\n"
"Python process spends its time in, without stopping or changing it.\n"
"\n"
"Target (exactly one):\n"
"  -p, --pid PID          attach to the running Python process PID\n"
"  [--] COMMAND [ARGS...] launch COMMAND and profile it from its first\n"
"                         bytecode; pytop exits with COMMAND's exit status.\n"
"                         Its output goes to stderr with -b, else to a new\n"
"                         file $TMPDIR/pytop-PID.XXXXXX/output, named at exit\n"
"      --demo             launch the bundled demo program (pytop_demo.py)\n"
"\n"
"Sampling:\n"
"  -r, --rate HZ          samples per second, 1 to %d (default %d)\n"
"      --idle             also count threads that are not running\n"
"                         (wall-clock mode; default: only runnable threads,\n"
"                         on a CPU or waiting for one: CPU wait)\n"
"      --no-split         do not split time into Python/native/system/CPU\n"
"                         wait/GIL wait or charge memory growth and faults\n"
"                         to lines (their columns are hidden, their JSON\n"
"                         fields 0; for measuring what they cost)\n"
"      --native           also sample native (C) stacks; C functions appear\n"
"                         under the Python line that called them. Works on\n"
"                         non-Python processes too. Nothing is stopped: a\n"
"                         perf event on every thread (and the threads it\n"
"                         starts) has the kernel copy its registers and\n"
"                         stack top every 100 us of its CPU time, the\n"
"                         newest taken at most 150 us of it before its\n"
"                         Python stack; a runnable thread is sampled once\n"
"                         per sampling period of the CPU time it ran.\n"
"                         Where perf events are refused (perf_event_paranoid,\n"
"                         a container's seccomp profile), ptrace as\n"
"                         --native-ptrace (the header says which)\n"
"      --native-all       --native, showing the interpreter's own frames too\n"
"                         (key n toggles them)\n"
"      --native-ptrace    --native by ptrace: each sampled thread is stopped\n"
"                         for a moment and unwound. Stop pytop with Ctrl-Z\n"
"                         or kill -TSTP, not -STOP: a SIGSTOP may hold one\n"
"                         sample's threads until SIGCONT\n"
"      --native-perf      the same as --native (perf events are its default)\n"
"  -s, --subprocesses     also follow the target's child processes and their\n"
"                         children as they start and exit; Python ones are\n"
"                         sampled, others listed\n"
"\n"
"Output:\n"
"  -d, --delay SECONDS    refresh interval, fractions allowed (default 1)\n"
"  -b, --batch            no TUI: print a text snapshot every refresh, like\n"
"                         top -b (default when stdout is not a terminal)\n"
"  -n, --iterations N     stop after N refreshes (default: no limit)\n"
"      --duration SECONDS stop after SECONDS (default: no limit)\n"
"      --json             with --batch: one JSON object per refresh on\n"
"                         stdout (JSON Lines)\n"
"      --tree             with --batch: print the call tree too, indented,\n"
"                         with the function table's columns\n"
"      --stacks           with --json: add every stack (frames and stacks\n"
"                         arrays: man pytop, JSON)\n"
"      --no-color         no colours (default: colour unless NO_COLOR is set)\n"
"\n"
"Exports (man pytop: EXPORTS):\n"
"      --format FMT       collapsed, speedscope, pprof or flamegraph (SVG);\n"
"                         chrome (trace events) from a recording only\n"
"  -o, --output FILE      write the profile to FILE when pytop ends; FILE is\n"
"                         created at start, never over an existing file or\n"
"                         through a symlink. SIGUSR1 and the key E write it\n"
"                         now, to FILE with a time stamp inserted\n"
"      --export-every SECONDS  also write a time-stamped file every SECONDS\n"
"      --force            let -o or -w replace an existing regular file\n"
"                         (a symlink there is never followed)\n"
"\n"
"Push to a continuous-profiling server (man pytop: PUSH):\n"
"      --push URL         every period, POST the period's profile (pprof) to\n"
"                         the Pyroscope-compatible server at URL (http or\n"
"                         https; pytop adds /ingest), from its own thread;\n"
"                         the header and the JSON's \"push\" say how it goes\n"
"      --push-every SECONDS  the period, 1 or more (default 10; it ends with\n"
"                         the first refresh after SECONDS, see -d)\n"
"      --app NAME         the application name (default: the target's\n"
"                         command name)\n"
"      --label KEY=VALUE  a label of every pushed profile (repeatable)\n"
"\n"
"Recording (man pytop: RECORDINGS):\n"
"  -w, --record FILE      also record the session into FILE (SQLite, see\n"
"                         pytop record) while you watch\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show the version and exit\n"
"\n"
"pytop dump -p PID: print every thread's current stack once and exit: its\n"
"ID, threading.Thread name, OS name and state (running with or without the\n"
"GIL, waiting for the GIL, idle), each frame as function (file:line) with\n"
"its source line, innermost last as in a traceback.  Without --native the\n"
"target is never stopped.\n"
"      --json             one JSON object instead of text (man pytop: DUMP)\n"
"      --native           merge each thread's C frames into its stack as the\n"
"                         live view does (each thread stopped only while its\n"
"                         registers and stack top are copied; a program\n"
"                         without Python too); --native-all: with the\n"
"                         interpreter's own frames\n"
"      --locals           each frame's arguments and local variables, read\n"
"                         from memory without running code in the target\n"
"  -s                     the target's child processes too, and theirs\n"
"\n"
"pytop record -o FILE: record without a view until the target ends,\n"
"--duration passes, or SIGINT/SIGTERM; the exit status is the live view's.\n"
"FILE is a new SQLite database (WAL mode, committed twice a second, so a\n"
"killed pytop leaves what was committed): samples per 100 ms bucket,\n"
"stack, thread and process with their split, the gauges per bucket, the\n"
"threads' and processes' lifetimes, the options, command line and Python\n"
"version (man pytop: RECORDINGS has the schema).  An existing FILE is\n"
"never replaced without --force.\n"
"  -o, --output FILE      the recording's file (pytop record only)\n"
"\n"
"pytop export FILE --format FMT: write a recording (or a window of it) in an\n"
"export format (see Exports); FILE is read from a private copy, never\n"
"changed, and a recording whose pytop was killed is read whole.\n"
"  -o, --output OUT       the export's file, created as above (default:\n"
"                         stdout; pprof, which is binary, not to a terminal)\n"
"      --from T, --to T   only the 100 ms buckets that start at or after\n"
"                         --from and before --to, in seconds from the\n"
"                         recording's start, fractions allowed (default:\n"
"                         all of it)\n"
"\n"
"pytop replay FILE: show a recording in the TUI (every screen, a time bar;\n"
"keys: Space play/pause, Left/Right or , . step, Home/End start/end, [ ]\n"
"window from/to at the position, c clear) or with -b print the snapshots\n"
"the live -b printed, one per recorded refresh (--json: with \"replay\").\n"
"FILE is read from a private copy; figures it does not hold show as ? (JSON\n"
"null).  --from T, --to T: only that window of it.\n"
"\n"
"Keys: arrows PgUp PgDn Home End move; < > F6 sort column; l functions/lines;\n"
"Enter on a function: its source lines (Esc or Left: back); t threads\n"
"(Enter: that thread only, a: all); P or F5 processes with -s (Enter: that\n"
"process only, a: all); T call tree (Right/Left or +/- open/close, e hottest\n"
"path, i callers, Enter: source); G flame graph (arrows select, Enter zooms,\n"
"Esc out); space or p freeze; r reset; E export (-o);\n"
"n (--native) interpreter frames on/off; / filter; ? or F1 help; q or F10 quit.\n"
"\n"
"Attaching needs the same user as the target, root, or CAP_SYS_PTRACE\n"
"(see the kernel.yama.ptrace_scope sysctl); --native also needs perf events\n"
"(root, CAP_PERFMON or kernel.perf_event_paranoid <= 2) or else ptrace\n"
"attach (--native-ptrace always), which Yama's ptrace_scope 2 or 3 refuses\n"
"even to the parent.\n"
"Exit status: launch mode: the command's (--demo: 0 when you quit it);\n"
"otherwise 0; 1 on errors; 2 on\nusage errors.  See man pytop.\n",
	        PYTOP_MAX_RATE_HZ, PYTOP_DEFAULT_RATE_HZ);
}
