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
	s->funcs = NULL;
	s->lines = NULL;
	s->threads = NULL;
	s->nfuncs = s->nlines = s->nthreads = 0;
}
