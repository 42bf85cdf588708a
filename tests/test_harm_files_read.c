/* test_harm_files_read.c - what a hostile target can make a root pytop read
 * or print (issue 9, items 2 and 3), with the real binary:
 *   - a user's code "from" a root-only file: its lines never on screen;
 *   - a target in its own mount namespace: the host's file at the same
 *     path is not its source, its own file is;
 *   - a deleted executable replaced by a FIFO or a symbolic link: pytop -p
 *     neither hangs nor opens what the path names now;
 *   - escape sequences in an executable's name never reach stderr raw.
 * Needs root (useradd, setpriv, unshare, mount); skips otherwise. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define WAIT_S 15.0
#define SERVER_LIFETIME_S 90
#define TEST_USER "pytop-test-user"

/* What a test started, torn down even when an assertion fails. */
static struct {
	struct h_tmux tmux;
	struct h_proc target;
	bool target_started;
	char *dir;
	char *screen;
} g;

static void teardown(void)
{
	h_tmux_kill(&g.tmux);
	if (g.target_started)
		h_proc_free(&g.target);
	if (g.dir != NULL)
		h_rmtree(g.dir);
	free(g.dir);
	free(g.screen);
	memset(&g, 0, sizeof g);
}

static void need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: the target runs as another user or "
		             "in its own mount namespace");
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, mode), 0);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	cr_assert_geq(in, 0, "%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL, mode);
	cr_assert_geq(out, 0, "%s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof buf)) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	close(in);
	cr_assert_eq(close(out), 0);
}

/* Start the target; it prints "ready" once its hot code runs. */
static void start_target(const char *const argv[])
{
	cr_assert(h_proc_start(&g.target, argv), "cannot start %s", argv[0]);
	g.target_started = true;
	cr_assert(h_proc_wait_stdout(&g.target, "ready", WAIT_S),
	          "the target never got ready; stderr:\n%s",
	          g.target.err.data ? g.target.err.data : "");
}

/* ---- the live view in tmux ---------------------------------------------- */

static void tui_attach(void)
{
	char *script = h_path(g.dir, "run.sh");
	FILE *f = fopen(script, "w");

	h_need_program("tmux");
	cr_assert_not_null(f);
	fprintf(f, "'%s' -p %d -d 0.3\necho PYTOP-DONE\nexec sleep %d\n",
	        h_pytop(), (int)g.target.pid, SERVER_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&g.tmux, 140, 30, script, SERVER_LIFETIME_S),
	          "cannot start tmux");
	free(script);
}

static const char *see(const char *needle, const char *why)
{
	char *last = NULL;

	free(g.screen);
	g.screen = h_tmux_wait_for(&g.tmux, needle, WAIT_S, &last);
	cr_assert_not_null(g.screen, "%s: \"%s\" never appeared; screen:\n%s",
	                   why, needle, last ? last : "(no capture)");
	free(last);
	return g.screen;
}

/* Wait until the screen shows a or b; returns it. */
static const char *see_either(const char *a, const char *b)
{
	double deadline = h_now() + WAIT_S;

	for (;;) {
		free(g.screen);
		g.screen = h_tmux_capture(&g.tmux);
		cr_assert_not_null(g.screen, "capture-pane failed");
		if (strstr(g.screen, a) != NULL || strstr(g.screen, b) != NULL)
			return g.screen;
		cr_assert(h_now() < deadline, "neither \"%s\" nor \"%s\" "
		          "appeared; screen:\n%s", a, b, g.screen);
		h_sleep(0.1);
	}
}

static void key(const char *k)
{
	const char *const ks[] = { k, NULL };

	cr_assert(h_tmux_keys(&g.tmux, ks), "send-keys failed");
}

/* Filter the functions down to `func`, open its lines view, and return
 * the screen once it shows `expect` or `unwanted`. */
static const char *open_lines_view(const char *func, const char *expect,
                                   const char *unwanted)
{
	char title[128];

	see(func, "the hot function in the live view");
	key("/");
	cr_assert(h_tmux_literal(&g.tmux, func));
	key("Enter");
	/* The second Enter only once the filtered table is on screen: sent
	 * at once, a busy machine let it reach the table before the filter
	 * had rebuilt it, and it opened nothing. */
	snprintf(title, sizeof title, "[filter: %s]", func);
	see(title, "the filtered table");
	key("Enter");
	snprintf(title, sizeof title, "Source of %s", func);
	see(title, "the lines view");
	return see_either(expect, unwanted);
}

static void leave_lines_view(void)
{
	key("Left");
	see("Function (file:line)", "back to the functions");
	key("/");
	key("C-u");
	key("Enter");
}

/* ---- item 2(a): a file the target's user may not read ------------------- */

/* Compiles a hot function under the file name argv[1], runs it. */
static const char secret_program[] =
	"import sys\n"
	"src = 'def secret_hot():\\n    x = 0\\n    while True:\\n"
	"        x += 1\\n'\n"
	"ns = {}\n"
	"exec(compile(src, sys.argv[1], 'exec'), ns)\n"
	"print('ready', flush=True)\n"
	"ns['secret_hot']()\n";

static void need_test_user(void)
{
	struct h_proc r;
	const char *const id[] = { "id", "-u", TEST_USER, NULL };
	const char *const add[] = { "useradd", "--system", "--no-create-home",
	                            "--shell", "/usr/sbin/nologin", TEST_USER,
	                            NULL };
	bool have = h_run(&r, 10, id) && r.status == 0;

	h_proc_free(&r);
	if (have)
		return;
	h_need_program("useradd");
	h_run(&r, 30, add); /* may race another test adding it: check again */
	h_proc_free(&r);
	cr_assert(h_run(&r, 10, id) && r.status == 0, "cannot create %s",
	          TEST_USER);
	h_proc_free(&r);
}

Test(files, a_root_only_file_is_not_shown_as_a_users_source,
     .fini = teardown)
{
	const char *py;
	char *secret;
	char lines[2048] = "";

	need_root();
	h_need_program("setpriv");
	py = h_need_python(H_PY_DEBIAN);
	need_test_user();
	g.dir = h_tmpdir(); /* 0700, root's */
	secret = h_path(g.dir, "secret.py");
	for (int i = 0; i < 12; i++)
		strcat(lines, "TOP_SECRET_MARKER = 'root only'\n");
	write_text(secret, lines, 0600);

	const char *const argv[] = { "setpriv", "--reuid=" TEST_USER,
	                             "--regid=" TEST_USER, "--init-groups", py,
	                             "-c", secret_program, secret, NULL };
	start_target(argv);
	tui_attach();
	const char *s = open_lines_view("secret_hot", "source not available",
	                                "TOP_SECRET_MARKER");
	cr_assert_null(strstr(s, "TOP_SECRET_MARKER"), "the root-only file's "
	               "text is on screen:\n%s", s);
	cr_assert_not_null(strstr(s, "may not read it"), "the note does not "
	                   "say why:\n%s", s);
	free(secret);
}

/* ---- item 2(c): another mount namespace --------------------------------- */

/* In its own mount namespace, with a tmpfs over argv[1]: inside.py exists
 * only there, host.py only outside.  Both functions stay hot. */
static const char ns_program[] =
	"import sys, threading\n"
	"d = sys.argv[1]\n"
	"ns = {}\n"
	"exec(compile(open(d + '/inside.py').read(), d + '/inside.py', 'exec'),"
	" ns)\n"
	"exec(compile('def host_only_hot():\\n    x = 0\\n    while True:\\n"
	"        x += 1\\n', d + '/host.py', 'exec'), ns)\n"
	"threading.Thread(target=ns['host_only_hot'], daemon=True).start()\n"
	"print('ready', flush=True)\n"
	"ns['inside_hot']()\n";

static const char ns_script[] =
	"mount -t tmpfs pytop-test \"$1\" || exit 1\n"
	"printf 'def inside_hot():\\n    x = 0  # NAMESPACE_MARKER\\n"
	"    while True:\\n        x += 1\\n' > \"$1/inside.py\"\n"
	"exec \"$2\" -c \"$3\" \"$1\"\n";

Test(files, the_hosts_file_is_not_the_source_of_a_namespaced_target,
     .fini = teardown)
{
	const char *py, *s;
	char *sub, *host;
	char lines[2048] = "";

	need_root();
	h_need_program("unshare");
	py = h_need_python(H_PY_DEBIAN);
	g.dir = h_tmpdir();
	sub = h_path(g.dir, "src");
	cr_assert_eq(mkdir(sub, 0755), 0);
	host = h_path(sub, "host.py");
	for (int i = 0; i < 12; i++)
		strcat(lines, "HOST_ONLY_MARKER = 1\n");
	write_text(host, lines, 0644);

	const char *const argv[] = { "unshare", "-m", "--propagation",
	                             "private", "sh", "-c", ns_script, "sh",
	                             sub, py, ns_program, NULL };
	start_target(argv);
	tui_attach();
	s = open_lines_view("inside_hot", "NAMESPACE_MARKER",
	                    "source not available");
	cr_assert_not_null(strstr(s, "NAMESPACE_MARKER"), "the target's own "
	                   "file is not shown:\n%s", s);
	leave_lines_view();
	s = open_lines_view("host_only_hot", "source not available",
	                    "HOST_ONLY_MARKER");
	cr_assert_null(strstr(s, "HOST_ONLY_MARKER"), "the host's file is "
	               "shown as the target's source:\n%s", s);
	free(sub), free(host);
}

/* ---- item 2(b): a deleted executable replaced --------------------------- */

static const char spin_program[] =
	"def spin_hot():\n"
	"    x = 0\n"
	"    while True:\n"
	"        x += 1\n"
	"print('ready', flush=True)\n"
	"spin_hot()\n";

/* A copy of the (static) Debian interpreter runs spin_hot, then its file
 * is deleted; returns the path it ran from. */
static char *run_deleted_copy(void)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	char *exe;

	need_root();
	g.dir = h_tmpdir();
	exe = h_path(g.dir, "python3.11");
	copy_file(py, exe, 0755);
	const char *const argv[] = { exe, "-c", spin_program, NULL };
	start_target(argv);
	cr_assert_eq(unlink(exe), 0);
	return exe;
}

/* pytop -p on the target (with --native: libdw opens the objects too):
 * must end by itself, profile it, and find 3.11. */
static void profile_it(bool native)
{
	struct h_proc r;
	char pid[16];

	snprintf(pid, sizeof pid, "%d", (int)g.target.pid);
	const char *const argv[] = { h_pytop(), "-p", pid, "-b", "-d", "0.5",
	                             "-n", "1", native ? "--native" : NULL,
	                             NULL };
	/* A FIFO opened for reading would hang it for good: 40 s tells that
	 * from the sanitizer build on a loaded machine, where a --native run
	 * took over 20 s to print its one block. */
	bool ended = h_run(&r, 40, argv);

	cr_assert(ended, "pytop -p hung (killed after 40 s); stderr:\n%s",
	          r.err.data ? r.err.data : "");
	cr_assert_eq(r.status, 0, "pytop failed:\n%s", r.err.data);
	cr_assert_not_null(strstr(r.out.data, "Python 3.11"), "%s", r.out.data);
	cr_assert_not_null(strstr(r.out.data, "spin_hot"), "%s", r.out.data);
	h_proc_free(&r);
}

Test(files, a_fifo_at_the_deleted_executables_path_does_not_hang_attach,
     .fini = teardown)
{
	char *exe = run_deleted_copy();

	cr_assert_eq(mkfifo(exe, 0666), 0, "%s", strerror(errno));
	profile_it(false);
	profile_it(true);
	free(exe);
}

Test(files, a_link_at_the_deleted_executables_path_is_not_followed,
     .fini = teardown)
{
	char *exe = run_deleted_copy(), *decoy = h_path(g.dir, "decoy");
	char events[4096];
	int ino, watch;
	ssize_t n;

	write_text(decoy, "not an ELF file\n", 0600);
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	cr_assert_geq(ino, 0);
	watch = inotify_add_watch(ino, decoy, IN_OPEN);
	cr_assert_geq(watch, 0);
	cr_assert_eq(symlink(decoy, exe), 0, "%s", strerror(errno));
	profile_it(false);
	profile_it(true);
	n = read(ino, events, sizeof events);
	cr_assert(n < 0 && errno == EAGAIN, "pytop opened the link's target "
	          "(%zd bytes of inotify events)", n);
	close(ino);
	free(exe), free(decoy);
}

/* ---- item 3: escape sequences in names on stderr ------------------------ */

/* OSC (set the window title), CSI (red), a C1 CSI in UTF-8, a bare byte. */
#define EVIL_NAME "evil\x1b]0;PWNED\x07\x1b[31mRED\xc2\x9b" "2J\xff"

/* Fails naming the first byte of err a terminal would act on. */
static void no_control_bytes(const char *err)
{
	const unsigned char *p = (const unsigned char *)err;

	for (size_t i = 0; p[i] != '\0'; i++) {
		bool c0 = p[i] < 0x20 && p[i] != '\n';
		bool c1 = p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] < 0xa0;

		cr_assert(!c0 && p[i] != 0x7f && !c1 && p[i] != 0xff,
		          "raw byte 0x%02x at %zu of stderr: %s", p[i], i, err);
	}
}

static char *evil_copy_of_sleep(void)
{
	char *exe;

	g.dir = h_tmpdir();
	exe = h_path(g.dir, EVIL_NAME);
	copy_file("/bin/sleep", exe, 0755);
	return exe;
}

Test(files, escape_sequences_in_an_attached_executables_name,
     .fini = teardown)
{
	char *exe = evil_copy_of_sleep();
	struct h_proc r;
	char pid[16];

	const char *const target[] = { exe, "30", NULL };
	cr_assert(h_proc_start(&g.target, target));
	g.target_started = true;
	h_sleep(0.2); /* exec'd */
	snprintf(pid, sizeof pid, "%d", (int)g.target.pid);
	const char *const argv[] = { h_pytop(), "-p", pid, "-b", "-n", "1",
	                             NULL };
	cr_assert(h_run(&r, 20, argv));
	cr_assert_eq(r.status, 1, "%s", r.err.data);
	cr_assert_not_null(strstr(r.err.data, "not a CPython process"), "%s",
	                   r.err.data);
	cr_assert_not_null(strstr(r.err.data, "evil\\x1b]0;PWNED\\x07\\x1b[31m"
	                          "RED\\xc2\\x9b2J\\xff"), "%s", r.err.data);
	no_control_bytes(r.err.data);
	h_proc_free(&r);
	free(exe);
}

Test(files, escape_sequences_in_a_launched_executables_name,
     .fini = teardown)
{
	char *exe = evil_copy_of_sleep();
	struct h_proc r;

	const char *const argv[] = { h_pytop(), "-b", "-n", "1", "--", exe,
	                             "30", NULL };
	cr_assert(h_run(&r, 20, argv));
	cr_assert_eq(r.status, 1, "%s", r.err.data);
	cr_assert_not_null(strstr(r.err.data, "PWNED"), "%s", r.err.data);
	no_control_bytes(r.err.data);
	h_proc_free(&r);
	free(exe);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
