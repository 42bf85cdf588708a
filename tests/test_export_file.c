/* test_export_file.c - the export's output file: never an existing file
 * without --force, never through a planted symlink (even with --force),
 * never a FIFO (no hang); time-stamped names that never overwrite. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "../ui/export_file.h"

/* Under the prefix h_rmtree removes: the teardown left every run's
 * directory behind before. */
static char dir[] = "/tmp/pytop-test-export-file.XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	h_rmtree(dir);
}

TestSuite(export_file, .init = setup, .fini = teardown);

static char *in_dir(const char *name)
{
	return h_path(dir, name);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(export_file, an_existing_file_is_kept_without_force)
{
	char *path = in_dir("prof.txt"), err[512] = "";
	char *text;

	write_text(path, "precious");
	cr_expect_null(export_file_create(path, false, err, sizeof err));
	cr_expect_not_null(strstr(err, "already exists"), "%s", err);
	cr_expect_not_null(strstr(err, "--force"), "the fix is not named: %s", err);
	text = h_read_file(path);
	cr_expect_str_eq(text, "precious");
	free(text);
	free(path);
}

Test(export_file, force_replaces_a_regular_file)
{
	char *path = in_dir("prof.txt"), err[512] = "";
	FILE *f;
	char *text;

	write_text(path, "old and longer");
	f = export_file_create(path, true, err, sizeof err);
	cr_assert_not_null(f, "%s", err);
	fputs("new", f);
	cr_expect_eq(export_file_close(f, path, false, err, sizeof err), 0, "%s", err);
	text = h_read_file(path);
	cr_expect_str_eq(text, "new");
	free(text);
	free(path);
}

Test(export_file, a_planted_symlink_is_never_followed)
{
	char *victim = in_dir("victim"), *link = in_dir("prof.txt");
	char *dangling = in_dir("dangling"), *nowhere = in_dir("created-through-link");
	char err[512] = "";
	char *text;

	write_text(victim, "precious");
	cr_assert_eq(symlink(victim, link), 0);
	cr_assert_eq(symlink(nowhere, dangling), 0);
	for (int force = 0; force <= 1; force++) {
		err[0] = '\0';
		cr_expect_null(export_file_create(link, force, err, sizeof err),
		               "force %d: opened through a symlink", force);
		cr_expect_not_null(strstr(err, "symbolic link"), "%s", err);
		cr_expect_null(export_file_create(dangling, force, err, sizeof err));
	}
	text = h_read_file(victim);
	cr_expect_str_eq(text, "precious");
	cr_expect_neq(access(nowhere, F_OK), 0, "a file was created through a "
	              "dangling symlink");
	free(text);
	free(victim);
	free(link);
	free(dangling);
	free(nowhere);
}

Test(export_file, a_fifo_is_refused_without_hanging, .timeout = 10)
{
	char *fifo = in_dir("prof.txt"), err[512] = "";

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_null(export_file_create(fifo, false, err, sizeof err));
	cr_expect_null(export_file_create(fifo, true, err, sizeof err));
	cr_expect_not_null(strstr(err, "not a regular file"), "%s", err);
	free(fifo);
}

Test(export_file, an_unwritable_directory_is_said)
{
	char err[512] = "";

	cr_expect_null(export_file_create("/proc/pytop-no/prof.txt", false, err,
	                                  sizeof err));
	cr_expect_not_null(strstr(err, "cannot create"), "%s", err);
	cr_expect_null(export_file_create("", false, err, sizeof err));
	cr_expect_not_null(strstr(err, "empty"), "%s", err);
}

Test(export_file, stamped_names)
{
	char buf[256];
	time_t t = 1795721412; /* 2026-11-26 19:30:12 UTC */

	cr_assert(export_file_stamped("out/prof.pb.gz", t, 1, buf, sizeof buf));
	cr_expect_str_eq(buf, "out/prof-20261126T193012Z.pb.gz");
	cr_assert(export_file_stamped("a.b/prof", t, 3, buf, sizeof buf));
	cr_expect_str_eq(buf, "a.b/prof-20261126T193012Z-3");
	cr_assert(export_file_stamped("/x/.hidden", t, 1, buf, sizeof buf));
	cr_expect_str_eq(buf, "/x/.hidden-20261126T193012Z");
	cr_expect_not(export_file_stamped("prof.txt", t, 1, buf, 10));
}

Test(export_file, stamped_never_overwrites)
{
	char *base = in_dir("prof.txt"), first[512], second[512], err[512];
	time_t t = 1795721412;
	FILE *a, *b;

	a = export_file_create_stamped(base, t, first, sizeof first, err, sizeof err);
	cr_assert_not_null(a, "%s", err);
	/* A symlink planted at the next name is skipped, not followed. */
	cr_assert(export_file_stamped(base, t, 2, second, sizeof second));
	cr_assert_eq(symlink("/etc/passwd", second), 0);
	b = export_file_create_stamped(base, t, second, sizeof second, err, sizeof err);
	cr_assert_not_null(b, "%s", err);
	cr_expect_str_neq(first, second);
	cr_expect_not_null(strstr(second, "-3.txt"), "%s", second);
	cr_expect_eq(export_file_close(a, first, false, err, sizeof err), 0);
	cr_expect_eq(export_file_close(b, second, false, err, sizeof err), 0);
	free(base);
}
