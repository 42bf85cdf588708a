/* A synthetic CPython address space, and a forked child holding it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "fake_python.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define IMAGE_SIZE (32u << 20)
#define PAGE 4096u

static void die(const char *what)
{
	fprintf(stderr, "fake_python: %s: %s\n", what, strerror(errno));
	abort();
}

/* ---- writing into the image ------------------------------------------- */

void fake_w64(uintptr_t addr, uint64_t v)
{
	memcpy((void *)addr, &v, sizeof(v));
}

void fake_w32(uintptr_t addr, uint32_t v)
{
	memcpy((void *)addr, &v, sizeof(v));
}

void fake_w8(uintptr_t addr, uint8_t v)
{
	*(uint8_t *)addr = v;
}

uint64_t fake_r64(uintptr_t addr)
{
	uint64_t v;

	memcpy(&v, (const void *)addr, sizeof(v));
	return v;
}

static uintptr_t alloc_aligned(struct fake_image *im, size_t len, size_t align)
{
	size_t at = (im->used + align - 1) & ~(align - 1);

	if (at + len > im->cap) {
		errno = ENOMEM;
		die("image full");
	}
	im->used = at + len;
	memset(im->base + at, 0, len);
	return (uintptr_t)(im->base + at);
}

uintptr_t fake_alloc(struct fake_image *im, size_t len)
{
	return alloc_aligned(im, len, 16);
}

/* A bare object header: refcount 1 and a type. */
static uintptr_t object(struct fake_image *im, size_t len, uintptr_t type)
{
	uintptr_t p = fake_alloc(im, len);

	fake_w64(p, 1);
	fake_w64(p + 8, type);
	return p;
}

void fake_image_init(struct fake_image *im, const struct py_offsets *o)
{
	const uint32_t interp_size = (o->is_threads_head > o->is_next
	                              ? o->is_threads_head : o->is_next) + 64;

	memset(im, 0, sizeof(*im));
	im->o = o;
	im->cap = IMAGE_SIZE;
	im->base = mmap(NULL, IMAGE_SIZE + PAGE, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (im->base == MAP_FAILED)
		die("mmap");
	im->guard = (uintptr_t)im->base + IMAGE_SIZE;
	if (mprotect((void *)im->guard, PAGE, PROT_NONE) != 0)
		die("mprotect");
	im->pycode_type = object(im, 416, 0);
	im->other_type = object(im, 416, 0);
	im->none = object(im, 16, im->other_type);
	im->runtime = fake_alloc(im, o->rt_interp_head + 64);
	im->interp = fake_alloc(im, interp_size);
	fake_w64(im->runtime + o->rt_interp_head, im->interp);
}

void fake_image_free(struct fake_image *im)
{
	if (im->base != NULL)
		munmap(im->base, im->cap + PAGE);
	im->base = NULL;
}

/* ---- objects ---------------------------------------------------------- */

/* Next code point of valid UTF-8 at *s (test input is trusted). */
static uint32_t utf8_next(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t cp;
	int more;

	if (p[0] < 0x80) {
		cp = p[0];
		more = 0;
	} else if (p[0] < 0xE0) {
		cp = p[0] & 0x1F;
		more = 1;
	} else if (p[0] < 0xF0) {
		cp = p[0] & 0x0F;
		more = 2;
	} else {
		cp = p[0] & 0x07;
		more = 3;
	}
	for (int i = 1; i <= more; i++)
		cp = cp << 6 | (p[i] & 0x3F);
	*s = p + 1 + more;
	return cp;
}

uintptr_t fake_str_raw(struct fake_image *im, uint32_t state, uint64_t length,
                       const void *data, size_t data_len)
{
	const struct py_offsets *o = im->o;
	uint32_t at = (state & FAKE_STR_ASCII) ? o->str_ascii_data : o->str_compact_data;
	uintptr_t s = object(im, o->str_compact_data + data_len + 8, im->other_type);

	fake_w64(s + o->str_length, length);
	fake_w64(s + 24, (uint64_t)-1); /* hash not computed */
	fake_w32(s + o->str_state, state);
	memcpy((void *)(s + at), data, data_len);
	return s;
}

uintptr_t fake_str(struct fake_image *im, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cps[1024], max = 0;
	uint8_t units[4096];
	size_t n = 0;
	unsigned kind;

	while (*p != 0 && n < 1024) {
		cps[n] = utf8_next(&p);
		if (cps[n] > max)
			max = cps[n];
		n++;
	}
	kind = max < 0x100 ? 1 : max < 0x10000 ? 2 : 4;
	for (size_t i = 0; i < n; i++) {
		if (kind == 1) {
			units[i] = (uint8_t)cps[i];
		} else if (kind == 2) {
			units[2 * i] = (uint8_t)cps[i];
			units[2 * i + 1] = (uint8_t)(cps[i] >> 8);
		} else {
			memcpy(units + 4 * i, &cps[i], 4);
		}
	}
	/* interned (1) as code-object names are */
	return fake_str_raw(im, 1u | FAKE_STR_KIND(kind) | FAKE_STR_COMPACT |
	                    (max < 0x80 ? FAKE_STR_ASCII : 0), n, units, n * kind);
}

uintptr_t fake_bytes(struct fake_image *im, const void *data, size_t len)
{
	const struct py_offsets *o = im->o;
	uintptr_t b = object(im, o->bytes_data + len + 1, im->other_type);

	fake_w64(b + o->bytes_size, len);
	fake_w64(b + 24, (uint64_t)-1); /* ob_shash */
	memcpy((void *)(b + o->bytes_data), data, len);
	return b;
}

/* A line table in the 3.11+ format: one "no column" entry per 8 code
 * units, each one line further on. */
static uintptr_t line_table(struct fake_image *im, uint32_t units)
{
	uint8_t t[1024];
	size_t n = 0;

	for (uint32_t u = 0; u < units && n + 2 <= sizeof(t); u += 8) {
		uint32_t len = units - u < 8 ? units - u : 8;

		t[n++] = (uint8_t)(0x80 | 13 << 3 | (len - 1));
		t[n++] = u == 0 ? 0 : 2; /* signed varint: +0, then +1 */
	}
	return fake_bytes(im, t, n);
}

uintptr_t fake_code(struct fake_image *im, const char *qualname,
                    const char *filename, int firstlineno, uint32_t units)
{
	const struct py_offsets *o = im->o;
	const char *dot = strrchr(qualname, '.');
	uintptr_t c;

	if (units == 0)
		units = FAKE_CODE_UNITS;
	c = object(im, o->co_code_adaptive + 2 * (size_t)units + 8, im->pycode_type);
	fake_w64(c + 16, units);
	fake_w64(c + 24, object(im, 32, im->other_type)); /* co_consts */
	fake_w64(c + 32, object(im, 32, im->other_type)); /* co_names */
	fake_w32(c + o->co_firstlineno, (uint32_t)firstlineno);
	fake_w64(c + o->co_filename, fake_str(im, filename));
	fake_w64(c + o->co_name, fake_str(im, dot != NULL ? dot + 1 : qualname));
	fake_w64(c + o->co_qualname, fake_str(im, qualname));
	fake_w64(c + o->co_linetable, line_table(im, units));
	for (uint32_t i = 0; i < units; i++) /* NOP, 0 */
		fake_w8(c + o->co_code_adaptive + 2 * i, 9);
	return c;
}

/* ---- threads and frames ------------------------------------------------- */

static uintptr_t chunk_new(struct fake_image *im, uintptr_t previous, size_t size)
{
	/* Page aligned, as CPython maps each chunk on its own. */
	uintptr_t c = alloc_aligned(im, size, PAGE);

	fake_w64(c, previous);
	fake_w64(c + im->o->chunk_size, size);
	return c;
}

void fake_store_stack(const struct fake_image *im, const struct fake_thread *t)
{
	fake_w64(t->tstate + im->o->ts_datastack_chunk, t->chunk);
	fake_w64(t->tstate + im->o->ts_datastack_top, t->top);
}

void fake_thread_new(struct fake_image *im, struct fake_thread *t, long tid)
{
	const struct py_offsets *o = im->o;

	memset(t, 0, sizeof(*t));
	t->tstate = fake_alloc(im, o->ts_read_size > 512 ? o->ts_read_size : 512);
	fake_w64(t->tstate + o->ts_interp, im->interp);
	fake_w64(t->tstate + o->ts_native_tid, (uint64_t)tid);
	if (o->ts_cframe != 0) {
		t->cframe = fake_alloc(im, 32);
		fake_w64(t->tstate + o->ts_cframe, t->cframe);
	}
	t->chunk = chunk_new(im, 0, FAKE_CHUNK_SIZE);
	/* CPython leaves the root chunk's first slot unused. */
	t->top = t->chunk + o->chunk_data + 8;
	fake_store_stack(im, t);
	if (im->threads_tail == 0)
		fake_w64(im->interp + o->is_threads_head, t->tstate);
	else
		fake_w64(im->threads_tail + o->ts_next, t->tstate);
	fake_w64(t->tstate, im->threads_tail); /* prev */
	im->threads_tail = t->tstate;
}

void fake_set_current(struct fake_image *im, struct fake_thread *t, uintptr_t frame)
{
	const struct py_offsets *o = im->o;

	if (o->ts_current_frame != 0)
		fake_w64(t->tstate + o->ts_current_frame, frame);
	else
		fake_w64(t->cframe + o->cf_current_frame, frame);
	t->current = frame;
}

uintptr_t fake_new_chunk(struct fake_image *im, struct fake_thread *t, size_t size)
{
	const struct py_offsets *o = im->o;
	uintptr_t old = t->chunk;

	/* The chunk being left keeps its top, as a word index. */
	fake_w64(old + 16, (t->top - (old + o->chunk_data)) / 8);
	t->chunk = chunk_new(im, old, size != 0 ? size : FAKE_CHUNK_SIZE);
	t->top = t->chunk + o->chunk_data;
	fake_store_stack(im, t);
	return t->chunk;
}

static void frame_fill(const struct fake_image *im, uintptr_t f, uintptr_t previous,
                       uintptr_t code, int instr_offset, uint8_t owner)
{
	const struct py_offsets *o = im->o;

	/* 3.14+: a _PyStackRef, here with the deferred-reference tag */
	fake_w64(f + o->if_code, o->code_tagged ? code | 1 : code);
	fake_w64(f + o->if_previous, previous);
	fake_w64(f + o->if_instr, code + o->co_code_adaptive + (int64_t)instr_offset);
	fake_w8(f + o->if_owner, owner);
}

uintptr_t fake_push(struct fake_image *im, struct fake_thread *t,
                    uintptr_t code, int instr_offset)
{
	uintptr_t f;

	if (t->top + FAKE_FRAME_SIZE > t->chunk + fake_r64(t->chunk + im->o->chunk_size))
		fake_new_chunk(im, t, 0);
	f = t->top;
	memset((void *)f, 0, FAKE_FRAME_SIZE);
	frame_fill(im, f, t->current, code, instr_offset, 0);
	t->top += FAKE_FRAME_SIZE;
	fake_store_stack(im, t);
	fake_set_current(im, t, f);
	return f;
}

uintptr_t fake_push_heap(struct fake_image *im, struct fake_thread *t,
                         uintptr_t code, int instr_offset, uint8_t owner)
{
	uintptr_t f = fake_alloc(im, FAKE_FRAME_SIZE);

	frame_fill(im, f, t->current, code, instr_offset, owner);
	fake_set_current(im, t, f);
	return f;
}

void fake_runtime(const struct fake_image *im, struct py_runtime *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->runtime = im->runtime;
	rt->pycode_type = im->pycode_type;
	rt->version_hex = 0x030000F0u | im->o->minor << 16;
	snprintf(rt->version, sizeof(rt->version), "3.%u.0", im->o->minor);
	snprintf(rt->object, sizeof(rt->object), "fake-libpython3.%u.so", im->o->minor);
	rt->off = im->o;
}

/* ---- the child ---------------------------------------------------------- */

enum { CMD_WRITE = 'W', CMD_PROTECT = 'P', CMD_THREAD = 'T', CMD_REMAP = 'M' };

struct fake_cmd {
	uint32_t op, pad;
	uint64_t addr, len;
};

static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t got = read(fd, p, len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		p += got;
		len -= (size_t)got;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t put = write(fd, p, len);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return -1;
		p += put;
		len -= (size_t)put;
	}
	return 0;
}

struct thread_arg {
	uintptr_t tid_addr;
	int ack_fd;
};

static void *sleeper(void *p)
{
	struct thread_arg a = *(struct thread_arg *)p;
	int64_t tid = (int64_t)syscall(SYS_gettid);

	free(p);
	fake_w64(a.tid_addr, (uint64_t)tid);
	write_full(a.ack_fd, &tid, sizeof(tid));
	for (;;)
		pause();
	return NULL;
}

/* The child's life: apply commands to its own memory, answer each. */
static void serve(int cmd_fd, int ack_fd)
{
	struct fake_cmd cmd;

	while (read_full(cmd_fd, &cmd, sizeof(cmd)) == 0) {
		int64_t result = 0;

		if (cmd.op == CMD_WRITE) {
			if (read_full(cmd_fd, (void *)cmd.addr, cmd.len) != 0)
				break;
		} else if (cmd.op == CMD_PROTECT) {
			result = mprotect((void *)cmd.addr, cmd.len, PROT_NONE);
		} else if (cmd.op == CMD_REMAP) {
			result = mmap((void *)cmd.addr, cmd.len, PROT_READ | PROT_WRITE,
			              MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
			         (void *)cmd.addr ? 0 : -1;
		} else if (cmd.op == CMD_THREAD) {
			struct thread_arg *a = malloc(sizeof(*a));
			pthread_t th;

			if (a == NULL)
				break;
			*a = (struct thread_arg){ cmd.addr, ack_fd };
			if (pthread_create(&th, NULL, sleeper, a) != 0)
				break;
			continue; /* the thread answers with its TID */
		}
		if (write_full(ack_fd, &result, sizeof(result)) != 0)
			break;
	}
	_exit(0);
}

void fake_child_start(struct fake_child *c)
{
	int cmd[2], ack[2];
	pid_t parent = getpid();

	if (pipe(cmd) != 0 || pipe(ack) != 0)
		die("pipe");
	c->pid = fork();
	if (c->pid < 0)
		die("fork");
	if (c->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		/* Never outlive a test that failed before stopping us. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		serve(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	c->cmd_fd = cmd[1];
	c->ack_fd = ack[0];
}

static int64_t command(struct fake_child *c, uint32_t op, uintptr_t addr, size_t len,
                       const void *payload)
{
	struct fake_cmd cmd = { .op = op, .addr = addr, .len = len };
	int64_t result = -1;

	if (write_full(c->cmd_fd, &cmd, sizeof(cmd)) != 0 ||
	    (payload != NULL && write_full(c->cmd_fd, payload, len) != 0) ||
	    read_full(c->ack_fd, &result, sizeof(result)) != 0)
		die("child command");
	return result;
}

void fake_child_sync(struct fake_child *c, uintptr_t addr, size_t len)
{
	command(c, CMD_WRITE, addr, len, (const void *)addr);
}

void fake_child_protect(struct fake_child *c, uintptr_t addr, size_t len)
{
	if (command(c, CMD_PROTECT, addr, len, NULL) != 0)
		die("child mprotect");
}

void fake_child_remap(struct fake_child *c, uintptr_t addr, size_t len)
{
	if (command(c, CMD_REMAP, addr, len, NULL) != 0)
		die("child mmap");
}

pid_t fake_child_thread(struct fake_child *c, uintptr_t tid_addr)
{
	pid_t tid = (pid_t)command(c, CMD_THREAD, tid_addr, 0, NULL);

	fake_w64(tid_addr, (uint64_t)tid); /* mirror the child's write */
	return tid;
}

void fake_child_stop(struct fake_child *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(c->cmd_fd);
	close(c->ack_fd);
	c->pid = 0;
}
