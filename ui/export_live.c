/* export_live.c - a live session's exports: at the end, on SIGUSR1, every
 * period, on a key (export_live.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_live.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export_file.h"

/* Set by SIGUSR1; a handler can only reach a global. */
static volatile sig_atomic_t export_asked;

static void on_sigusr1(int sig)
{
	(void)sig;
	export_asked = 1;
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int export_live_open(struct export_live *el, const struct options *o,
                     char *err, size_t errlen)
{
	struct sigaction sa;

	memset(el, 0, sizeof *el);
	if (o->output == NULL)
		return 0;
	el->format = export_format_named(o->format);
	if (el->format == EXPORT_NONE) {
		snprintf(err, errlen, "unknown export format '%s'; use one of: %s",
		         o->format, export_format_list());
		return -1;
	}
	if (el->format == EXPORT_CHROME) {
		el->format = EXPORT_NONE;
		snprintf(err, errlen, "the chrome format is a timeline of a recording's 100 ms "
		         "buckets, not of a live profile; record with -w FILE (or pytop record "
		         "-o FILE), then run pytop export FILE --format chrome");
		return -1;
	}
	el->output = o->output;
	el->final = export_file_create(o->output, o->force, err, errlen);
	if (el->final == NULL) {
		el->format = EXPORT_NONE;
		return -1;
	}
	el->every_s = o->export_every_s;
	el->next_every = mono_now() + el->every_s;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = SA_RESTART; /* a request must not break a read */
	export_asked = 0;
	sigaction(SIGUSR1, &sa, NULL);
	return 0;
}

bool export_live_on(const struct export_live *el)
{
	return el->format != EXPORT_NONE;
}

bool export_live_due(struct export_live *el, double now_mono)
{
	bool due = false;

	if (!export_live_on(el))
		return false;
	if (export_asked) {
		export_asked = 0;
		due = true;
	}
	if (el->every_s > 0 && now_mono >= el->next_every) {
		/* A late loop skips missed periods rather than bunching them. */
		while (el->next_every <= now_mono)
			el->next_every += el->every_s;
		due = true;
	}
	return due;
}

/* Write s to f (named path), close it, and say how it went. */
static int write_and_close(struct export_live *el, FILE *f, const char *path,
                           const struct snapshot *s)
{
	struct export_meta m;
	char err[sizeof el->said];
	double t0 = mono_now();
	int rc;

	export_meta_of(s, &m);
	rc = export_write(f, el->format, s, &m);
	if (export_file_close(f, path, rc != 0, err, sizeof err) != 0) {
		snprintf(el->said, sizeof el->said, "%s", err);
		return -1;
	}
	snprintf(el->said, sizeof el->said, "wrote %s (%s, %zu stacks, %.0f ms)",
	         path, export_format_name(el->format), s->nstacks,
	         (mono_now() - t0) * 1e3);
	return 0;
}

int export_live_stamped(struct export_live *el, const struct snapshot *s)
{
	char path[4096], err[sizeof el->said];
	FILE *f;

	if (!export_live_on(el))
		return -1;
	f = export_file_create_stamped(el->output, time(NULL), path, sizeof path,
	                               err, sizeof err);
	if (f == NULL) {
		snprintf(el->said, sizeof el->said, "%s", err);
		return -1;
	}
	return write_and_close(el, f, path, s);
}

int export_live_final(struct export_live *el, const struct snapshot *s)
{
	FILE *f = el->final;

	if (f == NULL)
		return 0;
	el->final = NULL;
	return write_and_close(el, f, el->output, s);
}

void export_live_close(struct export_live *el)
{
	if (el->final != NULL) {
		fclose(el->final);
		unlink(el->output);
		el->final = NULL;
	}
	if (el->format != EXPORT_NONE)
		signal(SIGUSR1, SIG_DFL);
	el->format = EXPORT_NONE;
}
