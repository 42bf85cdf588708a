/* test_target_files.c - opening files on the target's behalf
 * (src/target/target_files.c) as the lines view does (ui/source_file.c), and the
 * escaping of the target's bytes in error lines (src/escape.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "escape.h"
#include "target/target_files.h"
#include "../ui/source_file.h"

static char *tmpdir(void)
{
	char *d = strdup("/tmp/pytop-tf-XXXXXX");

	cr_assert_not_null(d);
	cr_assert_not_null(mkdtemp(d));
	return d;
}

static char *join(const char *a, const char *b)
{
	char *p;

	cr_assert_geq(asprintf(&p, "%s%s", a, b), 0);
	return p;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
}

/* ---- escaping ------------------------------------------------------------- */

Test(escape, control_bytes_and_invalid_utf8_become_hex)
{
	char buf[256];

	escape_text(buf, sizeof buf, "a\x1b]0;t\x07" "b\x1b[31m\x7f\xff\xc0\xaf");
	cr_assert_str_eq(buf, "a\\x1b]0;t\\x07b\\x1b[31m\\x7f\\xff\\xc0\\xaf");
	/* C1 controls in UTF-8 (U+009B is a CSI to some terminals). */
	escape_text(buf, sizeof buf, "x\xc2\x9b" "2J");
	cr_assert_str_eq(buf, "x\\xc2\\x9b2J");
	/* Valid text of every length stays as it is. */
	escape_text(buf, sizeof buf, "caf\xc3\xa9 \xe2\x86\xb3 \xf0\x9f\x90\x8d");
	cr_assert_str_eq(buf, "caf\xc3\xa9 \xe2\x86\xb3 \xf0\x9f\x90\x8d");
	/* Surrogates and code points past U+10FFFF are not UTF-8. */
	escape_text(buf, sizeof buf, "\xed\xa0\x80\xf4\x90\x80\x80");
	cr_assert_str_eq(buf, "\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80");
}

Test(escape, an_escape_is_never_cut)
{
	char buf[8];

	cr_assert_eq(escape_text(buf, sizeof buf, "ab\x1b\x1b"), 6);
	cr_assert_str_eq(buf, "ab\\x1b");
	cr_assert_eq(escape_text(buf, 4, "\xc3\xa9\xc3\xa9"), 2);
}

Test(escape, error_lines_escape_their_arguments)
{
	struct pytop_error e;

	error_set(&e, PYTOP_ERR_NOT_PYTHON, "it runs %s; fix", "/tmp/\x1b[2Jx");
	cr_assert_str_eq(e.text, "it runs /tmp/\\x1b[2Jx; fix");
}

/* ---- opening ---------------------------------------------------------------- */

/* root/app is an absolute link to a directory outside root: resolved as
 * the target would, inside root, where it leads nowhere. */
Test(target_files, absolute_links_stay_inside_the_root)
{
	char *dir = tmpdir(), *root = join(dir, "/root"),
	     *outside = join(dir, "/outside"), *app = join(root, "/app"),
	     *file = join(outside, "/m.py");
	struct source_file sf;

	cr_assert_eq(mkdir(root, 0755), 0);
	cr_assert_eq(mkdir(outside, 0755), 0);
	write_text(file, "OUTSIDE_THE_ROOT = 1\n", 0644);
	cr_assert_eq(symlink(outside, app), 0);
	cr_assert_eq(source_file_load(&sf, root, "/app/m.py"), -1,
	             "read through a link out of the root: %s",
	             sf.loaded ? source_file_line(&sf, 1) : "");
	source_file_free(&sf);
	unlink(app), unlink(file), rmdir(outside), rmdir(root), rmdir(dir);
	free(dir), free(root), free(outside), free(app), free(file);
}

Test(target_files, a_link_as_the_last_component_is_not_followed)
{
	char *dir = tmpdir(), *real = join(dir, "/real.py"),
	     *link = join(dir, "/link.py");
	struct source_file sf;

	write_text(real, "x = 1\n", 0644);
	cr_assert_eq(symlink(real, link), 0);
	cr_assert_eq(source_file_load(&sf, NULL, link), -1);
	cr_assert_not_null(strstr(sf.reason, "symbolic link"), "%s", sf.reason);
	source_file_free(&sf);
	cr_assert_eq(source_file_load(&sf, NULL, real), 0, "%s", sf.reason);
	source_file_free(&sf);
	unlink(link), unlink(real), rmdir(dir);
	free(dir), free(real), free(link);
}

/* With another user's credentials a root-only file is refused; ours are
 * back afterwards. */
Test(target_files, another_users_rights_and_back)
{
	struct target_creds nobody = { .uid = 65534, .gid = 65534 };
	char *dir = tmpdir(), *secret = join(dir, "/secret.py");
	int root, fd;

	if (geteuid() != 0)
		cr_skip_test("needs root to take another user's rights");
	write_text(secret, "s = 1\n", 0600);
	root = open("/", O_PATH | O_DIRECTORY);
	cr_assert_geq(root, 0);
	fd = target_file_open_at(root, &nobody, secret);
	cr_assert_eq(fd, -1, "nobody opened a root-only file");
	cr_assert_eq(errno, EACCES, "%s", strerror(errno));
	fd = target_file_open_at(root, NULL, secret);
	cr_assert_geq(fd, 0, "our own rights are not back: %s", strerror(errno));
	close(fd);
	fd = open(secret, O_RDONLY);
	cr_assert_geq(fd, 0, "this thread is not root again: %s", strerror(errno));
	close(fd);
	close(root);
	unlink(secret), rmdir(dir);
	free(dir), free(secret);
}
