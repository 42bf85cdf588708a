/* snapshot.c - see snapshot.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "snapshot.h"

#include <stdlib.h>

void snapshot_free(struct snapshot *s)
{
	if (s == NULL)
		return;
	free(s->funcs);
	free(s->lines);
	free(s->threads);
	free(s->processes);
	s->processes = NULL;
	s->nprocesses = 0;
	s->funcs = NULL;
	s->lines = NULL;
	s->threads = NULL;
	s->nfuncs = s->nlines = s->nthreads = 0;
}

const char *snapshot_verdict_word(enum snap_verdict v)
{
	switch (v) {
	case VERDICT_CPU: return "CPU-bound";
	case VERDICT_SYSTEM: return "system-bound";
	case VERDICT_MEMORY: return "memory-bound";
	case VERDICT_WAITING: return "waiting";
	case VERDICT_NONE: break;
	}
	return "";
}
