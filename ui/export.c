/* export.c - the export formats by name, and the one entry point that
 * picks a writer (export.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export.h"

#include <string.h>
#include <time.h>

typedef int (*export_writer)(FILE *, const struct snapshot *,
                             const struct export_meta *);

static const struct {
	const char *name;
	enum export_format format;
	export_writer write;
} formats[] = {
	{ "collapsed", EXPORT_COLLAPSED, export_collapsed },
	{ "speedscope", EXPORT_SPEEDSCOPE, export_speedscope },
	{ "pprof", EXPORT_PPROF, export_pprof },
	{ "flamegraph", EXPORT_FLAMEGRAPH, export_flamegraph },
	{ "chrome", EXPORT_CHROME, NULL }, /* export_chrome.h */
};

#define NFORMATS (sizeof formats / sizeof formats[0])

enum export_format export_format_named(const char *name)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (strcmp(formats[i].name, name) == 0)
			return formats[i].format;
	return EXPORT_NONE;
}

const char *export_format_name(enum export_format f)
{
	for (size_t i = 0; i < NFORMATS; i++)
		if (formats[i].format == f)
			return formats[i].name;
	return "none";
}

const char *export_format_list(void)
{
	return "collapsed, speedscope, pprof, flamegraph, chrome (from a recording: "
	       "pytop export)";
}

void export_meta_of(const struct snapshot *s, struct export_meta *m)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	m->command = s->command;
	m->python_version = s->python_version;
	m->rate_hz = s->requested_hz;
	m->duration_s = s->elapsed_s;
	m->start_time = (double)now.tv_sec + (double)now.tv_nsec / 1e9 - s->elapsed_s;
}

int export_write(FILE *out, enum export_format f, const struct snapshot *s,
                 const struct export_meta *m)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		if (formats[i].format != f)
			continue;
		if (formats[i].write == NULL)
			return -1;
		if (formats[i].write(out, s, m) != 0)
			return -1;
		return fflush(out) == 0 && !ferror(out) ? 0 : -1;
	}
	return -1;
}
