/* Parsing /proc/PID/maps text, and finding the interpreter's objects. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target/proc_maps.h"

static const char fixture[] =
	"00400000-00420000 r--p 00000000 fe:01 1234    /usr/bin/python3.11\n"
	"00420000-00700000 r-xp 00020000 fe:01 1234    /usr/bin/python3.11\n"
	"0215e000-022c1000 rw-p 00000000 00:00 0       [heap]\n"
	"7f0000000000-7f0000100000 r--p 00000000 fe:01 99  /opt/py/lib/libpython3.12.so.1.0\n"
	"7f0000100000-7f0000400000 r-xp 00100000 fe:01 99  /opt/py/lib/libpython3.12.so.1.0\n"
	"7f1000000000-7f1000001000 r--p 00000000 fe:01 77  /usr/lib/libboost_python311.so.1.74.0\n"
	"7f2000000000-7f2000001000 r--p 00000000 fe:01 78  /tmp/my lib (x).so (deleted)\n"
	"this line is garbage\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n";

static struct proc_maps parse_fixture(void)
{
	struct proc_maps m;
	FILE *f = fmemopen((void *)fixture, sizeof(fixture) - 1, "r");

	cr_assert_not_null(f);
	cr_assert_eq(maps_parse(f, &m), 0);
	fclose(f);
	return m;
}

Test(proc_maps, parses_fields_and_skips_garbage)
{
	struct proc_maps m = parse_fixture();

	cr_assert_eq(m.n, 8);
	cr_assert_eq(m.v[1].start, 0x420000);
	cr_assert_eq(m.v[1].end, 0x700000);
	cr_assert_eq(m.v[1].offset, 0x20000);
	cr_assert_str_eq(m.v[1].perms, "r-xp");
	cr_assert_str_eq(m.v[2].path, "[heap]");
	cr_assert_str_eq(m.v[7].path, "[stack]");
	maps_free(&m);
}

Test(proc_maps, strips_deleted_suffix_and_keeps_spaces)
{
	struct proc_maps m = parse_fixture();

	cr_assert_str_eq(m.v[6].path, "/tmp/my lib (x).so");
	cr_assert(m.v[6].deleted);
	cr_assert(!m.v[0].deleted);
	maps_free(&m);
}

Test(proc_maps, first_mapping_of_a_file_is_its_load_address)
{
	struct proc_maps m = parse_fixture();
	const struct map_entry *e = maps_first_of(&m, "/usr/bin/python3.11");

	cr_assert_not_null(e);
	cr_assert_eq(e->start, 0x400000);
	cr_assert_null(maps_first_of(&m, "/usr/bin/nothing"));
	maps_free(&m);
}

Test(proc_maps, finds_libpython_but_not_boost_python)
{
	struct proc_maps m = parse_fixture();
	const struct map_entry *e = maps_find_libpython(&m);

	cr_assert_not_null(e);
	cr_assert_str_eq(e->path, "/opt/py/lib/libpython3.12.so.1.0");
	cr_assert_eq(e->start, 0x7f0000000000);
	maps_free(&m);
}

Test(proc_maps, loads_own_process)
{
	struct proc_maps m;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	cr_assert_eq(maps_load(getpid(), &m), 0);
	cr_assert_gt(m.n, 5);
	cr_assert_not_null(maps_first_of(&m, exe), "own executable %s not found", exe);
	maps_free(&m);
}

Test(proc_maps, missing_process_fails)
{
	struct proc_maps m;

	cr_assert_eq(maps_load(999999999, &m), -1);
}
