/* test_push_header.c - --push's health on the header's first line: the
 * whole sentence when there is room, still "push failing" at 80 columns
 * beside a long command, and nothing without --push. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "snapshot_builder.h"
#include "../ui/header.h"
#include "../ui/text.h"

#define NOW 1795720000

static struct snapshot pushing(unsigned failing_tries, int64_t last_ok)
{
	struct snapshot s = sb_snapshot(4242, "python3 /srv/shop/current/"
	                                "services/billing_worker.py --queue "
	                                "invoices --concurrency 8", "3.11.7", 1000);

	s.elapsed_s = 3725;
	s.time_us = (int64_t)NOW * 1000000;
	s.push.on = true;
	s.push.failing_tries = failing_tries;
	s.push.last_ok_unix = last_ok;
	snprintf(s.push.last_error, sizeof s.push.last_error, "connection refused");
	return s;
}

static void identity(const struct snapshot *s, int width, char *line)
{
	header_identity(s, width, true, line, HEADER_LINE_MAX);
	cr_assert_leq(text_width(line, true), width < 0 ? 100000 : width,
	              "wider than %d: %s", width, line);
}

Test(push_header, failing_is_said_whole_when_there_is_room)
{
	struct snapshot s = pushing(4, 0);
	char line[HEADER_LINE_MAX];

	identity(&s, 200, line);
	cr_expect_not_null(strstr(line, "push failing: connection refused (4 tries)"),
	                   "%s", line);
	cr_expect_not_null(strstr(line, "Python 3.11.7"), "%s", line);
	snapshot_free(&s);
}

Test(push_header, failing_stays_at_80_columns)
{
	struct snapshot s = pushing(4, NOW - 60);
	char line[HEADER_LINE_MAX];

	identity(&s, 80, line);
	cr_expect_not_null(strstr(line, "push failing"), "%s", line);
	cr_expect_not_null(strstr(line, "pid 4242"), "%s", line);
	/* The command keeps its first columns (COMMAND_MIN_COLS). */
	cr_expect_not_null(strstr(line, "python3 /srv"), "the command went: %s", line);
	snapshot_free(&s);
}

Test(push_header, ok_says_how_long_ago)
{
	struct snapshot s = pushing(0, NOW - 3);
	char line[HEADER_LINE_MAX];

	identity(&s, 80, line);
	cr_expect_not_null(strstr(line, "push ok 3s ago"), "%s", line);
	/* Batch text: no width, everything. */
	identity(&s, -1, line);
	cr_expect_not_null(strstr(line, "push ok 3s ago"), "%s", line);
	snapshot_free(&s);
}

Test(push_header, nothing_without_push)
{
	struct snapshot s = pushing(0, 0);
	char line[HEADER_LINE_MAX];

	s.push.on = false;
	identity(&s, 80, line);
	cr_expect_null(strstr(line, "push"), "%s", line);
	snapshot_free(&s);
}
