/* native_unwind.c - (--native) seize, interrupt, unwind and release the
 * target's threads, batched per tick (native_unwind.h: the tracing scheme).
 *
 * libunwind-ptrace's own accessors read memory one word per PTRACE_PEEKDATA
 * and registers one per PTRACE_PEEKUSER; here memory comes a page at a time
 * through remote_mem.h's remote_read (cached for one unwind) and the registers from
 * one PTRACE_GETREGS, so an unwind costs a few system calls, not one per
 * word.  Unwind tables are each module's .eh_frame_hdr, read from the
 * target's memory (native_ehframe.c): libunwind-ptrace's own lookup would
 * open every library by its path in /proc/PID/maps, which the target's
 * user can swap for a FIFO or a link.  One set of tables serves the whole
 * process (threads share the address space), and libunwind caches what it
 * derives from them per address space (UNW_CACHE_GLOBAL).
 *
 * A stopped thread is held only while its registers and the top of its
 * stack are copied (one PTRACE_GETREGS, one remote_readv): it is
 * released at once and unwound from the copy afterwards.  The rest of
 * what an unwind reads (unwind tables, the callers' frames beyond the
 * copy, which cannot change until those calls return) is read live. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sampler/native_unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"
#include "sampler/native_ehframe.h"
#include "target/remote_mem.h"

#define MAX_PENDING 1024
#define PAGE 4096u
#define PAGE_SLOTS 8
#define UNWIND_CACHE_ENTRIES 4096
#define RELEASE_WAIT_NS 100000000ull /* at exit: how long to wait for stops */
#define STACK_COPY (8u * PAGE) /* deeper frames are callers, stable */

struct pending {
	pid_t tid;
	bool wanted; /* asked for this collect; else only to be released */
};

/* What a stopped thread's unwind needs, copied so that it can run on. */
struct frozen {
	pid_t tid;
	struct user_regs_struct regs;
	uint64_t stack_base;       /* target address of stack[0] */
	size_t stack_len;          /* bytes copied */
	uint8_t *stack;            /* STACK_COPY bytes, owned */
};

/* What the accessors see during one unwind. */
struct unwind_ctx {
	struct native_unwind *u;
	const struct frozen *fz;
	uint64_t page_addr[PAGE_SLOTS];
	bool page_ok[PAGE_SLOTS];
	unsigned next_slot;
	uint8_t pages[PAGE_SLOTS][PAGE];
};

struct native_unwind {
	pid_t pid;
	unw_addr_space_t as;
	struct pending pend[MAX_PENDING];
	size_t npend;
	struct frozen *frozen;     /* one pass's copies, reused */
	size_t nfrozen, frozen_cap;
	const atomic_bool *abort;  /* borrowed: set to end a collect early */
	struct unwind_ctx ctx;     /* reused: large, and one unwind at a time */
	struct ehframe_tables tables; /* modules' unwind tables, in the target */
};

/* libunwind's search of a binary search table in the target's memory: not
 * in its public headers, but exported for remote unwinders like this one. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_info, void *arg);

/* ---- accessors --------------------------------------------------------- */

/* Every accessor gets the unwind_ctx given to unw_init_remote as arg. */

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                              int need_info, void *arg)
{
	struct unwind_ctx *c = arg;
	const unw_dyn_info_t *di = ehframe_find(&c->u->tables, ip);

	if (di == NULL)
		return -UNW_ENOINFO; /* libunwind then follows the frame pointer */
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, (unw_dyn_info_t *)di, pi,
	                                          need_info, arg);
}

/* libunwind frees what dwarf_search_unwind_table allocated itself; this
 * is called only for dynamically registered (JIT) procedures, and none
 * are (acc_get_dyn_info_list_addr). */
static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

/* No list of JIT procedures: finding one would mean looking up a symbol
 * in a library file, and pytop opens none while unwinding. */
static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static const uint8_t *page_of(struct unwind_ctx *c, uint64_t base)
{
	unsigned s;

	for (s = 0; s < PAGE_SLOTS; s++)
		if (c->page_ok[s] && c->page_addr[s] == base)
			return c->pages[s];
	s = c->next_slot++ % PAGE_SLOTS;
	c->page_ok[s] = remote_read(c->u->pid, (uintptr_t)base, c->pages[s], PAGE) == 0;
	c->page_addr[s] = base;
	return c->page_ok[s] ? c->pages[s] : NULL;
}

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                          void *arg)
{
	struct unwind_ctx *c = arg;
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	const struct frozen *fz = c->fz;
	const uint8_t *p;

	if (write || (addr & (sizeof(*val) - 1)) != 0)
		return -UNW_EINVAL; /* pytop never writes; aligned words never straddle pages */
	if (addr >= fz->stack_base && fz->stack_len >= sizeof(*val) &&
	    addr - fz->stack_base <= fz->stack_len - sizeof(*val)) {
		memcpy(val, fz->stack + (addr - fz->stack_base), sizeof(*val));
		return 0;
	}
	p = page_of(c, base);
	if (p == NULL)
		return -UNW_EINVAL;
	memcpy(val, p + (addr - base), sizeof(*val));
	return 0;
}

static int reg_value(const struct user_regs_struct *r, unw_regnum_t reg, unw_word_t *val)
{
#if defined(__x86_64__)
	const unsigned long long *v[] = {
		[UNW_X86_64_RAX] = &r->rax, [UNW_X86_64_RDX] = &r->rdx, [UNW_X86_64_RCX] = &r->rcx,
		[UNW_X86_64_RBX] = &r->rbx, [UNW_X86_64_RSI] = &r->rsi, [UNW_X86_64_RDI] = &r->rdi,
		[UNW_X86_64_RBP] = &r->rbp, [UNW_X86_64_RSP] = &r->rsp, [UNW_X86_64_R8] = &r->r8,
		[UNW_X86_64_R9] = &r->r9, [UNW_X86_64_R10] = &r->r10, [UNW_X86_64_R11] = &r->r11,
		[UNW_X86_64_R12] = &r->r12, [UNW_X86_64_R13] = &r->r13, [UNW_X86_64_R14] = &r->r14,
		[UNW_X86_64_R15] = &r->r15, [UNW_X86_64_RIP] = &r->rip,
	};

	if (reg < 0 || (size_t)reg >= sizeof(v) / sizeof(v[0]))
		return -UNW_EBADREG;
	*val = *v[reg];
	return 0;
#else
#error "native_unwind.c: registers are mapped for x86_64 only"
#endif
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                          void *arg)
{
	if (write)
		return -UNW_EREADONLYREG;
	return reg_value(&((struct unwind_ctx *)arg)->fz->regs, reg, val);
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
                            int write, void *arg)
{
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *cursor, void *arg)
{
	return -UNW_EINVAL;
}

static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                             unw_word_t *offp, void *arg)
{
	return -UNW_ENOINFO; /* names come from libdw, off the sampler's clock */
}

static unw_accessors_t accessors = {
	.find_proc_info = acc_find_proc_info,
	.put_unwind_info = acc_put_unwind_info,
	.get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
	.access_mem = acc_access_mem,
	.access_reg = acc_access_reg,
	.access_fpreg = acc_access_fpreg,
	.resume = acc_resume,
	.get_proc_name = acc_get_proc_name,
};

/* ---- tracing ----------------------------------------------------------- */

struct native_unwind *native_unwind_new(pid_t pid)
{
	struct native_unwind *u = calloc(1, sizeof(*u));

	if (u == NULL)
		return NULL;
	u->pid = pid;
	ehframe_init(&u->tables, pid);
	u->as = unw_create_addr_space(&accessors, 0);
	if (u->as == NULL) {
		native_unwind_free(u);
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	unw_set_cache_size(u->as, UNWIND_CACHE_ENTRIES, 0);
	return u;
}

/* 1 = stopped (*code: the wait status's stop word), 0 = not yet,
 * -1 = gone.  The main thread's exit is never collected here: in launch
 * mode its status belongs to target.c (pytop is also its parent). */
static int poll_stop(pid_t pid, pid_t tid, int *code)
{
	siginfo_t si;
	int opts = WSTOPPED | WNOHANG | __WALL | (tid != pid ? WEXITED : 0);

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)tid, &si, opts) != 0)
		return errno == EINTR ? 0 : -1;
	if (si.si_pid == 0)
		return 0;
	if (si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED) {
		*code = si.si_status;
		return 1;
	}
	return -1; /* exited or killed: reaped */
}

/* Resume and forget a stopped thread.  A signal that was about to be
 * delivered when it stopped (a signal-delivery stop, event 0) is passed
 * on; a group stop (job control) is restored by the kernel on detach. */
static void release(pid_t tid, int code)
{
	int event = code >> 8, sig = code & 0x7f;

	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)(event == 0 ? sig : 0)) != 0 &&
	    errno == ESRCH)
		waitpid(tid, NULL, WNOHANG | __WALL); /* killed meanwhile: reap if ours */
}

/* Copy what the unwind of stopped thread tid needs into fz.  The stack is
 * read a page per iovec from the page of its stack pointer up: a read stops
 * at the first unmapped page, keeping what came before. */
static bool freeze(pid_t pid, pid_t tid, struct frozen *fz)
{
	struct iovec local[STACK_COPY / PAGE], remote[STACK_COPY / PAGE];
	int got;

	fz->tid = tid;
	fz->stack_len = 0;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &fz->regs) != 0)
		return false;
	fz->stack_base = fz->regs.rsp & ~(uint64_t)(PAGE - 1);
	for (size_t i = 0; i < STACK_COPY / PAGE; i++) {
		local[i] = (struct iovec){ fz->stack + i * PAGE, PAGE };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(fz->stack_base + i * PAGE), PAGE };
	}
	got = remote_readv(pid, local, remote, STACK_COPY / PAGE);
	fz->stack_len = got > 0 ? (size_t)got * PAGE : 0;
	return true;
}

/* A copy slot for this pass; NULL without memory. */
static struct frozen *frozen_slot(struct native_unwind *u)
{
	if (u->nfrozen == u->frozen_cap) {
		size_t cap = u->frozen_cap ? u->frozen_cap * 2 : 8;
		struct frozen *f = realloc(u->frozen, cap * sizeof(*f));

		if (f == NULL)
			return NULL;
		memset(f + u->frozen_cap, 0, (cap - u->frozen_cap) * sizeof(*f));
		u->frozen = f;
		u->frozen_cap = cap;
	}
	if (u->frozen[u->nfrozen].stack == NULL &&
	    (u->frozen[u->nfrozen].stack = malloc(STACK_COPY)) == NULL)
		return NULL;
	return &u->frozen[u->nfrozen];
}

static int unwind(struct native_unwind *u, const struct frozen *fz, uint64_t *ips, int max)
{
	struct unwind_ctx *c = &u->ctx;
	unw_cursor_t cur;
	int n = 0;

	c->u = u;
	c->fz = fz;
	memset(c->page_ok, 0, sizeof(c->page_ok));
	if (unw_init_remote(&cur, u->as, c) != 0)
		return 0;
	do {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
		ips[n++] = ip;
	} while (n < max && unw_step(&cur) > 0);
	return n;
}

int native_unwind_copy(struct native_unwind *u, pid_t tid, const struct user_regs_struct *regs,
                       uint64_t stack_base, const uint8_t *stack, size_t stack_len,
                       uint64_t *ips, int max)
{
	/* The copy is only read: the cast lets one struct serve both paths. */
	struct frozen fz = { .tid = tid, .regs = *regs, .stack_base = stack_base,
	                     .stack_len = stack_len, .stack = (uint8_t *)stack };

	return unwind(u, &fz, ips, max);
}

static struct pending *find_pending(struct native_unwind *u, pid_t tid)
{
	for (size_t i = 0; i < u->npend; i++)
		if (u->pend[i].tid == tid)
			return &u->pend[i];
	return NULL;
}

bool native_unwind_request(struct native_unwind *u, pid_t tid)
{
	struct pending *p = find_pending(u, tid);

	if (p != NULL) {
		p->wanted = true;
		return true;
	}
	if (u->npend == MAX_PENDING)
		goto fail;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0)
		goto fail;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		/* Seized but not stopping: it died.  Detaching a running
		 * tracee fails, and the kernel drops a dead one. */
		waitpid(tid, NULL, WNOHANG | __WALL);
		goto fail;
	}
	u->pend[u->npend++] = (struct pending){ .tid = tid, .wanted = true };
	return true;
fail:
	return false;
}

/* Copy each requested thread that stopped and release it; a thread no
 * longer wanted is just released.  Returns whether a wanted one is left. */
static bool freeze_stopped(struct native_unwind *u)
{
	bool wanted_left = false;
	size_t i = 0;

	u->nfrozen = 0;
	while (i < u->npend) {
		struct pending p = u->pend[i];
		int code = 0, st = poll_stop(u->pid, p.tid, &code);

		if (st == 0) {
			wanted_left |= p.wanted;
			i++;
			continue;
		}
		if (st > 0) {
			struct frozen *fz = p.wanted ? frozen_slot(u) : NULL;

			if (fz != NULL && freeze(u->pid, p.tid, fz))
				u->nfrozen++;
			release(p.tid, code);
		}
		u->pend[i] = u->pend[--u->npend];
	}
	return wanted_left;
}

/* One pass over the pending threads: release those that stopped, then
 * unwind their copies (so that none waits for another's unwind). */
static int collect_pass(struct native_unwind *u, native_unwind_fn *fn, void *ctx,
                        bool *wanted_left)
{
	uint64_t ips[NATIVE_MAX_FRAMES];
	int taken = 0;

	*wanted_left = freeze_stopped(u);
	for (size_t i = 0; i < u->nfrozen; i++) {
		int n = unwind(u, &u->frozen[i], ips, NATIVE_MAX_FRAMES);

		if (n > 0) {
			fn(ctx, u->frozen[i].tid, ips, n);
			taken++;
		}
	}
	return taken;
}

/* A thread on a CPU stops within microseconds; one waiting for a CPU
 * needs the scheduler first: yield a few times, then sleep in short
 * steps. */
static void wait_for_stops(unsigned *spins)
{
	if ((*spins)++ < 20) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
}

int native_unwind_collect(struct native_unwind *u, uint64_t deadline_ns,
                          native_unwind_fn *fn, void *ctx)
{
	int taken = 0;
	bool left = true;
	unsigned spins = 0;

	while (u->npend > 0) {
		taken += collect_pass(u, fn, ctx, &left);
		if (!left || clock_now_ns() >= deadline_ns ||
		    (u->abort != NULL && atomic_load_explicit(u->abort, memory_order_relaxed)))
			break;
		wait_for_stops(&spins);
	}
	for (size_t i = 0; i < u->npend; i++)
		u->pend[i].wanted = false;
	return taken;
}

void native_unwind_announce_modules(struct native_unwind *u, ehframe_announce_fn *fn, void *ctx)
{
	ehframe_announce(&u->tables, fn, ctx);
}

static void ignore_frames(void *ctx, pid_t tid, const uint64_t *ips, int nips)
{
}

int native_unwind_release_all(struct native_unwind *u, uint64_t deadline_ns)
{
	unsigned spins = 0;
	bool left;

	for (size_t i = 0; i < u->npend; i++)
		u->pend[i].wanted = false;
	while (u->npend > 0) {
		collect_pass(u, ignore_frames, NULL, &left);
		if (u->npend == 0 || clock_now_ns() >= deadline_ns)
			break;
		wait_for_stops(&spins);
	}
	return (int)u->npend;
}

void native_unwind_set_abort(struct native_unwind *u, const atomic_bool *flag)
{
	u->abort = flag;
}

void native_unwind_free(struct native_unwind *u)
{
	if (u == NULL)
		return;
	native_unwind_release_all(u, clock_now_ns() + RELEASE_WAIT_NS);
	if (u->as != NULL)
		unw_destroy_addr_space(u->as);
	ehframe_free(&u->tables);
	for (size_t i = 0; i < u->frozen_cap; i++)
		free(u->frozen[i].stack);
	free(u->frozen);
	free(u);
}

/* Someone else (a debugger, strace) already traces the process. */
static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

int native_unwind_probe(struct native_unwind *u, struct pytop_error *err)
{
	int e, tracer;

	if (native_unwind_request(u, u->pid)) {
		native_unwind_release_all(u, clock_now_ns() + RELEASE_WAIT_NS);
		return 0;
	}
	e = errno;
	if (e == ESRCH) {
		error_set(err, PYTOP_ERR_NO_PROCESS,
		          "process %d exited; check the PID (ps -e)", (int)u->pid);
		return -1;
	}
	tracer = tracer_of(u->pid);
	if (tracer != 0) {
		error_set(err, PYTOP_ERR_PERMISSION,
		          "process %d is already traced by process %d (a debugger or strace); "
		          "--native needs to trace it: detach the other tracer, or drop --native",
		          (int)u->pid, tracer);
		return -1;
	}
	error_set_permission(err, u->pid, "trace (ptrace attach, which --native needs "
	                     "on top of reading memory)");
	return -1;
}
