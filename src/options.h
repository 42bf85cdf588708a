/* options.h - the command line, parsed once into a const struct options
 * that is passed to every stage's constructor (no global options). */
#ifndef PYTOP_OPTIONS_H
#define PYTOP_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define PYTOP_DEFAULT_RATE_HZ 1000
#define PYTOP_MAX_RATE_HZ 10000
#define PYTOP_MAX_PUSH_LABELS 16
#define PYTOP_DEFAULT_PUSH_EVERY_S 10.0

struct options {
	pid_t pid;          /* attach mode: > 0 */
	char **command;     /* launch mode: argv of the target, NULL-terminated
	                       (borrowed from main's argv) */
	bool demo;          /* --demo: launch the bundled demo program */
	int rate_hz;        /* -r */
	double delay_s;     /* -d: refresh interval */
	bool batch;         /* -b */
	long iterations;    /* -n: 0 = unlimited */
	double duration_s;  /* --duration: 0 = unlimited */
	bool json;          /* --json (requires batch) */
	bool tree;          /* --tree: batch text prints the call tree too */
	bool stacks;        /* --stacks: the JSON line carries the stacks */
	bool idle;          /* --idle: also count threads that are off CPU */
	bool no_split;      /* --no-split: no Python/native/system split and no
	                       memory attribution (for measuring their cost) */
	bool subprocesses;  /* -s: follow the target's descendants */
	bool no_color;      /* NO_COLOR set or --no-color */
	bool native;        /* --native: native stacks too */
	bool native_all;    /* --native-all: and the interpreter's plumbing */
	bool native_ptrace; /* --native-ptrace: by ptrace even where perf events
	                       are permitted (the default's fallback) */
	bool dump;          /* `pytop dump`: every thread's stack once, then exit */
	bool locals;        /* --locals (dump): each frame's arguments and locals */
	/* Exports (ui/export.h): the format's name as given (checked by
	 * the views, which know the formats), the file written when pytop
	 * ends (SIGUSR1, --export-every and the e key write time-stamped
	 * siblings of it), and whether an existing file may be replaced. */
	const char *output;       /* -o; NULL = no export */
	const char *format;       /* --format */
	double export_every_s;    /* --export-every: 0 = never */
	bool force;               /* --force */
	/* Push (ui/push_live.h): every push_every_s seconds, the period's
	 * profile as pprof to a Pyroscope-compatible server.  The URL is
	 * checked by the views, which own the HTTP client. */
	const char *push_url;     /* --push; NULL = no push */
	double push_every_s;      /* --push-every (default 10) */
	const char *push_app;     /* --app; NULL = the target's command name */
	const char *push_labels[PYTOP_MAX_PUSH_LABELS]; /* --label K=V */
	int npush_labels;
	/* Recordings (src/record/): `pytop record` runs without a view;
	 * record_path is the file to record into: record's -o, or the live
	 * view's -w/--record; NULL = none (borrowed). */
	bool record;
	const char *record_path;
	/* `pytop export FILE`: export_input is the recording (borrowed);
	 * from_s / to_s its window in seconds from its start, -1 = its start
	 * / its end.  The output is output and format above. */
	bool export_recording;
	const char *export_input;
	double from_s, to_s;
	/* `pytop replay FILE`: replay_input is the recording (borrowed),
	 * shown in the TUI, or with batch printed as the live -b printed
	 * it; from_s / to_s as above. */
	bool replay;
	const char *replay_input;
};

enum options_result {
	OPTIONS_OK = 0,
	OPTIONS_EXIT_OK,    /* --help or --version was printed */
	OPTIONS_ERROR,      /* message already printed to stderr */
};

/* Parse argv into *out.  Prints --help/--version to stdout and one-line
 * errors ("pytop: ...") to stderr.  stdout_is_tty decides the fallback to
 * batch mode when no terminal is available. */
enum options_result options_parse(int argc, char **argv, bool stdout_is_tty,
                                  struct options *out);

/* The --help text (also the source of the man page's synopsis). */
void options_print_help(FILE *out);
#endif
