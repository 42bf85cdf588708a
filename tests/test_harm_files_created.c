/* test_harm_files_created.c - the file a root pytop creates for a launched
 * program's output (the live view) cannot be turned against the host.
 *
 * The real pytop runs in a private tmux server with TMPDIR set to a shared,
 * sticky, world-writable directory like /tmp.  Before it may launch the
 * program, the test plants what an attacker would at the name pytop used
 * to create there ($TMPDIR/pytop-PID.out, PID being pytop's own): a
 * symlink to a victim file, a dangling symlink, a file of the attacker's
 * own (0666), a FIFO; by another, unprivileged user (setresuid in a forked
 * child) and by root.  Then every victim must be untouched (content and
 * mtime), nothing created through the dangling link, pytop done when told
 * to quit, and the output in a file of its own: a new 0600 regular file
 * in a new 0700 directory owned by pytop's user.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define ATTACKER "pytop-test-attacker"
#define MARK_OUT "PROGRAM-STDOUT-MARK"
#define MARK_ERR "PROGRAM-STDERR-MARK"
#define VICTIM_TEXT "victim: must stay as it is\n"
#define FOREIGN_TEXT "attacker's own file\n"
#define PRINTED_WITHIN_S 12.0 /* pytop's and the program's start */
#define DONE_WITHIN_S 10.0    /* q: the program's SIGTERM, pytop's end */
#define SERVER_LIFETIME_S 60

/* One run.  Owns the directory (dir/shared is TMPDIR, dir/victim the
 * victim) and the tmux server. */
struct run {
	struct h_tmux tmux;
	char *dir, *shared, *victim;
	pid_t pytop;
	char *err_text; /* pytop's stderr once done */
};

static struct run g_run; /* torn down by .fini even after a failed assert */

static void teardown(void)
{
	struct run *r = &g_run;
	h_tmux_kill(&r->tmux);
	if (r->pytop > 0 && h_proc_state(r->pytop) != 0)
		kill(r->pytop, SIGKILL);
	h_rmtree(r->dir);
	free(r->dir);
	free(r->shared);
	free(r->victim);
	free(r->err_text);
	memset(r, 0, sizeof *r);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	cr_assert(fd >= 0, "create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	fchmod(fd, mode);
	close(fd);
}

/* An mtime far in the past, so that any write shows. */
static void age(const char *path)
{
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	cr_assert_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0,
	             "utimensat %s: %s", path, strerror(errno));
}

/* The file must still hold exactly `text`, with the old mtime. */
static void expect_untouched(const char *path, const char *text)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s is gone", path);
	char *now = h_read_file(path);
	cr_assert(now && strcmp(now, text) == 0,
	          "%s was written: now \"%s\"", path, now ? now : "(unreadable)");
	free(now);
	cr_assert_eq(st.st_mtim.tv_sec, 1000000000, "%s was modified", path);
}

/* The attacker: an unprivileged user of its own, created if missing;
 * "nobody" where useradd is not available. */
static void attacker_ids(uid_t *uid, gid_t *gid)
{
	struct passwd *pw = getpwnam(ATTACKER);
	if (pw == NULL) {
		struct h_proc p;
		const char *argv[] = {"useradd", "--system", "--no-create-home",
		                      "--shell", "/usr/sbin/nologin", ATTACKER, NULL};
		h_run(&p, 20, argv);
		h_proc_free(&p);
		pw = getpwnam(ATTACKER);
	}
	if (pw == NULL)
		pw = getpwnam("nobody");
	cr_assert_not_null(pw, "no unprivileged user to plant with");
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
}

enum plant { PLANT_LINK_TO_VICTIM, PLANT_DANGLING_LINK, PLANT_FOREIGN_FILE, PLANT_FIFO };

/* In a forked child that has become the attacker (or stays root): plant
 * `what` at `path`. */
static void plant_as(bool as_attacker, enum plant what, const char *path,
                     const char *target)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (as_attacker && uid != 0)
		cr_skip_test("planting as another user needs root");
	if (as_attacker)
		attacker_ids(&uid, &gid);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int ok = 1;
		if (as_attacker)
			ok = setgroups(0, NULL) == 0 && setresgid(gid, gid, gid) == 0 &&
			     setresuid(uid, uid, uid) == 0;
		umask(0);
		if (ok && what == PLANT_FOREIGN_FILE) {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
			ok = fd >= 0 && write(fd, FOREIGN_TEXT, strlen(FOREIGN_TEXT)) ==
			                    (ssize_t)strlen(FOREIGN_TEXT);
			if (fd >= 0)
				close(fd);
		} else if (ok && what == PLANT_FIFO) {
			ok = mkfifo(path, 0666) == 0;
		} else if (ok) {
			ok = symlink(target, path) == 0;
		}
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	          "could not plant at %s", path);
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert_eq(st.st_uid, uid, "%s is not the planter's", path);
	if (what == PLANT_FOREIGN_FILE)
		age(path);
}

/* The directory, TMPDIR (sticky, world-writable, as /tmp is), the victim;
 * then (start_pane) the program, and the script the pane runs: it writes
 * pytop's PID (the inner shell's $$, which exec keeps) and waits for "go"
 * before exec'ing pytop, so that the test can plant at names made of that
 * PID first. */
static void prepare_dir(void)
{
	struct run *r = &g_run;
	h_need_program("tmux");
	h_need_python(H_PY_DEBIAN);
	r->dir = h_tmpdir();
	cr_assert_eq(chmod(r->dir, 0755), 0);
	r->shared = h_path(r->dir, "shared");
	cr_assert_eq(mkdir(r->shared, 0700), 0);
	cr_assert_eq(chmod(r->shared, 01777), 0);
	r->victim = h_path(r->dir, "victim");
	write_file(r->victim, VICTIM_TEXT, 0644);
	age(r->victim);
}

/* pytop launching a program that prints both marks every 50 ms or, silent,
 * nothing; either says it ran in the file `printed`. */
static void start_pane(const char *tmpdir, bool silent)
{
	struct run *r = &g_run;
	const char *py = H_PY_DEBIAN;

	char *prog = h_path(r->dir, "prog.py");
	FILE *f = fopen(prog, "w");
	cr_assert_not_null(f);
	fprintf(f, "import sys, time\n"
	           "while True:\n"
	           "%s"
	           "    open('printed', 'w').close()\n"
	           "    time.sleep(0.05)\n",
	        silent ? "" : "    print('" MARK_OUT "', flush=True)\n"
	                      "    print('" MARK_ERR "', file=sys.stderr, flush=True)\n");
	fclose(f);

	char *script = h_path(r->dir, "run.sh");
	f = fopen(script, "w");
	cr_assert_not_null(f);
	fprintf(f,
	        "cd '%s'\n"
	        "TMPDIR='%s' sh -c 'echo $$ > pid.tmp; mv pid.tmp pytop.pid; "
	        "while [ ! -e go ]; do sleep 0.02; done; exec \"$0\" \"$@\"' "
	        "'%s' -d 0.2 -- '%s' '%s' 2> pytop.err\n"
	        "echo $? > exit_status\n"
	        "echo PYTOP-DONE\n"
	        "exec sleep %d\n",
	        r->dir, tmpdir, h_pytop(), py, prog,
	        SERVER_LIFETIME_S);
	fclose(f);
	free(prog);
	cr_assert(h_tmux_start(&r->tmux, 100, 30, script, SERVER_LIFETIME_S),
	          "cannot start tmux");
	free(script);

	char *pidfile = h_path(r->dir, "pytop.pid");
	cr_assert(h_tmux_wait_file(&r->tmux, pidfile, 10), "the pane's script never started");
	char *pid = h_read_file(pidfile);
	r->pytop = (pid_t)atoi(pid);
	free(pid);
	free(pidfile);
	cr_assert(r->pytop > 0);
}

/* The name pytop used to create: $TMPDIR/pytop-PID.out. */
static char *old_name(void)
{
	char name[64];
	snprintf(name, sizeof name, "pytop-%d.out", (int)g_run.pytop);
	return h_path(g_run.shared, name);
}

static void go(void)
{
	char *path = h_path(g_run.dir, "go");
	write_file(path, "", 0644);
	free(path);
}

/* While pytop runs the program's output must not reach the screen; once
 * the program has printed (it says so in a file), q must end pytop within
 * DONE_WITHIN_S, with the program stopped by SIGTERM (143).  No
 * --duration: at nice 19 beside the accuracy tests the program can take
 * longer than any fixed one to print its first line. */
static void run_to_end(void)
{
	struct run *r = &g_run;
	go();
	char *printed = h_path(r->dir, "printed");
	cr_assert(h_tmux_wait_file(&r->tmux, printed, PRINTED_WITHIN_S),
	          "the program never printed");
	free(printed);
	h_sleep(0.5);
	char *screen = h_tmux_capture(&r->tmux);
	cr_assert_not_null(screen);
	cr_assert_null(strstr(screen, MARK_OUT),
	               "the program's output is on the live view:\n%s", screen);
	free(screen);
	cr_assert(h_tmux_keys(&r->tmux, (const char *const[]){ "q", NULL }));
	char *last = NULL;
	char *done = h_tmux_wait_for(&r->tmux, "PYTOP-DONE", DONE_WITHIN_S, &last);
	cr_assert_not_null(done, "pytop did not end within %.0f s of q; "
	                   "screen:\n%s", DONE_WITHIN_S, last ? last : "");
	free(done);
	char *path = h_path(r->dir, "exit_status");
	char *status = h_read_file(path);
	free(path);
	path = h_path(r->dir, "pytop.err");
	r->err_text = h_read_file(path);
	free(path);
	cr_assert(status && atoi(status) == 143,
	          "pytop's exit status %s (want 143, the program stopped by "
	          "SIGTERM); stderr: %s", status ? status : "?",
	          r->err_text ? r->err_text : "");
	free(status);
	cr_assert_not_null(r->err_text);
	cr_assert_null(strstr(r->err_text, MARK_OUT), "the program's output "
	               "went to pytop's stderr: %s", r->err_text);
	cr_assert_null(strstr(r->err_text, MARK_ERR), "the program's errors "
	               "went to pytop's stderr: %s", r->err_text);
}

/* The output file pytop named: in a new private directory of pytop's
 * user right under `tmpdir`, a regular 0600 file with the program's
 * output and errors. */
static void expect_private_output(const char *tmpdir)
{
	struct run *r = &g_run;
	const char *intro = "pytop: the program's output is in ";
	const char *at = strstr(r->err_text, intro);
	cr_assert_not_null(at, "pytop did not name the output file: %s",
	                   r->err_text);
	char *path = strdup(at + strlen(intro));
	path[strcspn(path, "\n")] = '\0';

	char prefix[64];
	snprintf(prefix, sizeof prefix, "/pytop-%d.", (int)r->pytop);
	cr_assert(strncmp(path, tmpdir, strlen(tmpdir)) == 0 &&
	          strncmp(path + strlen(tmpdir), prefix, strlen(prefix)) == 0,
	          "the output file %s is not in a pytop-%d.* directory under %s",
	          path, (int)r->pytop, tmpdir);
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600 &&
	          st.st_nlink == 1 && st.st_uid == geteuid(),
	          "%s: mode %o, %lu links, owner %d", path, st.st_mode,
	          (unsigned long)st.st_nlink, (int)st.st_uid);
	char *text = h_read_file(path);
	cr_assert(text && strstr(text, MARK_OUT) && strstr(text, MARK_ERR),
	          "%s lacks the program's output: %s", path, text ? text : "");
	free(text);
	char *dir = dirname(path);
	cr_assert_eq(lstat(dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700 &&
	          st.st_uid == geteuid(),
	          "%s: mode %o, owner %d", dir, st.st_mode, (int)st.st_uid);
	free(path);
}

static void planted_run(bool as_attacker, enum plant what)
{
	struct run *r = &g_run;
	prepare_dir();
	start_pane(r->shared, false);
	char *old = old_name();
	char *through = h_path(r->dir, "created-through-link");
	plant_as(as_attacker, what, old,
	         what == PLANT_DANGLING_LINK ? through : r->victim);
	run_to_end();
	expect_untouched(r->victim, VICTIM_TEXT);
	cr_assert_neq(access(through, F_OK), 0,
	              "a file was created through the dangling link");
	struct stat st;
	cr_assert_eq(lstat(old, &st), 0, "the planted %s is gone", old);
	if (what == PLANT_FOREIGN_FILE)
		expect_untouched(old, FOREIGN_TEXT);
	if (what == PLANT_FIFO)
		cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
	else if (what != PLANT_FOREIGN_FILE)
		cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced");
	expect_private_output(r->shared);
	free(old);
	free(through);
}

TestSuite(harm_files, .fini = teardown, .timeout = 40);

Test(harm_files, symlink_to_victim_by_attacker)
{
	planted_run(true, PLANT_LINK_TO_VICTIM);
}

Test(harm_files, symlink_to_victim_by_root)
{
	planted_run(false, PLANT_LINK_TO_VICTIM);
}

Test(harm_files, dangling_symlink_by_attacker)
{
	planted_run(true, PLANT_DANGLING_LINK);
}

Test(harm_files, foreign_0666_file_by_attacker)
{
	planted_run(true, PLANT_FOREIGN_FILE);
}

Test(harm_files, fifo_by_attacker)
{
	planted_run(true, PLANT_FIFO);
}

/* A TMPDIR longer than pytop's old 128-byte name buffer: the output file
 * is made under it, its full name printed, nothing cut short. */
Test(harm_files, long_tmpdir_works)
{
	prepare_dir();
	char a[201], b[101];
	memset(a, 'a', 200);
	a[200] = '\0';
	memset(b, 'b', 100);
	b[100] = '\0';
	char *mid = h_path(g_run.dir, a);
	char *tmpdir = h_path(mid, b);
	cr_assert_eq(mkdir(mid, 0700), 0);
	cr_assert_eq(mkdir(tmpdir, 0700), 0);
	start_pane(tmpdir, false);
	run_to_end();
	expect_private_output(tmpdir);
	free(mid);
	free(tmpdir);
}

/* A TMPDIR too long for any file name in it (past PATH_MAX): one line
 * saying the output was discarded and why, and the output off the
 * screen. */
Test(harm_files, too_long_tmpdir_says_so)
{
	char tmpdir[5200] = "/tmp";
	while (strlen(tmpdir) < 5000)
		strcat(tmpdir, "/cccccccccccccccccccccccccccccccccccccccccccccccccc");
	prepare_dir();
	start_pane(tmpdir, false);
	run_to_end();
	struct run *r = &g_run;
	const char *line = strstr(r->err_text, "pytop: the program's output was "
	                                       "discarded: ");
	cr_assert_not_null(line, "no word on the discarded output: %s",
	                   r->err_text);
	cr_assert(strstr(line, "too long") && strstr(line, "TMPDIR"),
	          "the line does not say what is wrong and how to fix it: %s",
	          line);
	cr_assert_lt(strcspn(line, "\n"), 300, "not one short line: %s", line);
}

/* A program that printed nothing: no file named, and nothing of pytop's
 * left in TMPDIR (the empty file and its directory removed). */
Test(harm_files, silent_program_leaves_nothing)
{
	struct run *r = &g_run;
	prepare_dir();
	start_pane(r->shared, true);
	run_to_end();
	cr_assert_null(strstr(r->err_text, "output is in"),
	               "pytop named an empty output file: %s", r->err_text);
	DIR *d = opendir(r->shared);
	cr_assert_not_null(d);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "pytop-%d.", (int)r->pytop);
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		cr_assert(strncmp(e->d_name, prefix, strlen(prefix)) != 0,
		          "%s/%s left behind", r->shared, e->d_name);
	closedir(d);
}
