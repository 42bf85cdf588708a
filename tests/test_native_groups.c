/* test_native_groups.c - with --native, g shows one row per native
 * library (issue 11 item 6: Debian's python3.11 without symbols spreads
 * one library over many "python3.11+0x..." rows): own figures summed
 * exactly, the Python rows as they were, g again for every function. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "headless.h"
#include "snapshot_builder.h"
#include "../ui/keys.h"
#include "../ui/profile_table.h"
#include "../ui/tui_state.h"

static struct snapshot native_snapshot(bool native)
{
	static const struct { const char *name, *module; uint64_t own, total; }
	rows[] = {
		{ "python3.11+0x201db0", "python3.11", 300, 300 },
		{ "python3.11+0x1cfadc", "python3.11", 200, 250 },
		{ "PyObject_Free", "python3.11", 100, 100 },
		{ "__memcpy_avx_unaligned", "libc.so.6", 150, 150 },
	};
	struct snapshot s = sb_snapshot(11, "python3.11 app.py", "3.11.2", 1000);
	struct snap_func *f = sb_funcs(&s, 5);

	s.native = native;
	s.elapsed_s = 10;
	for (size_t i = 0; i < 4; i++)
		f[i] = (struct snap_func){ .name = rows[i].name, .file = rows[i].module,
		        .module = rows[i].module, .native = true,
		        .c = { .own = rows[i].own, .total = rows[i].total,
		               .split = { .native = (double)rows[i].own } } };
	f[4] = (struct snap_func){ .name = "handle", .file = "/srv/app.py", .line = 7,
	        .module = "", .c = { .own = 250, .total = 1000,
	                             .split = { .python = 250 } } };
	return s;
}

static size_t rows_with(const char *needle)
{
	size_t n = 0;

	for (int y = 0; y < 24; y++)
		n += strstr(headless_row(y), needle) != NULL;
	return n;
}

TestSuite(groups, .init = headless_up, .fini = headless_down);

Test(groups, g_folds_each_library_into_one_row)
{
	struct tui_state st;
	struct snapshot s = native_snapshot(true);
	const struct profile_row *r;

	headless_start(&st, &s, true);
	cr_assert_eq(rows_with("python3.11+0x"), 2);
	cr_assert_eq(keys_handle(&st, 'g'), REACT_REDRAW);
	headless_draw(&st);
	cr_assert_eq(rows_with("python3.11+0x"), 0, "%s", headless_row(2));
	cr_assert_eq(rows_with("[lib] python3.11 (3 native rows)"), 1, "%s",
	             headless_row(2));
	cr_assert_eq(rows_with("[lib] libc.so.6 (1 native row)"), 1);
	cr_assert_eq(rows_with("handle (/srv/app.py:7)"), 1);
	/* The library's own figures are its rows' sum: 60.0 % of 1,000. */
	cr_assert_eq(st.fs.table.n, 3);
	r = profile_table_row(&st.fs.table, 0);
	cr_assert_str_eq(r->name, "python3.11");
	cr_assert_eq(r->c->own, 600);
	cr_assert_float_eq(r->c->split.native, 600.0, 1e-9);
	cr_assert_geq(r->c->total, 600);
	cr_assert_eq(strncmp(headless_row(2), " 60.0 ", 6), 0, "%s", headless_row(2));
	/* Back to every function. */
	keys_handle(&st, 'g');
	headless_draw(&st);
	cr_assert_eq(rows_with("python3.11+0x"), 2);
	cr_assert_eq(st.fs.table.n, 5);
	headless_stop(&st);
}

Test(groups, g_without_native_does_nothing)
{
	struct tui_state st;
	struct snapshot s = native_snapshot(false);

	headless_start(&st, &s, true);
	cr_assert_eq(keys_handle(&st, 'g'), REACT_NONE);
	headless_draw(&st);
	cr_assert_eq(rows_with("[lib]"), 0);
	headless_stop(&st);
}

Test(groups, status_names_the_debug_symbols_package)
{
	struct tui_state st;
	struct snapshot s = native_snapshot(true);

	snprintf(s.debug_packages, sizeof s.debug_packages, "python3.11-dbg");
	headless_start(&st, &s, true);
	cr_assert_not_null(strstr(headless_row(0), "[no symbols: install python3.11-dbg]"),
	                   "%s", headless_row(0));
	headless_stop(&st);
}
