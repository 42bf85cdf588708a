/* fuzz_reader.c - libFuzzer target for the stack reader (src/cpython/py_reader.c
 * and the files it runs, FUZZ_READER_FILES in Makefile.am):
 * thread list, frame chains, data-stack chunks, code objects, strings and
 * line tables, for every built-in version's layout and, on 3.13+, for a
 * layout taken from a (fuzzed) _Py_DebugOffsets table.
 *
 * The reader reads its target only through remote_mem.h and learns thread
 * states from proc_threads.h; this file provides both in place of
 * src/target/remote_mem.c and src/target/proc_threads.c, serving memory from the fuzz
 * input (layout in fuzz_reader.h) and inventing a scheduler state per TID.
 *
 * Besides the sanitizers, every sample is checked the way the views will
 * use it: frame counts within bounds, every frame's code known, names and
 * file names valid UTF-8 without control characters. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"
#include "target/proc_threads.h"
#include "cpython/py_name_text.h"
#include "cpython/py_offsets.h"
#include "cpython/py_reader.h"
#include "target/remote_mem.h"

#define DEBUG_TABLE_BYTES 1024 /* what py_runtime.c reads of _PyRuntime */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the fake target --------------------------------------------------- */

static uint8_t *image; /* this input's image, owned while it runs */
static size_t image_len;
static uint64_t image_base;

/* Whether [addr, addr + len) lies inside the image; *at gets its offset. */
static bool in_image(uintptr_t addr, size_t len, size_t *at)
{
	uint64_t off = (uint64_t)addr - image_base;

	if (addr < image_base || off > image_len || len > image_len - off)
		return false;
	*at = (size_t)off;
	return true;
}

int remote_read(pid_t pid, uintptr_t addr, void *buf, size_t len)
{
	size_t at;

	(void)pid;
	if (addr == 0 || !in_image(addr, len, &at)) {
		errno = EFAULT;
		return -1;
	}
	memcpy(buf, image + at, len);
	return 0;
}

int remote_readv(pid_t pid, const struct iovec *local,
                 const struct iovec *remote, int n)
{
	int done;

	(void)pid;
	/* Like process_vm_readv: whole leading ranges, lengths must match. */
	for (done = 0; done < n; done++) {
		size_t at;

		if (local[done].iov_len != remote[done].iov_len)
			abort(); /* the reader's own bookkeeping is wrong */
		if (!in_image((uintptr_t)remote[done].iov_base, remote[done].iov_len, &at))
			break;
		memcpy(local[done].iov_base, image + at, remote[done].iov_len);
	}
	if (done == 0 && n > 0) {
		errno = EFAULT;
		return -1;
	}
	return done;
}

/* Like process_vm_readv: the remote ranges' bytes fill the local buffers
 * in turn; whole leading remote ranges count. */
int remote_readv_gather(pid_t pid, const struct iovec *local, int nlocal,
                        const struct iovec *remote, int nremote)
{
	size_t want = 0, have = 0;
	int li = 0, done;

	(void)pid;
	for (int i = 0; i < nlocal; i++)
		have += local[i].iov_len;
	for (int i = 0; i < nremote; i++)
		want += remote[i].iov_len;
	if (have != want)
		abort(); /* the reader's own bookkeeping is wrong */
	size_t loff = 0;
	for (done = 0; done < nremote; done++) {
		size_t at, left = remote[done].iov_len;

		if (!in_image((uintptr_t)remote[done].iov_base, left, &at))
			break;
		while (left > 0) {
			size_t room = local[li].iov_len - loff, n = room < left ? room : left;

			memcpy((uint8_t *)local[li].iov_base + loff, image + at, n);
			at += n;
			left -= n;
			loff += n;
			if (loff == local[li].iov_len) {
				li++;
				loff = 0;
			}
		}
	}
	if (done == 0 && nremote > 0) {
		errno = EFAULT;
		return -1;
	}
	return done;
}

uint64_t remote_calls(void)
{
	return 0;
}

/* ---- the fake scheduler ------------------------------------------------ */

struct proc_threads {
	pid_t pid;
};

struct proc_threads *proc_threads_new(pid_t pid)
{
	struct proc_threads *pt = malloc(sizeof(*pt));

	if (pt != NULL)
		pt->pid = pid;
	return pt;
}

void proc_threads_free(struct proc_threads *pt)
{
	free(pt);
}

/* Odd TIDs run, even ones sleep, so that both the on-CPU and the --idle
 * paths are reached.  No thread ever faults: a deep stack's older chunks
 * are then taken from the last walk (frame_walk_chunks.c), so that path
 * meets the input too. */
void proc_threads_read(struct proc_threads *pt, pid_t tid, struct proc_thread_stat *out)
{
	(void)pt;
	*out = (struct proc_thread_stat){ .state = (tid & 1) ? 'R' : 'S',
	                                  .utime_ns = 1000, .rss_bytes = 4096,
	                                  .faults_known = true };
}

void proc_threads_sweep(struct proc_threads *pt)
{
	(void)pt;
}

/* The fake target shares pytop's PID namespace, except that a TID with
 * bit 30 set names no thread at all (as a torn or hostile thread state
 * would), so the reader's "no such thread" path is reached too. */
pid_t proc_threads_host_tid(struct proc_threads *pt, pid_t tid)
{
	(void)pt;
	return (tid & (1 << 30)) ? 0 : tid;
}

/* ---- checks on what the reader returns --------------------------------- */

static bool clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p != '\0') {
		int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1
		         : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;

		if (more < 0 || *p < 0x20 || *p == 0x7F)
			return false;
		p++;
		for (; more > 0; more--, p++)
			if ((*p & 0xC0) != 0x80)
				return false;
	}
	return true;
}

static void check_code(const struct py_code *c)
{
	if (c->qualname == NULL || c->filename == NULL ||
	    !clean_utf8(c->qualname) || !clean_utf8(c->filename) ||
	    strlen(c->qualname) > PY_NAME_TEXT_MAX_BYTES ||
	    strlen(c->filename) > PY_NAME_TEXT_MAX_BYTES ||
	    (c->linetable == NULL && c->linetable_len != 0)) {
		fprintf(stderr, "code %u: bad name, file name or line table\n", c->id);
		abort();
	}
}

/* FUZZ_READER_VERBOSE=1 prints what each tick read: to check that the
 * seeds reach the stack walk rather than stopping at the thread list. */
static void show(const struct py_reader *r, int nthreads)
{
	for (int i = 0; i < nthreads; i++) {
		const struct py_thread_sample *s = py_reader_thread(r, (size_t)i);

		fprintf(stderr, "thread %d: tid %d status %d frames %u\n", i,
		        (int)s->tid, (int)s->status, s->nframes);
	}
}

static void check_sample(struct py_reader *r, int nthreads)
{
	static int verbose = -1;

	if (verbose < 0)
		verbose = getenv("FUZZ_READER_VERBOSE") != NULL;
	if (verbose)
		show(r, nthreads);
	for (int i = 0; i < nthreads; i++) {
		const struct py_thread_sample *s = py_reader_thread(r, (size_t)i);

		if (s == NULL || s->nframes > PY_READER_MAX_FRAMES)
			abort();
		if (s->status == PY_THREAD_ERROR &&
		    (s->error_kind == SAMPLE_ERR_NONE || s->error_kind >= SAMPLE_ERR_KINDS)) {
			fprintf(stderr, "thread %d: an error of no kind\n", i);
			abort();
		}
		if (s->status != PY_THREAD_OK)
			continue;
		for (uint32_t f = 0; f < s->nframes; f++) {
			struct py_code *c;

			/* The marker of a deep stack: one, with a count, and
			 * only in a sample that says it was cut. */
			if (s->frames[f].code_id == REC_MORE_FRAMES) {
				if (s->frames[f].instr_offset < 1 || !(s->flags & SAMPLE_TRUNCATED))
					abort();
				continue;
			}
			c = py_reader_code(r, s->frames[f].code_id);
			if (c == NULL) {
				fprintf(stderr, "frame %u: unknown code id\n", f);
				abort();
			}
			check_code(c);
		}
	}
}

/* ---- the target -------------------------------------------------------- */

static size_t version_count(void)
{
	size_t n = 0;

	while (py_offsets_at(n) != NULL)
		n++;
	return n;
}

/* The runtime an attach would produce: the built-in table, or on 3.13+
 * the one derived from the image's debug table.  false when an attach
 * would refuse the target. */
static bool make_runtime(const struct fuzz_reader_header *h, struct py_runtime *rt)
{
	static size_t nversions;
	const struct py_offsets *o;

	if (nversions == 0)
		nversions = version_count();
	o = py_offsets_at(h->version % nversions);
	memset(rt, 0, sizeof(*rt));
	rt->runtime = (uintptr_t)h->runtime;
	rt->pycode_type = (uintptr_t)h->pycode_type;
	rt->version_hex = 0x030000F0u | o->minor << 16;
	snprintf(rt->version, sizeof(rt->version), "3.%u.0", o->minor);
	rt->offsets = *o;
	rt->off = &rt->offsets;
	if ((h->flags & FZR_DEBUG_OFFSETS) && o->minor >= 13) {
		uint8_t table[DEBUG_TABLE_BYTES] = { 0 };
		size_t at;

		if (!in_image(rt->runtime, 0, &at))
			return false;
		memcpy(table, image + at, image_len - at < sizeof(table)
		                          ? image_len - at : sizeof(table));
		if (py_offsets_from_debug(table, sizeof(table), o->minor, &rt->offsets) != 0)
			return false;
		rt->debug_offsets = true;
	}
	return true;
}

/* From the second tick on: the image as the target changed it. */
static void apply_patch(const struct fuzz_reader_header *h, const uint8_t *patch)
{
	if (h->patch_len > 0 && h->patch_at <= image_len &&
	    h->patch_len <= image_len - h->patch_at)
		memcpy(image + h->patch_at, patch, h->patch_len);
}

static void run_ticks(const struct fuzz_reader_header *h, struct py_reader *r,
                      struct proc_threads *pt, const uint8_t *patch)
{
	/* Later ticks run on the caches and guesses of the earlier ones. */
	int ticks = 1 + ((h->flags >> FZR_TICKS_SHIFT) & 3);

	for (int t = 0; t < ticks; t++) {
		int n;
		uint64_t lo, hi;

		if (t == 1)
			apply_patch(h, patch);
		n = py_reader_sample(r, pt, h->flags & FZR_IDLE);
		if (n < 0)
			break;
		check_sample(r, n);
		if (py_reader_gil_span(r, &lo, &hi) && hi <= lo)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_reader_header h;
	struct py_runtime rt;
	struct py_reader *r;
	struct proc_threads *pt;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	if (h.patch_len > size - sizeof(h))
		return 0;
	/* A private copy: the patch changes it between ticks. */
	image_len = size - sizeof(h) - h.patch_len;
	image = malloc(image_len + 1);
	if (image == NULL)
		return 0;
	memcpy(image, data + sizeof(h), image_len);
	image_base = h.base;
	if (make_runtime(&h, &rt)) {
		r = py_reader_new(4242, &rt);
		pt = proc_threads_new(4242);
		if (r == NULL || pt == NULL)
			abort();
		py_reader_want_calls(r, !(h.flags & FZR_NO_CALLS));
		run_ticks(&h, r, pt, data + size - h.patch_len);
		py_reader_free(r);
		proc_threads_free(pt);
	}
	free(image);
	image = NULL;
	return 0;
}
