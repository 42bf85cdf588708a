/* test_deep_header.c - the header's count of samples whose stacks were
 * deeper than the frame limit ("deep stacks cut: N"): shown once there
 * is one, never before, and at 80 columns given up (short form, then
 * left out) before the error and drop shares and the rate. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>

#include "profile/snapshot.h"
#include "../ui/header.h"
#include "../ui/text.h"

static struct snapshot busy(void)
{
	struct snapshot s;

	memset(&s, 0, sizeof s);
	s.samples = 97004;
	s.ticks = 97100;
	s.rate_hz = 990;
	s.requested_hz = 1000;
	s.errors = 500;
	s.dropped = 200;
	s.threads_running = 1;
	s.threads_total = 3;
	s.gil_held_pct = 92;
	s.active_pct = 99;
	s.pytop_cpu_pct = 12.5;
	s.elapsed_s = 10;
	s.window_s = 1;
	return s;
}

Test(deep_header, shown_only_once_a_stack_was_cut)
{
	struct snapshot s = busy();
	char l[2][HEADER_LINE_MAX];

	header_health(&s, 200, true, l, 1);
	cr_expect_null(strstr(l[0], "deep"), "no deep stack yet: %s", l[0]);
	s.deep_cut = 12345;
	header_health(&s, 200, true, l, 1);
	cr_expect_not_null(strstr(l[0], "deep stacks cut: 12,345"), "%s", l[0]);
}

Test(deep_header, gives_way_before_errors_and_drops)
{
	struct snapshot s = busy();
	char l[2][HEADER_LINE_MAX];
	int widths[] = { 120, 100, 80, 60 };

	s.deep_cut = 12345;
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		int n = header_health(&s, widths[i], true, l, 1);

		cr_assert_eq(n, 1);
		cr_expect_leq(text_width(l[0], true), widths[i]);
		/* Once it is gone (or short), err and drop are still there
		 * until the deep count is. */
		if (strstr(l[0], "deep") == NULL)
			continue;
		cr_expect(strstr(l[0], "err ") != NULL && strstr(l[0], "drop ") != NULL,
		          "%d columns: the deep count stayed while err or drop went: %s",
		          widths[i], l[0]);
	}
	/* At 80 columns the room goes to err and drop, not to it. */
	header_health(&s, 80, true, l, 1);
	cr_expect(strstr(l[0], "err ") != NULL && strstr(l[0], "drop ") != NULL &&
	          strstr(l[0], "deep") == NULL, "80 columns: %s", l[0]);
	/* At 100 it stays, in its short form. */
	header_health(&s, 100, true, l, 1);
	cr_expect_not_null(strstr(l[0], "deep cut 12,345"), "100 columns: %s", l[0]);
}
