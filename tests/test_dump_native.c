/* test_dump_native.c - pytop dump --native: the C frames of each thread
 * merged into its stack as the live view merges them, and nothing left
 * stopped or traced.
 *
 * On tests/native_target (a C program whose time goes to hot_a and hot_b,
 * built with -g) the dump must show main and, innermost, one of the hot
 * functions, named with their source file and line.  On
 * tests/workloads/zlib_loop.py (zlib.compress in a loop inside squeeze())
 * the dump must show libz's frames inside squeeze's Python frame, in
 * text and in JSON.  A dump shows one instant: each case dumps until it
 * sees the hot code (most instants are there), a few times at most.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "native_target_path.h"

#define TIMEOUT_S 30.0
#define TRIES 10

/* One dump of pid (JSON or text) with --native; the target must be left
 * running, untraced. */
static void dump(pid_t pid, bool json, struct h_proc *r)
{
	char p[16];

	snprintf(p, sizeof p, "%d", (int)pid);
	const char *argv[] = { h_pytop(), "dump", "--native", "-p", p, json ? "--json" : NULL,
	                       NULL };
	cr_assert(h_run(r, TIMEOUT_S, argv), "pytop dump --native did not finish");
	cr_assert_eq(r->status, 0, "pytop dump --native exited %d: %s", r->status, r->err.data);
	cr_assert(h_proc_state(pid) != 'T' && h_proc_state(pid) != 't' && h_tracer_pid(pid) == 0,
	          "the target was left stopped or traced");
}

static json_t *dump_json(pid_t pid)
{
	struct h_proc r;
	json_error_t e;
	json_t *j;

	dump(pid, true, &r);
	j = json_loads(r.out.data, 0, &e);
	cr_assert_not_null(j, "not JSON (%s):\n%s", e.text, r.out.data);
	h_proc_free(&r);
	return j;
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* The index of the first frame of thread t (outermost first) from `from`
 * on named name (NULL: any) whose module contains module (NULL: a Python
 * frame; "": any native one); -1 when none. */
static long find_frame(json_t *t, size_t from, const char *name, const char *module)
{
	json_t *frames = json_object_get(t, "frames");

	for (size_t i = from; i < json_array_size(frames); i++) {
		json_t *f = json_array_get(frames, i);
		bool native = strcmp(str(f, "kind"), "native") == 0;

		if (name != NULL && strcmp(str(f, "function"), name) != 0)
			continue;
		if (module == NULL ? !native : native && strstr(str(f, "module"), module) != NULL)
			return (long)i;
	}
	return -1;
}

Test(dump_native, c_program, .timeout = TIMEOUT_S * 2)
{
	char *target = native_target_path(), *dir = h_tmpdir(), *truth = h_path(dir, "truth");
	const char *argv[] = { target, "20", truth, NULL };
	struct h_proc w;
	bool hot = false;

	cr_assert(h_proc_start(&w, argv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 10));
	for (int i = 0; i < TRIES && !hot; i++) {
		json_t *d = dump_json(w.pid), *t = json_array_get(json_object_get(d, "threads"), 0);
		json_t *frames = json_object_get(t, "frames");
		json_t *leaf = json_array_get(frames, json_array_size(frames) - 1);
		long m = find_frame(t, 0, "main", "native_target");

		cr_assert_eq(json_array_size(json_object_get(d, "threads")), 1, "one thread");
		cr_assert_eq(json_integer_value(json_object_get(t, "tid")), w.pid);
		cr_expect(json_is_null(json_object_get(t, "native_error")),
		          "its C frames are missing: %s", str(t, "native_error"));
		cr_assert_geq(m, 0, "no main frame in dump %d", i);
		if (strcmp(str(leaf, "function"), "hot_a") == 0 ||
		    strcmp(str(leaf, "function"), "hot_b") == 0) {
			hot = true;
			cr_expect(strstr(str(leaf, "file"), "native_target.c") != NULL,
			          "%s's file: %s", str(leaf, "function"), str(leaf, "file"));
			cr_expect_gt(json_integer_value(json_object_get(leaf, "line")), 0,
			             "%s has no line", str(leaf, "function"));
			cr_expect_gt(find_frame(t, 0, str(leaf, "function"), "native_target"), m,
			             "the hot function is not inside main");
			h_note("c_program: dump %d ends in %s (%s:%lld)", i, str(leaf, "function"),
			       str(leaf, "file"), json_integer_value(json_object_get(leaf, "line")));
		}
		json_decref(d);
	}
	cr_expect(hot, "no dump in %d ended in hot_a or hot_b", TRIES);
	h_proc_signal(&w, SIGTERM);
	h_proc_finish(&w, 10);
	h_proc_free(&w);
	h_rmtree(dir);
	free(dir), free(truth), free(target);
}

/* libz's frames inside squeeze, outermost first: <module>, squeeze, then
 * zlib.compress's C frames. */
static void zlib_in_squeeze(const char *slot)
{
	char *python = h_need_python_slot(slot), *wl = h_workload("zlib_loop.py");
	const char *argv[] = { python, wl, "25", NULL };
	struct h_proc w;
	bool seen = false, text_seen = false;

	cr_assert(h_proc_start(&w, argv));
	cr_assert(h_proc_wait_stdout(&w, "ready", 15), "%s: the workload did not start", slot);
	for (int i = 0; i < TRIES && !seen; i++) {
		json_t *d = dump_json(w.pid), *t = json_array_get(json_object_get(d, "threads"), 0);
		long mod = find_frame(t, 0, "<module>", NULL), sq = find_frame(t, 0, "squeeze", NULL);
		long z = sq >= 0 ? find_frame(t, (size_t)sq + 1, NULL, "libz") : -1;

		cr_assert(mod >= 0 && sq > mod, "%s: dump %d lacks <module> -> squeeze", slot, i);
		seen = z > sq;
		if (seen)
			h_note("%s: dump %d: squeeze -> %s [%s]", slot, i,
			       str(json_array_get(json_object_get(t, "frames"), (size_t)z), "function"),
			       str(json_array_get(json_object_get(t, "frames"), (size_t)z), "module"));
		json_decref(d);
	}
	cr_expect(seen, "%s: no dump in %d showed libz inside squeeze", slot, TRIES);
	for (int i = 0; i < TRIES && !text_seen; i++) {
		struct h_proc r;
		char *sq, *z;

		dump(w.pid, false, &r);
		sq = strstr(r.out.data, "    squeeze (");
		z = sq != NULL ? strstr(sq, " [libz") : NULL;
		text_seen = z != NULL;
		if (i + 1 == TRIES && !text_seen)
			h_note("%s: last text dump:\n%s", slot, r.out.data);
		h_proc_free(&r);
	}
	cr_expect(text_seen, "%s: no text dump showed a [libz...] frame under squeeze", slot);
	h_proc_signal(&w, SIGTERM);
	h_proc_finish(&w, 10);
	h_proc_free(&w);
	free(python), free(wl);
}

Test(dump_native, zlib_py311_debian, .timeout = TIMEOUT_S * 2) { zlib_in_squeeze("py311_debian"); }
Test(dump_native, zlib_py312_pyenv, .timeout = TIMEOUT_S * 2) { zlib_in_squeeze("py312_pyenv"); }
Test(dump_native, zlib_py314_sid, .timeout = TIMEOUT_S * 2) { zlib_in_squeeze("py314_sid"); }
