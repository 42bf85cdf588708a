/* batch_text.c - one text block per refresh. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "batch_text.h"

#include "header.h"
#include "profile_table.h"

/* Unlimited width: a file or pipe has no edge, so nothing is cut. */
#define NO_LIMIT (-1)

static void print_header(FILE *out, const struct snapshot *s,
                         const struct profile_table *pt)
{
	char line[HEADER_LINE_MAX], health[1][HEADER_LINE_MAX];
	char what[512], note[64];

	header_identity(s, NO_LIMIT, true, line, sizeof line);
	fprintf(out, "%s\n", line);
	header_health(s, NO_LIMIT, true, health, 1);
	fprintf(out, "%s\n", health[0]);
	profile_table_describe(pt, false, what, sizeof what);
	header_exit_note(s, note, sizeof note);
	header_left_right(what, note, NO_LIMIT, true, line, sizeof line);
	fprintf(out, "%s\n", line);
}

int batch_text_print(FILE *out, const struct snapshot *s)
{
	struct profile_table pt;
	char line[4096];

	profile_table_build(&pt, s, PROFILE_FUNCTIONS, NULL, PROFILE_COL_OWN,
	                    true);
	pt.table.sort_col = -1; /* the mark is for the TUI's < > keys */
	print_header(out, s, &pt);
	table_format_title(&pt.table, NO_LIMIT, line, sizeof line, NULL);
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < pt.n && i < BATCH_TEXT_ROWS; i++) {
		table_format_row(&pt.table, profile_table_row(&pt, i),
		                 NO_LIMIT, line, sizeof line, NULL);
		fprintf(out, "%s\n", line);
	}
	fputc('\n', out);
	profile_table_free(&pt);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
