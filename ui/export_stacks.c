/* export_stacks.c - a snapshot's stack table as the writers read it
 * (export_stacks.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "export_stacks.h"

#include <stdlib.h>

bool export_node_ok(const struct snapshot *s, uint32_t n)
{
	if (n == 0 || n >= s->nstack_nodes || s->stack_nodes == NULL)
		return false;
	/* Parents come before children, so the walk ends at the root. */
	while (n != 0) {
		const struct snap_stack_node *nd = &s->stack_nodes[n];

		if (nd->frame >= s->nstack_frames || nd->parent >= n)
			return false;
		n = nd->parent;
	}
	return true;
}

bool *export_nodes_ok(const struct snapshot *s)
{
	bool *ok = calloc(s->nstack_nodes ? s->nstack_nodes : 1, sizeof *ok);

	if (ok == NULL)
		return NULL;
	/* Parents first: a node is usable when its parent is (or is the
	 * root) and comes before it. */
	for (size_t i = 1; i < s->nstack_nodes; i++) {
		const struct snap_stack_node *nd = &s->stack_nodes[i];

		ok[i] = nd->frame < s->nstack_frames && nd->parent < i &&
		        (nd->parent == 0 || ok[nd->parent]);
	}
	return ok;
}

size_t export_node_path(const struct snapshot *s, uint32_t n,
                        uint32_t *path, size_t cap)
{
	size_t depth = 0;

	if (!export_node_ok(s, n))
		return 0;
	for (uint32_t i = n; i != 0; i = s->stack_nodes[i].parent)
		depth++;
	if (depth > cap)
		return 0;
	for (size_t k = depth; n != 0; n = s->stack_nodes[n].parent)
		path[--k] = s->stack_nodes[n].frame;
	return depth;
}

size_t export_max_depth(const struct snapshot *s)
{
	size_t *depth, max = 0;

	if (s->nstack_nodes == 0)
		return 0;
	depth = calloc(s->nstack_nodes, sizeof *depth);
	if (depth == NULL)
		return 0;
	/* Parents first: one pass; an out-of-order parent counts as none
	 * (export_node_ok refuses that node anyway). */
	for (size_t i = 1; i < s->nstack_nodes; i++) {
		uint32_t p = s->stack_nodes[i].parent;

		depth[i] = (p < i ? depth[p] : 0) + 1;
		if (depth[i] > max)
			max = depth[i];
	}
	free(depth);
	return max;
}

uint64_t *export_node_samples(const struct snapshot *s)
{
	uint64_t *own = calloc(s->nstack_nodes ? s->nstack_nodes : 1, sizeof *own);
	bool *ok = export_nodes_ok(s);

	if (own == NULL || ok == NULL) {
		free(own);
		free(ok);
		return NULL;
	}
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct snap_stack *st = &s->stacks[i];

		if (st->node < s->nstack_nodes && ok[st->node])
			own[st->node] += st->samples;
	}
	free(ok);
	return own;
}

int export_put_label(FILE *out, const struct snap_frame *f, export_put_fn put)
{
	char num[24];
	const char *where = f->file != NULL && f->file[0] != '\0' ? f->file
	                    : f->module != NULL ? f->module : "";

	if (put(out, f->name != NULL ? f->name : "?") < 0)
		return -1;
	if (f->other || where[0] == '\0')
		return 0;
	if (fputs(" (", out) < 0 || put(out, where) < 0)
		return -1;
	if (f->line > 0) {
		snprintf(num, sizeof num, ":%d", f->line);
		if (fputs(num, out) < 0)
			return -1;
	}
	return fputc(')', out) < 0 ? -1 : 0;
}
