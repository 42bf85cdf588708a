/* test_thread_py_names.c - the names a program gives its threads
 * (threading.Thread(name=...), renamed later, the main thread's), live:
 * in the JSON snapshot's threads (py_name) and on the threads screen, on
 * every interpreter the harness finds.
 *
 * tests/workloads/thread_names.py starts three threads (one named with
 * control and bidirectional characters), renames one of them once pytop
 * has seen it and renames the main thread, and writes every thread's
 * native id and final name.  pytop must show exactly those names, the
 * hostile one escaped as code names are (py_name_text.h), and the
 * renamed thread's new name, which only a re-read can find.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define RUN_S "3"        /* the workload's life in the JSON run */
#define TUI_RUN_S "30"     /* ... on the screen: ended by q before */
#define TIMEOUT_S 30.0
#define TUI_WAIT_S 15.0
#define TUI_LIFETIME_S 60

/* What pytop must show for a name the workload wrote: the C0 controls and
 * U+202E (all the workload uses of what py_name_text.h escapes) as
 * \xNN and \u202e, the rest as it is. */
static void escaped(const char *raw, char *out, size_t size)
{
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)raw; *s && o + 8 < size; s++) {
		if (*s < 0x20 || *s == 0x7f) {
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", *s);
		} else if (s[0] == 0xe2 && s[1] == 0x80 && s[2] == 0xae) {
			o += (size_t)snprintf(out + o, size - o, "\\u202e");
			s += 2;
		} else {
			out[o++] = (char)*s;
		}
	}
	out[o] = '\0';
}

static json_t *truth_names(const char *dir)
{
	char *path = h_path(dir, "truth.json");
	json_t *truth;

	cr_assert(h_wait_file(path, TIMEOUT_S), "the workload wrote no truth");
	truth = h_json_file(path);
	cr_assert_not_null(truth, "the truth is no JSON");
	free(path);
	return json_object_get(truth, "names") != NULL ? truth : NULL;
}

static json_t *thread_of(json_t *snap, long long tid)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(snap, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "tid")) == tid)
			return t;
	return NULL;
}

static void names_in_json(const char *slot)
{
	char *python = h_need_python_slot(slot), *wl = h_workload("thread_names.py");
	char *dir = h_tmpdir(), *truth_path = h_path(dir, "truth.json"), want[512];
	const char *argv[] = { h_pytop(), "-b", "--json", "-d", "1", "--", python, wl,
	                       truth_path, RUN_S, NULL };
	struct h_proc r;
	json_t *snaps, *last, *truth, *name;
	const char *tid;
	int bad = 0;

	cr_assert(h_run(&r, TIMEOUT_S, argv), "%s: pytop did not finish", slot);
	cr_assert_eq(r.status, 0, "%s: pytop exited %d: %s", slot, r.status, r.err.data);
	snaps = h_json_lines(r.out.data, &bad);
	cr_assert(snaps != NULL && json_array_size(snaps) > 0, "%s: no JSON (line %d):\n%s",
	          slot, bad, r.out.data);
	last = json_array_get(snaps, json_array_size(snaps) - 1);
	truth = truth_names(dir);
	cr_assert_not_null(truth, "%s: no names in the truth", slot);
	json_object_foreach(json_object_get(truth, "names"), tid, name) {
		json_t *t = thread_of(last, strtoll(tid, NULL, 10));
		const char *got;

		cr_assert_not_null(t, "%s: thread %s (%s) missing", slot, tid,
		                   json_string_value(name));
		escaped(json_string_value(name), want, sizeof want);
		got = json_string_value(json_object_get(t, "py_name"));
		cr_expect(got != NULL && strcmp(got, want) == 0,
		          "%s: thread %s is named \"%s\", pytop says \"%s\"", slot, tid, want,
		          got != NULL ? got : "(no py_name)");
		/* The OS name is kept beside it, whatever it is. */
		cr_expect(json_is_string(json_object_get(t, "name")), "%s: the OS name is gone",
		          slot);
	}
	char *names = json_dumps(json_object_get(truth, "names"), JSON_COMPACT);

	h_note("%s: %zu snapshots, thread names %s", slot, json_array_size(snaps),
	       names != NULL ? names : "?");
	free(names);
	json_decref(truth);
	json_decref(snaps);
	h_proc_free(&r);
	h_rmtree(dir);
	free(dir), free(truth_path), free(python), free(wl);
}

/* The threads screen of the TUI on the same workload shows the names. */
static void names_on_screen(const char *slot)
{
	char *python = h_need_python_slot(slot), *wl = h_workload("thread_names.py");
	char *dir = h_tmpdir(), *script = h_path(dir, "run.sh"), *truth_path;
	struct h_tmux tmux = { 0 };
	const char *const threads_key[] = { "t", NULL }, *const quit[] = { "q", NULL };
	static const char *const want[] = { "main-renamed", "alpha-worker", "after-rename",
	                                    "bad\\x1b[2J\\u202e!" };
	FILE *f = fopen(script, "w");

	truth_path = h_path(dir, "truth.json");
	cr_assert_not_null(f);
	fprintf(f, "%s -d 0.5 -- '%s' '%s' '%s' %s\necho PYTOP-DONE\nexec sleep %d\n", h_pytop(),
	        python, wl, truth_path, TUI_RUN_S, TUI_LIFETIME_S);
	fclose(f);
	cr_assert(h_tmux_start(&tmux, 100, 24, script, TUI_LIFETIME_S), "cannot start tmux");
	cr_assert(h_tmux_wait_file(&tmux, truth_path, TIMEOUT_S), "%s: the workload wrote no truth", slot);
	h_tmux_keys(&tmux, threads_key);
	for (size_t i = 0, missing = 0; i < sizeof want / sizeof want[0]; i++) {
		/* Once one name is missing the screen is not coming: the
		 * others are only looked for briefly. */
		char *last = NULL, *screen = h_tmux_wait_for(&tmux, want[i],
		                                             missing ? 1.0 : TUI_WAIT_S, &last);

		missing += screen == NULL;
		cr_expect_not_null(screen, "%s: \"%s\" never shown on the threads screen:\n%s",
		                   slot, want[i], last != NULL ? last : "(no capture)");
		if (screen != NULL && i + 1 == sizeof want / sizeof want[0])
			h_note("%s: threads screen:\n%s", slot, screen);
		free(screen);
		free(last);
	}
	h_tmux_keys(&tmux, quit);
	free(h_tmux_wait_for(&tmux, "PYTOP-DONE", TUI_WAIT_S, NULL));
	h_tmux_kill(&tmux);
	h_rmtree(dir);
	free(dir), free(script), free(truth_path), free(python), free(wl);
}

#define ON(slot)                                                              \
	Test(thread_py_names, json_##slot, .timeout = TIMEOUT_S + 10)         \
	{                                                                     \
		names_in_json(#slot);                                         \
	}

ON(py311_debian)
ON(py311_pyenv)
ON(py312_pyenv)
ON(py313_pyenv)
ON(py313_sid)
ON(py313_sid_shared)
ON(py314_sid)
ON(py314_sid_shared)
ON(py315_sid)
ON(py315_sid_shared)

Test(thread_py_names, screen_py311_debian, .timeout = TIMEOUT_S + 30)
{
	names_on_screen("py311_debian");
}

Test(thread_py_names, screen_py314_sid, .timeout = TIMEOUT_S + 30)
{
	names_on_screen("py314_sid");
}
