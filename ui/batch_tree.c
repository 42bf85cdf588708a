/* batch_tree.c - the call tree in batch text (batch_tree.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "batch_tree.h"

#include "call_tree.h"
#include "count_columns.h"
#include "profile_table.h"
#include "tree_table.h"

#define NO_LIMIT (-1)

/* A node is shown, and open, from this many samples. */
static bool big_enough(const struct call_node *n, const void *ctx)
{
	return n->c.total >= *(const uint64_t *)ctx;
}

int batch_tree_print(FILE *out, const struct snapshot *s)
{
	struct call_tree t;
	struct tree_table tt;
	uint64_t min;
	size_t shown = 0;
	char of[256], line[8192], span[64];

	if (!call_tree_build(&t, s)) {
		call_tree_free(&t);
		return -1;
	}
	min = (t.samples * BATCH_TREE_MIN_PERMILLE + 999) / 1000;
	if (min == 0)
		min = 1;
	if (!tree_table_build(&tt, &t, big_enough, &min, NULL, COUNT_TOTAL,
	                      count_hidden(s), true)) {
		call_tree_free(&t);
		return -1;
	}
	tt.table.sort_col = -1; /* the mark is for the TUI's < > keys */
	profile_percent_of(t.samples, s->idle_mode, s->thread_filter,
	                   profile_thread_name(s, s->thread_filter),
	                   s->process_filter, of, sizeof of);
	fprintf(out, "Call tree %s, %s, nodes from %d.%d%%\n",
	        profile_span(s, false, span, sizeof span), of,
	        BATCH_TREE_MIN_PERMILLE / 10, BATCH_TREE_MIN_PERMILLE % 10);
	table_format_title(&tt.table, NO_LIMIT, line, sizeof line, NULL);
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < tt.n; i++) {
		const struct tree_row *r = tree_table_row(&tt, i);

		if (r->n->c.total < min)
			continue;
		table_format_row(&tt.table, r, NO_LIMIT, line, sizeof line, NULL);
		fprintf(out, "%s\n", line);
		shown++;
	}
	if (tt.n > shown)
		fprintf(out, "(%zu smaller nodes not shown)\n", tt.n - shown);
	tree_table_free(&tt);
	call_tree_free(&t);
	return 0;
}
