/* export_collapsed.c - "collapsed" stacks (flamegraph.pl, inferno,
 * Pyroscope's folded format): one line per stack, its frames outermost
 * first joined by ';', a space, its samples.  Threads are merged: the
 * same stack in two threads is one line with their sum, so the counts
 * add up to the snapshot's samples. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export.h"

#include <stdlib.h>

#include "export_stacks.h"

/* ';' separates frames and a newline ends the stack: escaped as \xNN
 * (the escape the names already use), with every other control byte. */
static int put_escaped(FILE *out, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		int rc = *p == ';' || *p < 0x20 || *p == 0x7f
		         ? fprintf(out, "\\x%02x", *p) : fputc(*p, out);

		if (rc < 0)
			return -1;
	}
	return 0;
}

static int put_stack(FILE *out, const struct snapshot *s, const uint32_t *path,
                     size_t depth, uint64_t samples)
{
	for (size_t k = 0; k < depth; k++) {
		if (k > 0 && fputc(';', out) < 0)
			return -1;
		if (export_put_label(out, &s->stack_frames[path[k]], put_escaped) < 0)
			return -1;
	}
	return fprintf(out, " %llu\n", (unsigned long long)samples) < 0 ? -1 : 0;
}

int export_collapsed(FILE *out, const struct snapshot *s,
                     const struct export_meta *m)
{
	size_t cap = export_max_depth(s);
	uint64_t *own = export_node_samples(s);
	uint32_t *path = malloc((cap ? cap : 1) * sizeof *path);
	int rc = own != NULL && path != NULL ? 0 : -1;

	(void)m;
	for (uint32_t n = 1; rc == 0 && n < s->nstack_nodes; n++) {
		size_t depth;

		if (own[n] == 0)
			continue;
		depth = export_node_path(s, n, path, cap);
		if (depth > 0)
			rc = put_stack(out, s, path, depth, own[n]);
	}
	free(own);
	free(path);
	return rc;
}
