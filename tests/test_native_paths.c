/* test_native_paths.c - pytop --native never opens a library by the path
 * the target's maps give for it.  The target is a Python program in a
 * chroot of its own (a container without the container runtime): it
 * loads a copy of libbz2 from its root's /hot and calls into it in a
 * loop.  Its maps name that copy by the host's path, ROOT/hot/libhot.so;
 * an unwinder that opens that path in the target's root (libunwind-ptrace
 * does: /proc/PID/root/ROOT/hot/libhot.so) opens ROOT/ROOT/hot/libhot.so
 * on the host, a file of the target's user.  There the test plants a FIFO
 * (an open() of it blocks pytop) or a symbolic link to a decoy (an open()
 * follows it as root; inotify sees it).  pytop must end in time, open
 * nothing there, and still unwind through the library to the Python line
 * that called it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define TIMEOUT_S 40
#define PYTOP_LIMIT_S 15.0 /* a --duration 2 run that takes longer hangs */
/* Not loaded by the interpreter itself (libz is: its copy's calls to
 * deflate() would bind to the interpreter's libz, not the copy's). */
#define LIBBZ2 "/lib/x86_64-linux-gnu/libbz2.so.1.0"
#define CALL_LINE 9        /* the library call in TARGET_PY */
/* Of the caller line's samples (nearly all its time is in the call), at
 * least this share must be in the library, and have been unwound from
 * there to the library's entry point and on into its caller, libffi: the
 * library's code keeps no frame pointers, so that needs its unwind table. */
#define MIN_IN_LIB 0.5
#define LIB_ENTRY "BZ2_bzBuffToBuffCompress"
#define LIB_CALLER "ffi_call"

static const char TARGET_PY[] =
	"import ctypes, os, sys\n"
	"lib = ctypes.CDLL(sys.argv[1])\n"
	"src = bytes(range(256)) * 1024 + os.urandom(1 << 18)\n"
	"dst = ctypes.create_string_buffer(len(src) * 2)\n"
	"n = ctypes.c_uint()\n"
	"print('ready', flush=True)\n"
	"while True:\n"
	"    n.value = len(dst)\n"
	"    lib.BZ2_bzBuffToBuffCompress(dst, ctypes.byref(n), src, len(src), 9, 0, 0)\n";

static void copy_file(const char *from, const char *to)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "cp '%s' '%s'", from, to) > 0);
	cr_assert_eq(system(cmd), 0, "could not copy %s to %s", from, to);
	free(cmd);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
}

/* The line's native callees: own samples in all, and in the library. */
static void callees_of(json_t *line, double *all, double *in_lib)
{
	json_t *c;
	size_t i;

	*all = *in_lib = 0;
	json_array_foreach(json_object_get(line, "native_callees"), i, c) {
		const char *mod = json_string_value(json_object_get(c, "module"));

		*all += h_num(c, "own");
		if (mod != NULL && strstr(mod, "libhot") != NULL)
			*in_lib += h_num(c, "own");
	}
}

enum swap { SWAP_FIFO, SWAP_LINK };

/* mkdir -p for the test's own directories. */
static void make_dirs(const char *path)
{
	char *cmd;

	cr_assert(asprintf(&cmd, "mkdir -p '%s'", path) > 0);
	cr_assert_eq(system(cmd), 0, "could not create %s", path);
	free(cmd);
}

/* ROOT: /usr bound in (inside the target's own mount namespace only), the
 * merged-/usr links, the program and the library copy. */
static void make_root(const char *root)
{
	char *p;
	const char *links[][2] = { { "usr/lib", "lib" }, { "usr/lib64", "lib64" },
	                           { "usr/bin", "bin" } };

	p = h_path(root, "usr"), make_dirs(p), free(p);
	p = h_path(root, "hot"), make_dirs(p), free(p);
	for (size_t i = 0; i < 3; i++) {
		p = h_path(root, links[i][1]);
		cr_assert_eq(symlink(links[i][0], p), 0, "%s: %s", p, strerror(errno));
		free(p);
	}
	p = h_path(root, "hot/libhot.so"), copy_file(LIBBZ2, p), free(p);
	p = h_path(root, "t.py"), write_file(p, TARGET_PY), free(p);
}

static void swapped_library(enum swap how)
{
	const char *python = h_need_python(H_PY_DEBIAN);
	char *dir, *root, *shadow, *trap, *decoy, *script, pidarg[16], ev[4096];
	struct h_proc w, p;
	int watch = -1, bad = 0;
	json_t *lines, *snap, *row, *entry, *caller;
	double all, in_lib;

	if (geteuid() != 0)
		cr_skip_test("the chrooted target needs root (mount, chroot)");
	h_need_program("unshare");
	h_need_program("chroot");
	if (access(LIBBZ2, R_OK) != 0)
		cr_skip_test("%s is not installed (Debian: libbz2-1.0)", LIBBZ2);
	dir = h_tmpdir();
	root = h_path(dir, "root");
	decoy = h_path(dir, "decoy.so");
	make_root(root);
	/* ROOT/ROOT/hot: where the target's root holds the host's path. */
	cr_assert(asprintf(&shadow, "%s%s/hot", root, root) > 0);
	make_dirs(shadow);
	trap = h_path(shadow, "libhot.so");
	if (how == SWAP_FIFO) {
		cr_assert_eq(mkfifo(trap, 0666), 0, "mkfifo: %s", strerror(errno));
	} else {
		copy_file(LIBBZ2, decoy);
		watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		cr_assert_geq(watch, 0);
		cr_assert_geq(inotify_add_watch(watch, decoy, IN_OPEN), 0);
		cr_assert_eq(symlink(decoy, trap), 0, "symlink: %s", strerror(errno));
	}
	cr_assert(asprintf(&script, "mount --bind /usr '%s/usr' && exec chroot '%s' %s /t.py "
	                   "/hot/libhot.so", root, root, python) > 0);
	const char *wargv[] = { "unshare", "-m", "--propagation", "private", "sh", "-c",
	                        script, NULL };
	cr_assert(h_proc_start(&w, wargv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 15), "target not ready: %s", w.err.data);

	snprintf(pidarg, sizeof pidarg, "%d", (int)w.pid);
	const char *argv[] = { h_pytop(), "--native", "-b", "--json", "-r", "200", "-d", "1",
	                       "--duration", "2", "-p", pidarg, NULL };
	bool ended = h_run(&p, PYTOP_LIMIT_S, argv);
	h_note("%s: pytop ran %.1f s", how == SWAP_FIFO ? "fifo" : "link", p.seconds);
	cr_assert(ended, "pytop --native did not end within %.0f s (blocked opening the "
	          "library's path?)", PYTOP_LIMIT_S);
	cr_assert_eq(p.status, 0, "pytop --native exited with %d: %s", p.status, p.err.data);
	if (how == SWAP_LINK)
		cr_expect_eq(read(watch, ev, sizeof ev), -1,
		             "pytop opened the file a link at the library's path names");

	lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(lines, "line %d is not JSON", bad);
	snap = json_array_get(lines, json_array_size(lines) - 1);
	row = h_line_row(snap, "t.py", CALL_LINE);
	cr_assert_not_null(row, "no row for the library call's line");
	callees_of(row, &all, &in_lib);
	h_note("%s: %.0f samples; call line %.0f, native under it %.0f, in the library %.0f",
	       how == SWAP_FIFO ? "fifo" : "link", h_num(snap, "samples"), h_num(row, "total"),
	       all, in_lib);
	cr_expect_geq(in_lib, MIN_IN_LIB * h_num(row, "total"),
	              "only %.0f of the call line's %.0f samples are in the library",
	              in_lib, h_num(row, "total"));
	entry = h_func(snap, LIB_ENTRY);
	caller = h_func(snap, LIB_CALLER);
	h_note("%s: %s total %.0f, %s total %.0f", how == SWAP_FIFO ? "fifo" : "link",
	       LIB_ENTRY, entry ? h_num(entry, "total") : 0, LIB_CALLER,
	       caller ? h_num(caller, "total") : 0);
	cr_expect(entry != NULL && h_num(entry, "total") >= MIN_IN_LIB * h_num(row, "total"),
	          "the unwind did not reach the library's entry point %s", LIB_ENTRY);
	cr_expect(caller != NULL && h_num(caller, "total") >= MIN_IN_LIB * h_num(row, "total"),
	          "the unwind did not leave the library for its caller %s", LIB_CALLER);

	json_decref(lines);
	h_proc_free(&p);
	h_proc_free(&w);
	if (watch >= 0)
		close(watch);
	h_rmtree(dir);
	free(dir), free(root), free(shadow), free(trap), free(decoy), free(script);
}

Test(native_paths, library_path_now_a_fifo, .timeout = TIMEOUT_S)
{
	swapped_library(SWAP_FIFO);
}

Test(native_paths, library_path_now_a_link, .timeout = TIMEOUT_S)
{
	swapped_library(SWAP_LINK);
}

int main(int argc, char *argv[])
{
	return h_main_one_at_a_time(argc, argv);
}
