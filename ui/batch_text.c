/* batch_text.c - one text block per refresh. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "batch_text.h"

#include "batch_tree.h"
#include "header.h"
#include "process_table.h"
#include "profile_table.h"
#include "thread_table.h"

/* Unlimited width: a file or pipe has no edge, so nothing is cut. */
#define NO_LIMIT (-1)

static void print_header(FILE *out, const struct snapshot *s,
                         const struct profile_table *pt)
{
	char line[HEADER_LINE_MAX], health[1][HEADER_LINE_MAX];
	char what[512], note[256];

	header_identity(s, NO_LIMIT, true, line, sizeof line);
	fprintf(out, "%s\n", line);
	header_health(s, NO_LIMIT, true, health, 1);
	fprintf(out, "%s\n", health[0]);
	/* The gauges and the verdict, once /proc has been read: no history
	 * here, so no sparklines. */
	if (header_gauges(s, NULL, NO_LIMIT, true, health, 1) == 1)
		fprintf(out, "%s\n", health[0]);
	/* Rows pytop folded to bound its memory: their counts are in the
	 * "[other]" row, which alone would not say how many it holds. */
	if (s->folded_funcs > 0 || s->folded_lines > 0)
		fprintf(out, "folded into [other]: %llu functions, %llu lines "
		        "(not sampled lately, beyond 2048 held)\n",
		        (unsigned long long)s->folded_funcs,
		        (unsigned long long)s->folded_lines);
	/* Stacks folded likewise (their samples are in "[other stacks]"). */
	if (s->folded_stacks > 0)
		fprintf(out, "folded into [other stacks]: %llu stacks "
		        "(fewest samples, beyond 65536 held, or of code gone)\n",
		        (unsigned long long)s->folded_stacks);
	profile_table_describe(pt, false, what, sizeof what);
	header_exit_note(s, note, sizeof note);
	header_left_right(what, note, NO_LIMIT, true, line, sizeof line);
	fprintf(out, "%s\n", line);
}

/* The title row, then up to max rows. */
static void print_table(FILE *out, const struct table *t, const void **rows,
                        size_t n, size_t max)
{
	char line[4096];

	table_format_title(t, NO_LIMIT, line, sizeof line, NULL);
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < n && i < max; i++) {
		table_format_row(t, rows[i], NO_LIMIT, line, sizeof line, NULL);
		fprintf(out, "%s\n", line);
	}
}

/* The busiest threads: what the TUI's threads screen shows first. */
static void print_threads(FILE *out, const struct snapshot *s)
{
	struct thread_table tt;
	char what[512];

	thread_table_build(&tt, s, NULL, THREAD_COL_CPU, true);
	tt.table.sort_col = -1;
	thread_table_describe(&tt, s, what, sizeof what);
	fprintf(out, "%s\n", what);
	print_table(out, &tt.table, tt.order, tt.n, BATCH_TEXT_THREADS);
	thread_table_free(&tt);
}

/* The followed processes (-s), as a tree. */
static void print_processes(FILE *out, const struct snapshot *s)
{
	struct process_table pt;
	char what[512];

	if (!s->following)
		return;
	process_table_build(&pt, s, NULL, true);
	process_table_describe(s, what, sizeof what);
	fprintf(out, "%s\n", what);
	print_table(out, &pt.table, pt.order, pt.n, pt.n);
	process_table_free(&pt);
}

static int print_block(FILE *out, const struct snapshot *s, bool tree)
{
	struct profile_table pt;

	profile_table_build(&pt, s, PROFILE_FUNCTIONS, NULL, COUNT_OWN,
	                    true);
	pt.table.sort_col = -1; /* the mark is for the TUI's < > keys */
	print_header(out, s, &pt);
	print_table(out, &pt.table, pt.order, pt.n, BATCH_TEXT_ROWS);
	profile_table_free(&pt);
	if (tree)
		batch_tree_print(out, s);
	print_threads(out, s);
	print_processes(out, s);
	fputc('\n', out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

int batch_text_print(FILE *out, const struct snapshot *s)
{
	return print_block(out, s, false);
}

int batch_text_print_tree(FILE *out, const struct snapshot *s)
{
	return print_block(out, s, true);
}
