/* test_debug_package.c - the package named in "[no symbols: install ...]"
 * with --native: Debian's Python interpreters have theirs in python3.X-dbg,
 * other packages in PACKAGE-dbgsym; the owner of a module comes from the
 * dpkg database as the target sees it (here: this process's root). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile/debug_package.h"
#include "tap_note.h"

Test(debug_package, names_from_the_owner)
{
	static const char *const cases[][2] = {
		{ "python3.11-minimal", "python3.11-dbg" },
		{ "libpython3.11", "python3.11-dbg" },
		{ "libpython3.12t64", "python3.12-dbg" },
		{ "python3.13", "python3.13-dbg" },
		{ "libffi8", "libffi8-dbgsym" },
		{ "libc6", "libc6-dbgsym" },
		{ "python3-numpy", "python3-numpy-dbgsym" },
	};
	char out[64];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		debug_package_name(cases[i][0], out, sizeof out);
		cr_assert_str_eq(out, cases[i][1]);
	}
}

Test(debug_package, owner_from_the_dpkg_database)
{
	char out[64] = "";
	struct timespec a, b;

	if (access("/var/lib/dpkg/status", R_OK) != 0 ||
	    access("/usr/bin/python3.11", X_OK) != 0 ||
	    access("/var/lib/dpkg/info/python3.11-minimal.list", R_OK) != 0)
		cr_skip_test("no Debian python3.11-minimal here");
	clock_gettime(CLOCK_MONOTONIC, &a);
	cr_assert(debug_package_of(getpid(), "/usr/bin/python3.11", out, sizeof out));
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert_str_eq(out, "python3.11-dbg");
	test_note("owner of /usr/bin/python3.11 found in %.0f ms",
	         (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
	/* Merged /usr: dpkg lists libc under /lib. */
	if (access("/var/lib/dpkg/info/libc6:amd64.list", R_OK) == 0) {
		cr_assert(debug_package_of(getpid(), "/usr/lib/x86_64-linux-gnu/libc.so.6",
		                           out, sizeof out));
		cr_assert_str_eq(out, "libc6-dbgsym");
	}
	cr_assert_not(debug_package_of(getpid(), "/opt/nobody/owns/this.so", out, sizeof out));
}
