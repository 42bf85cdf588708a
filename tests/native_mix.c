/* native_mix.c - the native accuracy tests' shared run and figures. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "native_mix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *native_profile(pid_t pid, const char *method, const char *seconds,
                       const char *rate, json_t **lines)
{
	char pidarg[16];
	struct h_proc p;
	int bad = 0;
	json_t *last;

	snprintf(pidarg, sizeof pidarg, "%d", (int)pid);
	const char *argv[] = { h_pytop(), method, "-b", "--json", "-r", rate, "-d", "1",
	                       "--duration", seconds, "-p", pidarg, NULL };
	cr_assert(h_run(&p, NATIVE_MIX_TIMEOUT_S, argv), "pytop %s did not finish: %s",
	          method, p.err.data);
	cr_assert_eq(p.status, 0, "pytop %s exited with %d: %s", method, p.status,
	             p.err.data);
	*lines = h_json_lines(p.out.data, &bad);
	cr_assert_not_null(*lines, "line %d is not JSON", bad);
	cr_assert_gt(json_array_size(*lines), 0);
	last = json_array_get(*lines, json_array_size(*lines) - 1);
	h_proc_free(&p);
	return last;
}

void native_mix_run(struct native_mix *m, const char *slot,
                    const char *method, const char *rate)
{
	m->python = h_need_python_slot(slot);
	m->dir = h_tmpdir();
	m->wl = h_workload("native_mix.py");
	m->truth_path = h_path(m->dir, "truth.json");
	const char *wargv[] = { m->python, m->wl, "--seconds", "4", "--truth",
	                        m->truth_path, NULL };

	cr_assert(h_proc_start(&m->w, wargv));
	cr_assert(h_proc_wait_stdout(&m->w, "ready", 15), "%s: workload not ready", slot);
	m->snap = native_profile(m->w.pid, method, "2.5", rate, &m->lines);
	cr_assert(h_proc_finish(&m->w, 15), "%s: workload did not finish", slot);
	m->truth = h_json_file(m->truth_path);
	cr_assert_not_null(m->truth, "%s: no truth", slot);
}

void native_mix_free(struct native_mix *m)
{
	json_decref(m->lines);
	json_decref(m->truth);
	h_proc_free(&m->w);
	h_rmtree(m->dir);
	free(m->python), free(m->dir), free(m->wl), free(m->truth_path);
}

double native_mix_measured(json_t *snap, json_t *truth, double *seconds)
{
	json_t *calls = json_object_get(truth, "calls"), *py_line, *c;
	double samples = 0;
	const char *name;
	size_t k;

	*seconds = h_num(truth, "python");
	json_array_foreach(json_object_get(truth, "python_lines"), k, py_line) {
		json_t *row = h_line_row(snap, "native_mix.py", (int)json_number_value(py_line));
		samples += row ? h_num(row, "total") : 0;
	}
	json_object_foreach(calls, name, c) {
		json_t *row = h_line_row(snap, "native_mix.py", (int)h_num(c, "line"));

		*seconds += h_num(c, "seconds");
		samples += row ? h_num(row, "total") : 0;
	}
	return samples;
}

struct native_callees native_callees_of(json_t *line, const char *module)
{
	struct native_callees sum = {0};
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(line, "native_callees"), i, c) {
		const char *mod = json_string_value(json_object_get(c, "module"));

		if (i == 0)
			sum.top_module = mod;
		sum.all += h_num(c, "own");
		if (mod != NULL && strstr(mod, module) != NULL)
			sum.in_module += h_num(c, "own");
	}
	return sum;
}
