/* dump.c - `pytop dump`: attach, read every thread's stack once with the
 * sampler's own reader (cpython/py_reader.h), and turn it into the model
 * of dump.h.  No sampler thread, no ring: one look, then out. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "dump.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "cpython/linetable.h"
#include "cpython/py_locals.h"
#include "cpython/py_objects.h"
#include "cpython/py_reader.h"
#include "cpython/py_thread_names.h"
#include "cpython/py_runtime.h"
#include "sandbox.h"
#include "target/proc_threads.h"
#include "target/source_lines.h"
#include "target/target.h"

/* A thread that runs while its stack is read can tear the read; it is read
 * again, up to this many times, a millisecond apart. */
#define MAX_ATTEMPTS 50

/* What one dump needs while it reads. */
struct dump_ctx {
	const struct options *o;
	struct py_runtime rt;
	struct py_reader *reader;
	struct proc_threads *pt;
	struct source_lines *sources;
	struct py_object_layout layout; /* for locals and thread names */
	bool have_layout;
	struct py_mem mem;              /* the target's memory, for both */
	uintptr_t threading_globals;    /* found on a Thread._bootstrap frame */
	struct dump *out;
	size_t cap;        /* out->threads' room */
};

/* The OS name is the target's to set (prctl): escaped like all it says. */
static void os_name(pid_t pid, pid_t tid, char *out, size_t size)
{
	char raw[16];

	proc_threads_name(pid, tid, raw);
	escape_text(out, size, raw);
}

static const char *thread_state(struct dump_ctx *c, const struct py_thread_sample *t)
{
	uint64_t lo, hi, uaddr;

	if (t->state == 'R')
		return (t->flags & SAMPLE_HAS_GIL) ? "running_gil" : "running";
	/* As the live view's thread reports: asleep on a futex inside the
	 * GIL struct (or flagged by 3.15's thread state) is waiting for it. */
	if ((t->flags & SAMPLE_GIL_WAIT) ||
	    (py_reader_gil_span(c->reader, &lo, &hi) &&
	     proc_threads_futex(c->pt, t->tid, &uaddr) && uaddr >= lo && uaddr < hi))
		return "gil_wait";
	return "idle";
}

static void free_frame(struct dump_frame *f)
{
	free(f->function);
	free(f->file);
	free(f->source);
	py_frame_locals_free(&f->locals);
}

static void free_thread(struct dump_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++)
		free_frame(&t->frames[i]);
	free(t->frames);
	free(t->name);
	memset(t, 0, sizeof(*t));
}

void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->nthreads; i++)
		free_thread(&d->threads[i]);
	free(d->threads);
	d->threads = NULL;
	d->nthreads = 0;
}

/* One reader frame (leaf-first index i) as a dump frame. */
static bool fill_frame(struct dump_ctx *c, const struct rec_frame *rf, struct dump_frame *f)
{
	struct py_code *code = py_reader_code(c->reader, rf->code_id);
	int line;

	if (code == NULL || code->qualname == NULL || code->filename == NULL)
		return false;
	line = code->linetable != NULL
		? linetable_addr2line(code->linetable, code->linetable_len,
		                      code->firstlineno, rf->instr_offset / 2)
		: -1;
	f->line = line > 0 ? line : 0;
	f->function = strdup(code->qualname);
	f->file = strdup(code->filename);
	if (f->function == NULL || f->file == NULL)
		return false;
	if (f->line > 0)
		f->source = source_lines_get(c->sources, code->filename, f->line);
	return true;
}

static void add_locals(struct dump_ctx *c, const struct py_thread_sample *s,
                       struct dump_thread *t)
{
	size_t n = t->nframes;
	uintptr_t *codes = calloc(n ? n : 1, sizeof(*codes));
	struct py_frame_locals *fl = calloc(n ? n : 1, sizeof(*fl));

	for (size_t i = 0; codes != NULL && i < n; i++) {
		struct py_code *code = py_reader_code(c->reader, s->frames[i].code_id);

		codes[i] = code != NULL ? code->addr : 0;
	}
	if (codes != NULL && fl != NULL &&
	    py_locals_read(&c->mem, &c->layout, s->tstate, codes, n, fl) == 0) {
		/* fl is innermost first, the dump's frames outermost first */
		for (size_t i = 0; i < n; i++)
			t->frames[n - 1 - i].locals = fl[i];
	} else {
		for (size_t i = 0; i < n; i++)
			t->frames[i].locals.error = "unreadable (the thread ran on while they "
			                            "were read)";
	}
	free(codes);
	free(fl);
}

/* A thread threading started has a name the program gave it. */
static void add_name(struct dump_ctx *c, const struct py_thread_sample *s, struct dump_thread *t)
{
	if (c->have_layout)
		t->name = py_thread_name(&c->mem, &c->layout, s->tstate, &c->threading_globals);
}

static bool fill_thread(struct dump_ctx *c, const struct py_thread_sample *s, struct dump_thread *t)
{
	*t = (struct dump_thread){ .tid = s->tid, .state = thread_state(c, s),
	                           .truncated = (s->flags & SAMPLE_TRUNCATED) != 0 };
	os_name(c->o->pid, s->tid, t->os_name, sizeof(t->os_name));
	t->frames = calloc(s->nframes ? s->nframes : 1, sizeof(*t->frames));
	if (t->frames == NULL)
		return false;
	for (uint32_t i = 0; i < s->nframes; i++) {
		/* The reader gives the leaf first; a traceback ends with it. */
		if (!fill_frame(c, &s->frames[s->nframes - 1 - i], &t->frames[i])) {
			free_thread(t);
			return false;
		}
		t->nframes++;
	}
	if (c->o->locals)
		add_locals(c, s, t);
	add_name(c, s, t);
	return true;
}

static struct dump_thread *find(struct dump *d, pid_t tid)
{
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].tid == tid)
			return &d->threads[i];
	return NULL;
}

static void mark_torn(struct dump_ctx *c, const struct py_thread_sample *s,
                      struct dump_thread *t)
{
	*t = (struct dump_thread){ .tid = s->tid, .state = thread_state(c, s),
	                           .error = "unreadable: its stack changed every "
	                                    "time it was read" };
	os_name(c->o->pid, s->tid, t->os_name, sizeof(t->os_name));
}

/* Room for n more threads (a thread may appear between attempts). */
static bool reserve(struct dump_ctx *c, size_t n)
{
	struct dump_thread *grown;

	if (c->out->nthreads + n <= c->cap)
		return true;
	grown = realloc(c->out->threads, (c->out->nthreads + n) * sizeof(*grown));
	if (grown == NULL)
		return false;
	c->out->threads = grown;
	c->cap = c->out->nthreads + n;
	return true;
}

/* Take every thread of this sample that is not taken yet and was read
 * whole.  Returns how many are still missing; -1 when out of memory. */
static int take_sample(struct dump_ctx *c, int n)
{
	int missing = 0;

	if (!reserve(c, (size_t)n))
		return -1;

	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *s = py_reader_thread(c->reader, (size_t)i);
		struct dump_thread *t;

		if (s == NULL || s->tid <= 0)
			continue;
		t = find(c->out, s->tid);
		if (t == NULL) {
			t = &c->out->threads[c->out->nthreads++];
			mark_torn(c, s, t);
		} else if (t->error == NULL) {
			continue;
		}
		if (s->status != PY_THREAD_OK) {
			missing++;
			continue;
		}
		if (!fill_thread(c, s, t)) {
			mark_torn(c, s, t);
			missing++;
		}
	}
	return missing;
}

static int gone_error(const struct options *o, int err_no, struct pytop_error *err)
{
	if (err_no == EPERM)
		error_set_permission(err, o->pid, "read its memory");
	else if (err_no == ESRCH || proc_threads_ended(o->pid))
		error_set(err, PYTOP_ERR_NO_PROCESS, "process %d exited during the dump; "
		          "nothing to show (run pytop dump while it runs)", (int)o->pid);
	else
		error_set(err, PYTOP_ERR_NOT_PYTHON, "process %d's Python thread list could not "
		          "be read (it is changing or not mapped); try again", (int)o->pid);
	return -1;
}

static int read_all(struct dump_ctx *c, struct pytop_error *err)
{
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		int n = py_reader_sample(c->reader, c->pt, true);
		int missing;

		if (n < 0)
			return gone_error(c->o, errno, err);
		missing = take_sample(c, n);
		if (missing < 0) {
			error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
			return -1;
		}
		if (missing == 0)
			break;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return 0; /* threads still torn say so in their error */
}

/* The main thread (its TID is the PID) has no Thread frame; threading's
 * globals, found on another thread's, name it. */
static void name_main_thread(struct dump_ctx *c)
{
	struct dump_thread *t = find(c->out, c->o->pid);

	if (t != NULL && t->name == NULL && c->threading_globals != 0)
		t->name = py_thread_name_main(&c->mem, &c->layout, c->threading_globals);
}

int dump_take(const struct options *o, struct dump *out, struct pytop_error *err)
{
	struct target target;
	struct pytop_error sandbox;
	struct dump_ctx c = { .o = o, .out = out };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (target_attach(o->pid, &target, err) != 0 ||
	    target_find_python(&target, &c.rt, err) != 0)
		return -1;
	c.rt.off = &c.rt.offsets;
	c.mem = (struct py_mem){ py_mem_remote, &out->pid };
	c.have_layout = py_objects_layout(o->pid, &c.rt, &c.layout) == 0;
	if (o->locals && !c.have_layout) {
		error_set(err, PYTOP_ERR_UNSUPPORTED, "the object layout of process %d's "
		          "Python %s is not readable; drop --locals", (int)o->pid, c.rt.version);
		return -1;
	}
	/* One look only reads; the filter makes sure of it.  Without it (no
	 * seccomp) the dump still works, as the live view does. */
	sandbox_install(o->pid, &sandbox);
	out->pid = o->pid;
	out->locals = o->locals;
	escape_text(out->command, sizeof(out->command), target.command);
	snprintf(out->python_version, sizeof(out->python_version), "%s", c.rt.version);
	c.reader = py_reader_new(o->pid, &c.rt);
	if (c.reader != NULL)
		py_reader_want_calls(c.reader, false);
	c.pt = proc_threads_new(o->pid);
	c.sources = source_lines_new(o->pid);
	if (c.reader == NULL || c.pt == NULL || c.sources == NULL)
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
	else
		rc = read_all(&c, err);
	if (rc == 0)
		name_main_thread(&c);
	/* No thread at all: a process that ended under the read. */
	if (rc == 0 && out->nthreads == 0 && proc_threads_ended(o->pid))
		rc = gone_error(o, ESRCH, err);
	source_lines_free(c.sources);
	proc_threads_free(c.pt);
	py_reader_free(c.reader);
	if (rc != 0)
		dump_free(out);
	return rc;
}
