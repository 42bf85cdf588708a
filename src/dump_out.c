/* dump_out.c - `pytop dump`'s two outputs, text and JSON, from the model
 * of dump.h.  Every string in it that came from the target is already
 * escaped or checked (names by the reader, source lines by source_lines.h,
 * values by py_repr.h), so the text goes out as it is. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "dump.h"

#include <jansson.h>
#include <string.h>

static const char *state_text(const struct dump *d, const char *state)
{
	if (d->python_version[0] == '\0') /* --native on a program without Python */
		return strcmp(state, "running") == 0 ? "running" : "idle";
	if (strcmp(state, "running_gil") == 0)
		return "running, holds the GIL";
	if (strcmp(state, "running") == 0)
		return "running without the GIL";
	if (strcmp(state, "gil_wait") == 0)
		return "waiting for the GIL";
	return "idle";
}

static void print_locals_text(const struct dump_frame *f, FILE *out)
{
	const struct py_frame_locals *l = &f->locals;

	if (l->error != NULL) {
		fprintf(out, "        (locals %s)\n", l->error);
		return;
	}
	for (size_t i = 0; i < l->nvars; i++)
		fprintf(out, "        %-5s %s = %s\n", l->vars[i].argument ? "arg" : "local",
		        l->vars[i].name, l->vars[i].repr);
}

/* A C frame: "deflate (deflate.c:1234) [libz.so.1]", its library in
 * brackets, the file and line where debug information gives them. */
static void print_native_text(const struct dump_frame *f, FILE *out)
{
	if (f->file[0] != '\0' && f->line > 0)
		fprintf(out, "    %s (%s:%d) [%s]\n", f->function, f->file, f->line, f->module);
	else if (f->file[0] != '\0')
		fprintf(out, "    %s (%s) [%s]\n", f->function, f->file, f->module);
	else
		fprintf(out, "    %s [%s]\n", f->function, f->module);
}

static void print_thread_text(const struct dump *d, const struct dump_thread *t, FILE *out)
{
	fprintf(out, "Thread %d", (int)t->tid);
	if (t->name != NULL)
		fprintf(out, " \"%s\"", t->name);
	fprintf(out, " (OS name \"%s\"): %s%s\n", t->os_name, state_text(d, t->state),
	        t->truncated ? "; deeper than the frame limit: its middle frames "
	                       "left out" : "");
	if (t->error != NULL)
		fprintf(out, "    (stack %s)\n", t->error);
	if (t->native_error != NULL)
		fprintf(out, "    (C frames %s)\n", t->native_error);
	for (size_t i = 0; i < t->nframes; i++) {
		const struct dump_frame *f = &t->frames[i];

		if (f->module != NULL) {
			print_native_text(f, out);
			continue;
		}
		if (f->line > 0)
			fprintf(out, "    %s (%s:%d)\n", f->function, f->file, f->line);
		else if (f->file[0] != '\0')
			fprintf(out, "    %s (%s)\n", f->function, f->file);
		else /* "[N more frames]" */
			fprintf(out, "    %s\n", f->function);
		if (f->source != NULL && f->source[0] != '\0')
			fprintf(out, "        %s\n", f->source);
		if (d->locals)
			print_locals_text(f, out);
	}
}

static void print_process_text(const struct dump *d, FILE *out)
{
	fprintf(out, "Process %d", (int)d->pid);
	if (d->ppid > 0)
		fprintf(out, " (child of %d)", (int)d->ppid);
	if (d->error[0] != '\0') {
		fprintf(out, ": %s: not dumped: %s\n", d->command, d->error);
		return;
	}
	if (d->python_version[0] != '\0')
		fprintf(out, ": %s (Python %s)", d->command, d->python_version);
	else /* --native on a program without Python */
		fprintf(out, ": %s (no Python)", d->command);
	fprintf(out, ", %zu thread%s, innermost frame last\n", d->nthreads,
	        d->nthreads == 1 ? "" : "s");
	for (size_t i = 0; i < d->nthreads; i++) {
		fputc('\n', out);
		print_thread_text(d, &d->threads[i], out);
	}
}

void dump_print_text(const struct dump *d, FILE *out)
{
	print_process_text(d, out);
	for (size_t i = 0; i < d->nchildren; i++) {
		fputc('\n', out);
		print_process_text(&d->children[i], out);
	}
}

/* jansson refuses what is not UTF-8; the escaped texts always are, but a
 * refused string must not lose the whole object: it becomes null. */
static json_t *str_or_null(const char *s)
{
	json_t *j = s != NULL ? json_string(s) : NULL;

	return j != NULL ? j : json_null();
}

static json_t *locals_json(const struct dump_frame *f)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < f->locals.nvars; i++)
		json_array_append_new(arr, json_pack("{s:o, s:s, s:o}",
			"name", str_or_null(f->locals.vars[i].name),
			"kind", f->locals.vars[i].argument ? "argument" : "local",
			"repr", str_or_null(f->locals.vars[i].repr)));
	return arr;
}

static json_t *frame_json(const struct dump *d, const struct dump_frame *f)
{
	json_t *j = json_pack("{s:o, s:o, s:o, s:o}",
		"function", str_or_null(f->function), "file", str_or_null(f->file),
		"line", f->line > 0 ? json_integer(f->line) : json_null(),
		"source", str_or_null(f->source));

	if (j != NULL && d->native) {
		json_object_set_new(j, "kind", json_string(f->module != NULL ? "native" : "python"));
		json_object_set_new(j, "module", str_or_null(f->module));
	}
	if (j != NULL && d->locals) {
		json_object_set_new(j, "locals", f->locals.error != NULL ? json_null() : locals_json(f));
		json_object_set_new(j, "locals_error", str_or_null(f->locals.error));
	}
	return j;
}

static json_t *thread_json(const struct dump *d, const struct dump_thread *t)
{
	json_t *frames = json_array(), *j;

	for (size_t i = 0; i < t->nframes; i++)
		json_array_append_new(frames, frame_json(d, &t->frames[i]));
	j = json_pack("{s:i, s:o, s:o, s:s, s:b, s:o, s:o}",
		"tid", (int)t->tid, "os_name", str_or_null(t->os_name),
		"name", str_or_null(t->name), "state", t->state,
		"truncated", t->truncated, "error", str_or_null(t->error),
		"frames", frames);
	if (j != NULL && d->native)
		json_object_set_new(j, "native_error", str_or_null(t->native_error));
	return j;
}

static json_t *process_json(const struct dump *d)
{
	json_t *threads = json_array();

	for (size_t i = 0; i < d->nthreads; i++)
		json_array_append_new(threads, thread_json(d, &d->threads[i]));
	return json_pack("{s:i, s:o, s:s, s:o}", "pid", (int)d->pid,
	                 "command", str_or_null(d->command),
	                 "python_version", d->python_version, "threads", threads);
}

int dump_print_json(const struct dump *d, FILE *out, bool children)
{
	json_t *root = process_json(d);
	int rc;

	if (root == NULL)
		return -1;
	if (children) {
		json_t *arr = json_array();

		for (size_t i = 0; i < d->nchildren; i++) {
			const struct dump *c = &d->children[i];
			json_t *j = process_json(c);

			if (j == NULL)
				continue;
			json_object_set_new(j, "ppid", json_integer(c->ppid));
			json_object_set_new(j, "depth", json_integer(c->depth));
			json_object_set_new(j, "error", c->error[0] ? str_or_null(c->error) : json_null());
			json_array_append_new(arr, j);
		}
		json_object_set_new(root, "children", arr);
	}
	rc = json_dumpf(root, out, JSON_COMPACT);
	json_decref(root);
	if (rc == 0 && fputc('\n', out) == EOF)
		rc = -1;
	return rc == 0 && fflush(out) == 0 ? 0 : -1;
}
