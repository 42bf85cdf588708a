/* test_export_collapsed.c - the collapsed export: one line per stack,
 * outermost frame first, threads merged, counts adding up to the
 * snapshot's samples, and no frame name able to break a line or add a
 * frame. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_fixture.h"
#include "harness.h"
#include "../ui/export.h"

/* Owned: what export_collapsed wrote for s. */
static char *collapsed(const struct snapshot *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct export_meta m;

	cr_assert_not_null(f);
	export_meta_of(s, &m);
	cr_assert_eq(export_write(f, EXPORT_COLLAPSED, s, &m), 0);
	fclose(f);
	return text;
}

/* The count after a line's last blank; the line ends there. */
static uint64_t line_count(char *line)
{
	char *blank = strrchr(line, ' ');

	cr_assert_not_null(blank, "no count on line: %s", line);
	*blank = '\0';
	return strtoull(blank + 1, NULL, 10);
}

Test(collapsed, counts_add_up_to_the_samples)
{
	struct snapshot s = fix_snapshot();
	char *text = collapsed(&s), *save = NULL;
	uint64_t sum = 0;
	int lines = 0;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		sum += line_count(l);
		lines++;
	}
	cr_expect_eq(sum, s.samples, "collapsed counts sum to %" PRIu64 ", the "
	             "snapshot has %" PRIu64 " samples", sum, s.samples);
	/* Five stacks with samples: the one two threads ran is one line. */
	cr_expect_eq(lines, 5, "%d lines for 5 stacks", lines);
	free(text);
	snapshot_free(&s);
}

/* Whether text has exactly this line. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

Test(collapsed, outermost_first_threads_merged)
{
	struct snapshot s = fix_snapshot();
	char *text = collapsed(&s);

	cr_expect(has_line(text, "main (app.py:10);work\\x3ber\\x0ax<&\"> "
	                   "(app.py:20);leaf (lib.py:5) 80"),
	                   "the deep stack of both threads (50 + 30) is missing:\n%s",
	                   text);
	cr_expect(has_line(text, "main (app.py:10);leaf (lib.py:5) 7"), "%s", text);
	cr_expect(has_line(text, "[other stacks] 3"), "%s", text);
	free(text);
	snapshot_free(&s);
}

Test(collapsed, names_cannot_add_frames_or_lines)
{
	struct snapshot s = fix_snapshot();
	char *text = collapsed(&s), *save = NULL;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		int semis = 0;

		for (char *p = l; *p; p++)
			semis += *p == ';';
		line_count(l);
		/* Every line is one of the fixture's stacks: at most 3 deep. */
		cr_expect_leq(semis, 2, "a name added a frame: %s", l);
		cr_expect(strncmp(l, "main (", 6) == 0 || strcmp(l, "[other stacks]") == 0,
		          "a name broke a line: %s", l);
	}
	free(text);
	snapshot_free(&s);
}

Test(collapsed, a_node_out_of_order_is_left_out)
{
	struct snapshot s = fix_snapshot();
	char *text;

	/* Node 2 (main) made its own child's child: a cycle 2 -> 4 -> 3 -> 2. */
	s.stack_nodes[2].parent = 4;
	text = collapsed(&s);
	cr_expect_null(strstr(text, "main"), "a node whose parent comes after it "
	               "was written:\n%s", text);
	cr_expect(has_line(text, "[other stacks] 3"), "%s", text);
	free(text);
	snapshot_free(&s);
}

Test(collapsed, ten_thousand_stacks_in_time)
{
	struct snapshot s = fix_many_stacks(10000);
	double t0 = h_now(), took;
	char *text = collapsed(&s);

	took = h_now() - t0;
	h_note("collapsed: 10000 stacks written in %.1f ms", took * 1e3);
	/* The views' thread writes it between two refreshes (1 s). */
	cr_expect_lt(took, 1.0, "%.3f s for 10000 stacks", took);
	cr_expect_not_null(strstr(text, "main (many.py:1);f9999 (many.py:10001) 1\n"));
	free(text);
	snapshot_free(&s);
}
