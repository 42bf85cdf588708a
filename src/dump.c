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
#include "cpython/py_runtime_wait.h"
#include "dump_native.h"
#include "sampler/native_threads.h"
#include "sandbox.h"
#include "target/proc_children.h"
#include "target/proc_threads.h"
#include "target/source_lines.h"
#include "target/target.h"

/* A thread that runs while its stack is read can tear the read; it is read
 * again, up to this many times, a millisecond apart. */
#define MAX_ATTEMPTS 50

/* What one dump needs while it reads. */
struct dump_ctx {
	const struct options *o;
	pid_t pid;                      /* the process being read */
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
	free(f->module);
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
	for (size_t i = 0; i < d->nchildren; i++)
		dump_free(&d->children[i]);
	free(d->children);
	d->children = NULL;
	d->nchildren = 0;
}

/* One reader frame (leaf-first index i) as a dump frame. */
static bool fill_frame(struct dump_ctx *c, const struct rec_frame *rf, struct dump_frame *f)
{
	struct py_code *code;
	char more[48];
	int line;

	if (rf->code_id == REC_MORE_FRAMES) { /* the middle of a deep stack */
		snprintf(more, sizeof(more), "[%d more frames]", (int)rf->instr_offset);
		f->function = strdup(more);
		f->file = strdup("");
		return f->function != NULL && f->file != NULL;
	}
	code = py_reader_code(c->reader, rf->code_id);
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
	size_t all = t->nframes, n = 0;
	uintptr_t *codes = calloc(all ? all : 1, sizeof(*codes));
	struct py_frame_locals *fl = calloc(all ? all : 1, sizeof(*fl));

	/* A deep stack's locals are read for its innermost frames, up to the
	 * marker: the walk that reads them checks the frames one by one. */
	while (n < all && s->frames[n].code_id != REC_MORE_FRAMES)
		n++;
	for (size_t i = n + 1; i < all; i++) /* the marker itself has none */
		t->frames[all - 1 - i].locals.error = "not read (beyond the frame limit)";

	for (size_t i = 0; codes != NULL && i < n; i++) {
		struct py_code *code = py_reader_code(c->reader, s->frames[i].code_id);

		codes[i] = code != NULL ? code->addr : 0;
	}
	if (codes != NULL && fl != NULL &&
	    py_locals_read(&c->mem, &c->layout, s->tstate, codes, n, fl) == 0) {
		/* fl is innermost first, the dump's frames outermost first */
		for (size_t i = 0; i < n; i++)
			t->frames[all - 1 - i].locals = fl[i];
	} else {
		for (size_t i = 0; i < n; i++)
			t->frames[all - 1 - i].locals.error =
				"unreadable (the thread ran on while they were read)";
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
	os_name(c->pid, s->tid, t->os_name, sizeof(t->os_name));
	t->frames = calloc(s->nframes ? s->nframes : 1, sizeof(*t->frames));
	if (t->frames == NULL)
		return false;
	for (uint32_t i = 0; i < s->nframes; i++) {
		/* The reader gives the leaf first; a traceback ends with it. */
		if (!fill_frame(c, &s->frames[s->nframes - 1 - i], &t->frames[i])) {
			free_thread(t);
			return false;
		}
		t->frames[i].entry = s->entry != NULL && s->entry[s->nframes - 1 - i];
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

/* Why a thread's last read failed, as the reader tells it. */
static const char *torn_reason(const struct py_thread_sample *s)
{
	switch (s->status == PY_THREAD_ERROR ? s->error_kind : SAMPLE_ERR_NONE) {
	case SAMPLE_ERR_THREAD:
		return "unreadable: its thread state points nowhere";
	case SAMPLE_ERR_STACK:
		return "unreadable: its frame data stack could not be read";
	case SAMPLE_ERR_DEEP:
		return "unreadable: its frame chain is longer than pytop follows";
	case SAMPLE_ERR_CODE:
		return "unreadable: a frame's code object could not be read";
	case SAMPLE_ERR_STRING:
		return "unreadable: a function's name or file name is no str";
	case SAMPLE_ERR_CODE_CHANGED:
		return "unreadable: a code object on its stack was freed while it was read";
	default:
		return "unreadable: its stack changed every time it was read";
	}
}

static void mark_torn(struct dump_ctx *c, const struct py_thread_sample *s,
                      struct dump_thread *t)
{
	*t = (struct dump_thread){ .tid = s->tid, .state = thread_state(c, s),
	                           .error = torn_reason(s) };
	os_name(c->pid, s->tid, t->os_name, sizeof(t->os_name));
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
			t->error = torn_reason(s); /* the latest attempt's */
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

static int gone_error(pid_t pid, int err_no, struct pytop_error *err)
{
	if (err_no == EPERM)
		error_set_permission(err, pid, "read its memory");
	else if (err_no == ESRCH || proc_threads_ended(pid))
		error_set(err, PYTOP_ERR_NO_PROCESS, "process %d exited during the dump; "
		          "nothing to show (run pytop dump while it runs)", (int)pid);
	else
		error_set(err, PYTOP_ERR_NOT_PYTHON, "process %d's Python thread list could not "
		          "be read (it is changing or not mapped); try again", (int)pid);
	return -1;
}

static int read_all(struct dump_ctx *c, struct pytop_error *err)
{
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		int n = py_reader_sample(c->reader, c->pt, true);
		int missing;

		if (n < 0)
			return gone_error(c->pid, errno, err);
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
	struct dump_thread *t = find(c->out, c->pid);

	if (t != NULL && t->name == NULL && c->threading_globals != 0)
		t->name = py_thread_name_main(&c->mem, &c->layout, c->threading_globals);
}

/* --native on a process without Python (a C program): its threads from
 * /proc, each with no Python frame, for their C frames alone. */
static int take_threads_only(struct dump_ctx *c, const struct target *target,
                             struct pytop_error *err)
{
	struct native_threads *nt = native_threads_new(c->pid);
	int n = nt != NULL && (c->pt = proc_threads_new(c->pid)) != NULL
		? native_threads_sample(nt, c->pt, true) : -2;

	if (n >= 0 && (c->out->threads = calloc(n ? (size_t)n : 1, sizeof(*c->out->threads))) == NULL)
		n = -2;
	for (int i = 0; i < n; i++) {
		const struct py_thread_sample *s = native_threads_get(nt, (size_t)i);
		struct dump_thread *t = &c->out->threads[c->out->nthreads++];

		*t = (struct dump_thread){ .tid = s->tid,
		                           .state = s->state == 'R' ? "running" : "idle" };
		os_name(c->pid, s->tid, t->os_name, sizeof(t->os_name));
	}
	native_threads_free(nt);
	proc_threads_free(c->pt);
	if (n == -1)
		return gone_error(c->pid, ESRCH, err);
	if (n < 0) {
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
		return -1;
	}
	escape_text(c->out->command, sizeof(c->out->command), target->command);
	return dump_native_add(c->pid, c->o->native_all, c->out, err);
}

/* One process into *out (its own sandbox-free part: the caller installs
 * the filter once for the whole family). */
static int take_process(const struct options *o, pid_t pid, struct dump *out,
                        struct pytop_error *err)
{
	struct target target;
	struct dump_ctx c = { .o = o, .pid = pid, .out = out };
	int rc = -1;

	out->pid = pid;
	out->locals = o->locals;
	out->native = o->native;
	if (target_attach(pid, &target, err) != 0)
		return -1;
	if (py_runtime_wait(&target, &c.rt, err) != 0) {
		if (!o->native || err->code != PYTOP_ERR_NOT_PYTHON)
			return -1;
		*err = (struct pytop_error){ 0 };
		return take_threads_only(&c, &target, err);
	}
	c.rt.off = &c.rt.offsets;
	c.mem = (struct py_mem){ py_mem_remote, &out->pid };
	c.have_layout = py_objects_layout(pid, &c.rt, &c.layout) == 0;
	if (o->locals && !c.have_layout) {
		error_set(err, PYTOP_ERR_UNSUPPORTED, "the object layout of process %d's "
		          "Python %s is not readable; drop --locals", (int)pid, c.rt.version);
		return -1;
	}
	escape_text(out->command, sizeof(out->command), target.command);
	snprintf(out->python_version, sizeof(out->python_version), "%s", c.rt.version);
	c.reader = py_reader_new(pid, &c.rt);
	if (c.reader != NULL)
		py_reader_want_calls(c.reader, false);
	c.pt = proc_threads_new(pid);
	c.sources = source_lines_new(pid);
	if (c.reader == NULL || c.pt == NULL || c.sources == NULL)
		error_set(err, PYTOP_ERR_INTERNAL, "out of memory");
	else
		rc = read_all(&c, err);
	if (rc == 0)
		name_main_thread(&c);
	if (rc == 0 && o->native)
		rc = dump_native_add(pid, o->native_all, out, err);
	/* No thread at all: a process that ended under the read. */
	if (rc == 0 && out->nthreads == 0 && proc_threads_ended(pid))
		rc = gone_error(pid, ESRCH, err);
	source_lines_free(c.sources);
	proc_threads_free(c.pt);
	py_reader_free(c.reader);
	return rc;
}

/* -s: every descendant, parents before their children; one that cannot
 * be dumped (not Python, gone) is listed with the reason. */
static int take_children(const struct options *o, struct dump *root, struct pytop_error *err)
{
	struct proc_children *pc = proc_children_new();
	const struct proc_child *family;
	int n = pc != NULL ? proc_children_scan(pc, o->pid, &family) : -1;

	if (n > 1 && (root->children = calloc((size_t)n - 1, sizeof(*root->children))) == NULL)
		n = -1;
	for (int i = 1; i < n; i++) {
		struct dump *d = &root->children[root->nchildren++];
		struct pytop_error why = { 0 };

		d->ppid = family[i].ppid;
		d->depth = family[i].depth;
		if (take_process(o, family[i].pid, d, &why) != 0) {
			dump_free(d);
			d->pid = family[i].pid;
			proc_children_cmdline(pc, family[i].pid, d->command, sizeof(d->command));
			escape_text(d->error, sizeof(d->error), why.text);
		}
	}
	proc_children_free(pc);
	if (n < 0)
		error_set(err, PYTOP_ERR_INTERNAL, "could not list process %d's children "
		          "(/proc unreadable or out of memory)", (int)o->pid);
	return n < 0 ? -1 : 0;
}

int dump_take(const struct options *o, struct dump *out, struct pytop_error *err)
{
	struct pytop_error sandbox;
	int rc;

	memset(out, 0, sizeof(*out));
	/* One look only reads; the filter makes sure of it.  Without it (no
	 * seccomp) the dump still works, as the live view does. */
	sandbox_install(o->pid, &sandbox);
	rc = take_process(o, o->pid, out, err);
	if (rc == 0 && o->subprocesses)
		rc = take_children(o, out, err);
	if (rc != 0)
		dump_free(out);
	return rc;
}
