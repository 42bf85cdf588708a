/* fuzz_options.c - libFuzzer target for the command-line parser
 * (src/options.c).
 *
 * Input: argv[1..] as NUL-separated strings (argv[0] is "pytop"); the
 * first byte, when odd, says stdout is a terminal.  The parser's messages
 * go to /dev/null.  A parse that succeeds must describe exactly one target
 * with values inside their documented ranges (`pytop dump` takes --json
 * without -b, and only a PID; `pytop export` and `pytop replay` a
 * recording and no target): a violation aborts. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

/* More arguments than any real command line needs; bounds the work. */
#define OPT_FUZZ_MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int null = open("/dev/null", O_WRONLY);

	(void)argc;
	(void)argv;
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	/* stderr stays: libFuzzer and the sanitizers report there.  The
	 * parser's messages are silenced per run instead, see below. */
	return 0;
}

static void check(const struct options *o)
{
	int targets = (o->pid > 0) + (o->command != NULL) + o->demo;

	/* `pytop export FILE` reads a recording, not a process. */
	if (o->export_recording) {
		if (targets != 0 || o->export_input == NULL || o->format == NULL ||
		    (o->from_s >= 0 && o->to_s >= 0 && o->from_s > o->to_s)) {
			fprintf(stderr, "options_parse accepted an inconsistent export\n");
			abort();
		}
		return;
	}
	/* `pytop replay FILE` too, and takes nothing of a live session. */
	if (o->replay) {
		if (targets != 0 || o->replay_input == NULL || o->output != NULL ||
		    o->format != NULL || o->record_path != NULL || o->push_url != NULL ||
		    (o->json && !o->batch) ||
		    (o->from_s >= 0 && o->to_s >= 0 && o->from_s >= o->to_s)) {
			fprintf(stderr, "options_parse accepted an inconsistent replay\n");
			abort();
		}
		return;
	}
	if (targets != 1 || o->pid < 0 || o->rate_hz < 1 ||
	    o->rate_hz > PYTOP_MAX_RATE_HZ || !(o->delay_s > 0) ||
	    o->iterations < 0 || !(o->duration_s >= 0) ||
	    (o->json && !o->batch && !o->dump) || (o->native_all && !o->native) ||
	    (o->dump && o->pid <= 0) || (o->locals && !o->dump) ||
	    (o->command != NULL && o->command[0] == NULL)) {
		fprintf(stderr, "options_parse accepted an inconsistent command line\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[OPT_FUZZ_MAX_ARGS + 2];
	int argc = 0, saved_err;
	struct options o;
	enum options_result r;

	if (size < 1)
		return 0;
	/* Own, NUL-terminated copy: options_parse may keep pointers into it. */
	buf = malloc(size);
	if (buf == NULL)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	argv[argc++] = "pytop";
	for (size_t at = 0; at < size - 1 && argc <= OPT_FUZZ_MAX_ARGS;
	     at += strlen(buf + at) + 1)
		argv[argc++] = buf + at;
	argv[argc] = NULL;

	fflush(stderr);
	saved_err = dup(STDERR_FILENO);
	if (saved_err >= 0)
		dup2(STDOUT_FILENO, STDERR_FILENO); /* /dev/null */
	r = options_parse(argc, argv, data[0] & 1, &o);
	fflush(stderr);
	if (saved_err >= 0) {
		dup2(saved_err, STDERR_FILENO);
		close(saved_err);
	}
	if (r == OPTIONS_OK)
		check(&o);
	free(buf);
	return 0;
}
