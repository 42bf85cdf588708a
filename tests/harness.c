/* harness.c - child processes, paths, JSON and tmux for the end-to-end
 * tests.  See harness.h for the contract of each helper. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "harness.h"
#include "patience.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- small utilities ------------------------------------------------ */

double h_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void h_sleep(double seconds)
{
	if (seconds <= 0)
		return;
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9),
	};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	cr_assert_not_null(q, "out of memory");
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	cr_assert_not_null(d, "out of memory");
	return d;
}

static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0, "out of memory");
	return s;
}

static void buf_add(struct h_buf *b, const char *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_free(struct h_buf *b)
{
	free(b->data);
	*b = (struct h_buf){0};
}

void h_keep_notes(void)
{
	/* Test processes are started with only the standard descriptors,
	 * so they reach this copy by its /proc path. */
	/* Reopened by path, a regular file gets an offset of its own: the
	 * runner's stdout, when it is the same file (2>&1), would write its
	 * report over the notes.  Appending on both keeps every line. */
	struct stat st;
	int flags = fcntl(STDERR_FILENO, F_GETFL);
	if (fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode) && flags >= 0)
		fcntl(STDERR_FILENO, F_SETFL, flags | O_APPEND);
	int fd = dup(STDERR_FILENO);
	if (fd < 0)
		return;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)getpid(), fd);
	setenv("PYTOP_NOTES", path, 1);
}

int h_count_lines(const char *s)
{
	int n = 0;
	bool content = false;
	for (; s && *s; s++) {
		if (*s == '\n') {
			n += content;
			content = false;
		} else {
			content = true;
		}
	}
	return n + content;
}

/* ---- child processes ------------------------------------------------ */

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_setup(int out_w, int err_w)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		close(devnull);
	}
	dup2(out_w, STDOUT_FILENO);
	dup2(err_w, STDERR_FILENO);
	close(out_w);
	close(err_w);
	signal(SIGPIPE, SIG_DFL);
}

bool h_proc_start(struct h_proc *p, const char *const argv[])
{
	int out[2], err[2];
	*p = (struct h_proc){.pid = -1, .out_fd = -1, .err_fd = -1};
	if (pipe2(out, O_CLOEXEC) != 0)
		return false;
	if (pipe2(err, O_CLOEXEC) != 0) {
		close(out[0]);
		close(out[1]);
		return false;
	}
	p->started = h_now();
	pid_t pid = fork();
	if (pid == 0) {
		child_setup(out[1], err[1]);
		execvp(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "harness: cannot run %s: %s\n", argv[0],
		        strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		return false;
	}
	setpgid(pid, pid); /* also from here: no race with an early kill */
	p->pid = pid;
	p->out_fd = out[0];
	p->err_fd = err[0];
	fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
	return true;
}

/* Read what is available on one pipe; close it at EOF. */
static void drain_fd(int *fd, struct h_buf *b)
{
	char chunk[8192];
	while (*fd >= 0) {
		ssize_t n = read(*fd, chunk, sizeof chunk);
		if (n > 0) {
			buf_add(b, chunk, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		close(*fd); /* EOF or a real error */
		*fd = -1;
	}
}

static void reap(struct h_proc *p, int wstatus)
{
	p->exited = true;
	p->seconds = h_now() - p->started;
	if (WIFEXITED(wstatus))
		p->status = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		p->status = 128 + WTERMSIG(wstatus);
	else
		p->status = -1;
	/* Whatever the child wrote before exiting is in the pipes now; a
	 * grandchild still holding them must not keep us here. */
	drain_fd(&p->out_fd, &p->out);
	drain_fd(&p->err_fd, &p->err);
	if (!p->out.data)
		buf_add(&p->out, "", 0);
	if (!p->err.data)
		buf_add(&p->err, "", 0);
}

/* One round of reaping and reading, of at most max_s. */
static void pump_step(struct h_proc *p, double max_s)
{
	int wstatus;
	pid_t w = waitpid(p->pid, &wstatus, WNOHANG);
	if (w == p->pid) {
		reap(p, wstatus);
		return;
	}
	struct pollfd fds[2] = {
		{.fd = p->out_fd, .events = POLLIN},
		{.fd = p->err_fd, .events = POLLIN},
	};
	int ms = max_s <= 0 ? 0 : max_s < 0.01 ? (int)(max_s * 1000) + 1 : 10;
	if (poll(fds, 2, ms) > 0) {
		drain_fd(&p->out_fd, &p->out);
		drain_fd(&p->err_fd, &p->err);
	}
}

bool h_proc_pump(struct h_proc *p, double timeout_s)
{
	struct patience w;
	patience_start(&w, p->pid, timeout_s);
	do /* at least once: a zero timeout still reaps and reads */
		pump_step(p, patience_left(&w));
	while (!p->exited && !patience_over(&w));
	patience_end(&w, "a run's end");
	return p->exited;
}

bool h_proc_wait_stdout(struct h_proc *p, const char *needle, double timeout_s)
{
	struct patience w;
	bool seen;
	patience_start(&w, p->pid, timeout_s);
	for (;;) {
		seen = p->out.data && strstr(p->out.data, needle);
		if (seen || p->exited || patience_over(&w))
			break;
		pump_step(p, 0.02);
	}
	patience_end(&w, needle);
	return seen;
}

bool h_proc_finish(struct h_proc *p, double timeout_s)
{
	if (p->pid <= 0)
		return false;
	if (h_proc_pump(p, timeout_s))
		return !p->timed_out;
	p->timed_out = true;
	kill(-p->pid, SIGKILL);
	kill(p->pid, SIGKILL);
	int wstatus;
	if (waitpid(p->pid, &wstatus, 0) == p->pid)
		reap(p, wstatus);
	return false;
}

void h_proc_signal(struct h_proc *p, int sig)
{
	if (p->pid > 0 && !p->exited)
		kill(p->pid, sig);
}

void h_proc_free(struct h_proc *p)
{
	if (p->pid > 0 && !p->exited) {
		kill(-p->pid, SIGKILL);
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		p->exited = true;
	}
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	p->out_fd = p->err_fd = -1;
	buf_free(&p->out);
	buf_free(&p->err);
}

bool h_run(struct h_proc *r, double timeout_s, const char *const argv[])
{
	if (!h_proc_start(r, argv))
		return false;
	return h_proc_finish(r, timeout_s);
}

char h_proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may contain spaces and parentheses: the state follows the
	 * last ')'. */
	char *rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' ? rp[2] : 0;
}

int h_tracer_pid(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[256];
	int tracer = -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

pid_t h_dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	cr_assert(pid > 0, "fork: %s", strerror(errno));
	waitpid(pid, NULL, 0);
	/* Reaped; the kernel hands PIDs out in increasing order, so it will
	 * not be reused within the few seconds a test takes. */
	return pid;
}

/* ---- paths ---------------------------------------------------------- */

const char *h_pytop(void)
{
	const char *bin = getenv("PYTOP_BIN");
	return bin && *bin ? bin : "./pytop";
}

char *h_workload(const char *file)
{
	const char *src = getenv("PYTOP_SRCDIR");
	return xasprintf("%s/tests/workloads/%s", src && *src ? src : ".", file);
}

char *h_tmpdir(void)
{
	char *dir = xstrdup("/tmp/pytop-test-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void h_rmtree(const char *dir)
{
	if (dir && strncmp(dir, "/tmp/pytop-test-", 16) == 0)
		nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

char *h_path(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

char *h_read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct h_buf b = {0};
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	if (!b.data)
		buf_add(&b, "", 0);
	return b.data;
}

/* p, when not NULL, is read from while waiting: a program that writes
 * much must not block on a full pipe, and what it wrote says why a file
 * never came. */
static bool wait_file_of(pid_t root, struct h_proc *p, const char *path, double timeout_s)
{
	struct patience w;
	bool there;
	patience_start(&w, root, timeout_s);
	while (!(there = access(path, F_OK) == 0) && !patience_over(&w)) {
		if (p != NULL && !p->exited)
			pump_step(p, 0.02);
		else
			h_sleep(0.02);
	}
	patience_end(&w, path);
	return there;
}

bool h_wait_file(const char *path, double timeout_s)
{
	return wait_file_of(0, NULL, path, timeout_s); /* no program: wall time */
}

bool h_proc_wait_file(struct h_proc *p, const char *path, double timeout_s)
{
	return wait_file_of(p->pid, p, path, timeout_s);
}

/* ---- interpreters --------------------------------------------------- */

void h_need_program(const char *program)
{
	const char *path = getenv("PATH");
	char *dirs = xstrdup(path ? path : "/usr/bin:/bin");
	bool found = false;
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save);
	     d && !found; d = strtok_r(NULL, ":", &save)) {
		char *candidate = xasprintf("%s/%s", d, program);
		found = access(candidate, X_OK) == 0;
		free(candidate);
	}
	free(dirs);
	if (!found)
		cr_skip_test("%s is not installed", program);
}

const char *h_need_python(const char *path)
{
	if (access(path, X_OK) != 0)
		cr_skip_test("interpreter %s is not installed", path);
	return path;
}

/* ---- the interpreter matrix ----------------------------------------- */

const struct h_python h_pythons[] = {
	{"py311_debian", "3.11", H_SRC_SYSTEM},
	{"py311_pyenv", "3.11", H_SRC_PYENV},
	{"py312_pyenv", "3.12", H_SRC_PYENV},
	{"py313_pyenv", "3.13", H_SRC_PYENV},
	{"py313_sid", "3.13", H_SRC_SID},
	{"py313_sid_shared", "3.13", H_SRC_SID_SHARED},
	{"py314_sid", "3.14", H_SRC_SID},
	{"py314_sid_shared", "3.14", H_SRC_SID_SHARED},
	{"py315_sid", "3.15", H_SRC_SID},
	{"py315_sid_shared", "3.15", H_SRC_SID_SHARED},
	{NULL, NULL, H_SRC_SYSTEM},
};

const struct h_python *h_python_slot(const char *slot)
{
	for (const struct h_python *py = h_pythons; py->slot; py++)
		if (strcmp(py->slot, slot) == 0)
			return py;
	return NULL;
}

static const char *source_name(enum h_py_source source)
{
	switch (source) {
	case H_SRC_SYSTEM: return "Debian";
	case H_SRC_PYENV: return "pyenv";
	case H_SRC_SID: return "sid";
	case H_SRC_SID_SHARED: return "sid, shared libpython";
	}
	return "?";
}

static char *pyenv_root(void)
{
	const char *root = getenv("PYENV_ROOT");
	if (root && *root)
		return xstrdup(root);
	const char *home = getenv("HOME");
	return xasprintf("%s/.pyenv", home && *home ? home : "/root");
}

/* The patch level of a pyenv version directory "3.X.N" (digits only: no
 * "3.13.0t" free-threaded or "3.12-dev" builds), -1 if it is not one. */
static long pyenv_patch(const char *name, const char *version)
{
	size_t vlen = strlen(version);
	if (strncmp(name, version, vlen) != 0 || name[vlen] != '.')
		return -1;
	const char *digits = name + vlen + 1;
	if (*digits == '\0' || strspn(digits, "0123456789") != strlen(digits))
		return -1;
	return strtol(digits, NULL, 10);
}

static char *find_pyenv(const struct h_python *py, char **why)
{
	char *root = pyenv_root();
	char *versions = xasprintf("%s/versions", root);
	char *best = NULL;
	long best_patch = -1;
	DIR *d = opendir(versions);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		long patch = pyenv_patch(e->d_name, py->version);
		if (patch <= best_patch)
			continue;
		char *path = xasprintf("%s/%s/bin/python%s", versions,
		                       e->d_name, py->version);
		if (access(path, X_OK) == 0) {
			free(best);
			best = path;
			best_patch = patch;
		} else {
			free(path);
		}
	}
	if (d)
		closedir(d);
	if (!best && why)
		*why = xasprintf("no %s.N/bin/python%s under %s", py->version,
		                 py->version, versions);
	free(versions);
	free(root);
	return best;
}

static char *pythons_list(enum h_py_source source)
{
	const char *dir = getenv("PYTOP_PYTHONS_DIR");
	const char *file = source == H_SRC_SID_SHARED ? "pythons-shared.txt"
	                                              : "pythons.txt";
	if (dir && *dir)
		return xasprintf("%s/%s", dir, file);
	const char *src = getenv("PYTOP_SRCDIR");
	return xasprintf("%s/build/pythons/%s", src && *src ? src : ".", file);
}

/* The line of a pythons.txt for `version`: "3.14 /abs/python3.14 [ENV=...]"
 * split in place; false if there is none. */
static bool list_entry(char *text, const char *version, char **path,
                       char **env)
{
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *fsave = NULL;
		char *v = strtok_r(line, " \t", &fsave);
		if (!v || v[0] == '#' || strcmp(v, version) != 0)
			continue;
		*path = strtok_r(NULL, " \t", &fsave);
		*env = strtok_r(NULL, " \t", &fsave);
		if (*path)
			return true;
	}
	return false;
}

/* Sets each NAME=value of "ENV=NAME=value,NAME=value" in this process. */
static void apply_env(const char *field)
{
	if (!field || strncmp(field, "ENV=", 4) != 0)
		return;
	char *list = xstrdup(field + 4);
	for (char *save = NULL, *kv = strtok_r(list, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		*eq = '\0';
		setenv(kv, eq + 1, 1);
	}
	free(list);
}

/* From pythons.txt / pythons-shared.txt; env_field (owned) receives the
 * line's third field, if any. */
static char *find_listed(const struct h_python *py, char **why,
                         char **env_field)
{
	char *list = pythons_list(py->source);
	char *text = h_read_file(list);
	char *path = NULL, *env = NULL, *found = NULL;
	if (!text) {
		if (why)
			*why = xasprintf("no %s: run scripts/fetch_pythons.sh",
			                 list);
	} else if (!list_entry(text, py->version, &path, &env)) {
		if (why)
			*why = xasprintf("not listed in %s: run "
			                 "scripts/fetch_pythons.sh", list);
	} else if (access(path, X_OK) != 0) {
		if (why)
			*why = xasprintf("%s (listed in %s) is not executable: "
			                 "run scripts/fetch_pythons.sh", path, list);
	} else {
		found = xstrdup(path);
		if (env_field && env)
			*env_field = xstrdup(env);
	}
	free(text);
	free(list);
	return found;
}

static char *find_python(const struct h_python *py, char **why,
                         char **env_field)
{
	if (py->source == H_SRC_PYENV)
		return find_pyenv(py, why);
	if (py->source == H_SRC_SID || py->source == H_SRC_SID_SHARED)
		return find_listed(py, why, env_field);
	char *path = xasprintf("/usr/bin/python%s", py->version);
	if (access(path, X_OK) == 0)
		return path;
	if (why)
		*why = xasprintf("%s is not installed", path);
	free(path);
	return NULL;
}

char *h_python_find(const struct h_python *py, char **why)
{
	if (why)
		*why = NULL;
	return find_python(py, why, NULL);
}

/* PYTOP_TEST_SLOTS="a,b" limits a run to those slots (the sanitizer and
 * distcheck runs use a few; the main run covers every slot). */
static bool slot_selected(const char *slot)
{
	const char *list = getenv("PYTOP_TEST_SLOTS");
	size_t n = strlen(slot);
	if (!list || !*list)
		return true;
	for (const char *p = list; (p = strstr(p, slot)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

char *h_need_python_slot(const char *slot)
{
	const struct h_python *py = h_python_slot(slot);
	cr_assert_not_null(py, "no interpreter slot named %s", slot);
	if (!slot_selected(slot))
		cr_skip_test("slot %s not in PYTOP_TEST_SLOTS=%s (this run covers a subset)",
		             slot, getenv("PYTOP_TEST_SLOTS"));
	char *why = NULL, *env = NULL;
	char *path = find_python(py, &why, &env);
	if (!path) {
		/* cr_skip_test does not return: copy the reason first. */
		char reason[512];
		snprintf(reason, sizeof reason, "python %s (%s) not available: %s",
		         py->version, source_name(py->source), why);
		free(why);
		cr_skip_test("%s", reason);
	}
	apply_env(env);
	free(env);
	return path;
}

/* ---- JSON ----------------------------------------------------------- */

json_t *h_json_lines(const char *text, int *bad_line)
{
	json_t *all = json_array();
	int lineno = 0;
	const char *p = text ? text : "";
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (len > 0) {
			json_error_t err;
			json_t *obj = json_loadb(p, len, 0, &err);
			if (!json_is_object(obj)) {
				json_decref(obj);
				json_decref(all);
				if (bad_line)
					*bad_line = lineno;
				return NULL;
			}
			json_array_append_new(all, obj);
		}
		p += len + (nl != NULL);
	}
	return all;
}

json_t *h_json_file(const char *path)
{
	json_error_t err;
	return json_load_file(path, 0, &err);
}

double h_num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	if (json_is_number(v))
		return json_number_value(v);
	if (json_is_boolean(v))
		return json_is_true(v);
	return 0;
}

json_t *h_func(json_t *snap, const char *name)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(snap, "functions"), i, f) {
		const char *n = json_string_value(json_object_get(f, "name"));
		if (n && strcmp(n, name) == 0)
			return f;
	}
	return NULL;
}

json_t *h_func_in(json_t *snap, const char *name, const char *file)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(snap, "functions"), i, f) {
		const char *n = json_string_value(json_object_get(f, "name"));
		const char *fl = json_string_value(json_object_get(f, "file"));
		if (n && fl && strcmp(n, name) == 0 && strcmp(fl, file) == 0)
			return f;
	}
	return NULL;
}

json_t *h_line_row(json_t *snap, const char *file_end, int line)
{
	json_t *l;
	size_t i;

	json_array_foreach(json_object_get(snap, "lines"), i, l) {
		const char *file = json_string_value(json_object_get(l, "file"));
		size_t n = file ? strlen(file) : 0, m = strlen(file_end);

		if (n >= m && strcmp(file + n - m, file_end) == 0 && h_num(l, "line") == line)
			return l;
	}
	return NULL;
}

static double func_pct(json_t *snap, const char *name, const char *key)
{
	json_t *f = h_func(snap, name);
	double samples = h_num(snap, "samples");
	if (!f || samples <= 0)
		return 0;
	return 100.0 * h_num(f, key) / samples;
}

double h_own_pct(json_t *snap, const char *name)
{
	return func_pct(snap, name, "own");
}

double h_total_pct(json_t *snap, const char *name)
{
	return func_pct(snap, name, "total");
}

/* The seconds the truth's timeline (cpu_split.py --timeline) has calls of
 * plan entry `index` in the Unix-time window [t0, t1]. */
static double timeline_seconds(json_t *timeline, size_t index, double t0,
                               double t1)
{
	double sum = 0;
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(timeline, "calls"), i, c) {
		double from = fmax(json_number_value(json_array_get(c, 1)), t0);
		double to = fmin(json_number_value(json_array_get(c, 2)), t1);

		if ((size_t)json_integer_value(json_array_get(c, 0)) == index && to > from)
			sum += to - from;
	}
	return sum;
}

/* h_truth_to_window: the whole run's truth counted the workload's time
 * before pytop's first tick and after its last too: in a CI run, hot_a
 * 51.9 % of the whole run and 48.2 % of pytop's samples, with no tick
 * missed, where hot_a's own truth is 50 %. */
void h_truth_to_window(json_t *truth, json_t *snap, const char *what)
{
	json_t *timeline = json_object_get(truth, "timeline");
	json_t *names = json_object_get(timeline, "names");
	json_t *calls = json_object_get(timeline, "calls");
	double t1 = h_num(snap, "time_us") / 1e6, t0 = t1 - h_num(snap, "elapsed");
	size_t n = json_array_size(calls);

	cr_assert_gt(n, 0, "%s: the truth has no timeline", what);
	/* Only the span the calls cover: the window's edges outside them are
	 * no function's time on either side. */
	t0 = fmax(t0, json_number_value(json_array_get(json_array_get(calls, 0), 1)));
	t1 = fmin(t1, json_number_value(json_array_get(json_array_get(calls, n - 1), 2)));
	cr_assert_gt(t1 - t0, 1.0, "%s: pytop's window and the workload's calls "
	             "overlap %.3f s", what, t1 - t0);
	for (size_t i = 0; i < json_array_size(names); i++) {
		json_t *f = json_object_get(json_object_get(truth, "functions"),
		                            json_string_value(json_array_get(names, i)));

		cr_assert_not_null(f);
		json_object_set_new(f, "seconds",
		                    json_real(timeline_seconds(timeline, i, t0, t1)));
	}
	h_note("%s: the truth cut to pytop's window, %.3f s of the workload's "
	       "%.3f s", what, t1 - t0, h_num(truth, "loop_wall"));
	json_object_set_new(truth, "loop_wall", json_real(t1 - t0));
}

double h_unsampled_pct(json_t *snap)
{
	double asked = h_num(snap, "requested_hz") * h_num(snap, "elapsed");

	return asked > 0 ? 100.0 * fmax(1.0 - h_num(snap, "ticks") / asked, 0.0) : 0;
}

/* ---- tmux ------------------------------------------------------------- */

static bool tmux(struct h_tmux *t, struct h_proc *r, const char *const args[])
{
	const char *argv[32] = {"tmux", "-L", t->sock, "-f", "/dev/null"};
	size_t n = 5;
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	bool ok = h_run(r, 10, argv) && r->status == 0;
	return ok;
}

static pid_t ask_pane_pid(struct h_tmux *t);

static bool tmux_ok(struct h_tmux *t, const char *const args[])
{
	struct h_proc r;
	bool ok = tmux(t, &r, args);
	h_proc_free(&r);
	return ok;
}

bool h_tmux_start(struct h_tmux *t, int w, int h, const char *script,
                  double lifetime_s)
{
	/* Unique per start: a server just killed may still hold its name. */
	snprintf(t->sock, sizeof t->sock, "pytop-test-%d-%ld", (int)getpid(),
	         (long)(fmod(h_now(), 1e4) * 1e5));
	t->started = false;
	char ws[16], hs[16], cmd[1024];
	snprintf(ws, sizeof ws, "%d", w);
	snprintf(hs, sizeof hs, "%d", h);
	/* The pane is a session of its own, and the kernel's autogroup
	 * scheduling weighs each session as an equal whatever the nice value
	 * of its processes: the pane's session takes this test's nice value,
	 * so that a test run at nice 19 beside the accuracy tests
	 * (scripts/quickstart.sh) gives way to them.  Without autogroups
	 * the file is missing, and nice alone does it.  The watchdog lives in
	 * the pane's session, outside Criterion's reach: it ends the server
	 * even if this test is killed on timeout. */
	errno = 0;
	int nice_now = getpriority(PRIO_PROCESS, 0);
	if (errno != 0 || nice_now < 0)
		nice_now = 0;
	snprintf(cmd, sizeof cmd,
	         "{ echo %d >/proc/self/autogroup; } 2>/dev/null; "
	         "(sleep %.0f; tmux -L %s kill-server) >/dev/null 2>&1 & "
	         "exec sh %s",
	         nice_now, lifetime_s, t->sock, script);
	const char *args[] = {"new-session", "-d", "-s", "t", "-x", ws, "-y",
	                      hs, cmd, NULL};
	struct h_proc r;
	bool ok = tmux(t, &r, args);
	if (!ok)
		cr_log_error("tmux new-session failed (%d): %s", r.status,
		             r.err.data ? r.err.data : "");
	h_proc_free(&r);
	t->started = ok;
	t->pane = 0;
	if (ok) {
		const char *opt[] = {"set-option", "-g", "remain-on-exit", "on",
		                     NULL};
		tmux_ok(t, opt);
		t->pane = ask_pane_pid(t);
	}
	return ok;
}

static char *capture(struct h_tmux *t, bool attrs)
{
	const char *args[] = {"capture-pane", "-p", "-t", "t",
	                      attrs ? "-e" : NULL, NULL};
	struct h_proc r;
	char *text = NULL;
	if (tmux(t, &r, args)) {
		text = r.out.data;
		r.out.data = NULL; /* take ownership */
	}
	h_proc_free(&r);
	return text;
}

char *h_tmux_capture(struct h_tmux *t)
{
	return capture(t, false);
}

char *h_tmux_capture_attrs(struct h_tmux *t)
{
	return capture(t, true);
}

/* A capture can catch the terminal half way through one update (a title
 * already new, old rows half scrolled away), so a capture that satisfies a
 * wait is trusted only when another one a moment later still does; that
 * later one is returned.  NULL (and `text` freed) when it no longer does. */
static char *settled(struct h_tmux *t, char *text, const char *needle,
                     bool present)
{
	h_sleep(0.2);
	char *again = h_tmux_capture(t);
	free(text);
	if (again && (strstr(again, needle) != NULL) == present)
		return again;
	free(again);
	return NULL;
}

char *h_tmux_settled(struct h_tmux *t, const char *needle, bool present)
{
	char *text = h_tmux_capture(t);
	if (text == NULL || (strstr(text, needle) != NULL) != present) {
		free(text);
		return NULL;
	}
	return settled(t, text, needle, present);
}

char *h_tmux_wait_for(struct h_tmux *t, const char *needle, double timeout_s,
                      char **last)
{
	struct patience w;
	char *text = NULL;
	patience_start(&w, t->pane, timeout_s);
	for (;;) {
		free(text);
		text = h_tmux_capture(t);
		if (text && strstr(text, needle) && (text = settled(t, text,
		                                                    needle, true))) {
			if (last)
				*last = NULL;
			patience_end(&w, needle);
			return text;
		}
		if (patience_over(&w))
			break;
		h_sleep(0.1);
	}
	patience_end(&w, needle);
	if (last)
		*last = text;
	else
		free(text);
	return NULL;
}

bool h_tmux_wait_file(struct h_tmux *t, const char *path, double timeout_s)
{
	return wait_file_of(t->pane, NULL, path, timeout_s);
}


bool h_tmux_keys(struct h_tmux *t, const char *const keys[])
{
	const char *args[24] = {"send-keys", "-t", "t"};
	size_t n = 3;
	for (size_t i = 0; keys[i] && n < 23; i++)
		args[n++] = keys[i];
	args[n] = NULL;
	return tmux_ok(t, args);
}

bool h_tmux_literal(struct h_tmux *t, const char *text)
{
	const char *args[] = {"send-keys", "-t", "t", "-l", text, NULL};
	return tmux_ok(t, args);
}

bool h_tmux_resize(struct h_tmux *t, int w, int h)
{
	char ws[16], hs[16];
	snprintf(ws, sizeof ws, "%d", w);
	snprintf(hs, sizeof hs, "%d", h);
	const char *args[] = {"resize-window", "-t", "t", "-x", ws, "-y", hs,
	                      NULL};
	return tmux_ok(t, args);
}

pid_t h_tmux_pane_pid(struct h_tmux *t)
{
	return t->pane;
}

/* The pane's first process, asked of tmux once (h_tmux_start): it lives
 * as long as the pane, exec or not. */
static pid_t ask_pane_pid(struct h_tmux *t)
{
	const char *args[] = {"display-message", "-p", "-t", "t",
	                      "#{pane_pid}", NULL};
	struct h_proc r;
	pid_t pid = 0;
	if (tmux(t, &r, args))
		pid = (pid_t)atoi(r.out.data);
	h_proc_free(&r);
	return pid;
}

void h_tmux_kill(struct h_tmux *t)
{
	if (!t->started)
		return;
	const char *args[] = {"kill-server", NULL};
	tmux_ok(t, args);
	t->started = false;
}

pid_t h_find_child(pid_t parent, const char *comm)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	pid_t found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
		if (!lp || !rp)
			continue;
		int ppid = 0;
		char state;
		if (sscanf(rp + 2, "%c %d", &state, &ppid) != 2)
			continue;
		*rp = '\0';
		if (ppid == parent && strcmp(lp + 1, comm) == 0)
			found = (pid_t)pid;
	}
	closedir(d);
	return found;
}

/* ---- the loaded mode ------------------------------------------------ */

/* A competitor: burns CPU until killed, and dies with the runner that
 * started it even if that runner is killed (SIGKILL leaves no chance to
 * clean up, PDEATHSIG does it for us). */
static void hog(pid_t runner)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != runner) /* the runner died before the prctl */
		_exit(0);
	prctl(PR_SET_NAME, "pytop-test-hog");
	/* Hold none of the runner's descriptors: a pipe the TAP driver
	 * reads to its end must not stay open in a competitor. */
	int devnull = open("/dev/null", O_RDWR);
	for (int fd = 0; fd < 3 && devnull >= 0; fd++)
		dup2(devnull, fd);
	close_range(3, ~0U, 0);
	for (volatile unsigned long spin = 0;; spin++)
		;
}

int h_load_start(struct h_load *load)
{
	const char *mode = getenv("PYTOP_TEST_LOAD");
	*load = (struct h_load){.pgid = -1};
	if (mode == NULL || strcmp(mode, "1") != 0)
		return 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	pid_t runner = getpid();
	for (long i = 0; i < (cores > 0 ? cores : 1); i++) {
		pid_t pid = fork();
		if (pid == 0) {
			setpgid(0, load->pgid > 0 ? load->pgid : 0);
			hog(runner);
		}
		if (pid < 0)
			break;
		/* From both sides, so that the group exists before the next
		 * fork and before any kill. */
		setpgid(pid, load->pgid > 0 ? load->pgid : pid);
		if (load->pgid < 0)
			load->pgid = pid;
		load->hogs++;
	}
	h_note("load: %d CPU-bound competitors, one per online core "
	       "(PYTOP_TEST_LOAD=1)", load->hogs);
	return load->hogs;
}

void h_load_stop(struct h_load *load)
{
	if (load->pgid <= 0)
		return;
	kill(-load->pgid, SIGKILL);
	/* Reap them; one may already have been reaped by Criterion's own
	 * child handling (ECHILD), which is as good. */
	while (load->hogs > 0 && waitpid(-load->pgid, NULL, 0) > 0)
		load->hogs--;
	*load = (struct h_load){.pgid = -1};
}

int h_main_one_at_a_time(int argc, char *argv[])
{
	h_keep_notes();
	struct criterion_test_set *tests = criterion_initialize();
	struct h_load load = {.pgid = -1};
	int result = 0;
	if (criterion_handle_args(argc, argv, true)) {
		if (!getenv("CRITERION_JOBS"))
			criterion_options.jobs = 1;
		h_load_start(&load);
		result = !criterion_run_all_tests(tests);
		h_load_stop(&load);
	}
	criterion_finalize(tests);
	return result;
}
