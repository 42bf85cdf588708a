/* sandbox.c - the seccomp filter that stops pytop from writing into any
 * process (libseccomp).  A deny list on top of "allow": what pytop does is
 * open, read and sleep in many libraries (libdw, libproc2, ncurses, the
 * sanitizers' run-time), and an allow list of all that would break on the
 * next library update; what it must never do is short and known.  ptrace
 * is the exception: there only the requests --native makes are allowed,
 * so a request a later kernel adds is refused too. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "sandbox.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>

#define DENY SCMP_ACT_ERRNO(EPERM)

/* The ptrace requests pytop makes (--native, src/sampler/native_unwind.c and
 * libunwind-ptrace): seize a thread, stop it, read its registers and
 * memory, let it go.  The reads that libunwind may fall back on are here
 * too; everything that writes, resumes with a signal or attaches with a
 * stop is not. */
static const uint64_t ptrace_allowed[] = {
	PTRACE_PEEKTEXT, PTRACE_PEEKDATA, PTRACE_PEEKUSER,
	/* glibc names the architecture-specific requests PT_* as macros. */
#ifdef PT_GETREGS
	PTRACE_GETREGS,
#endif
#ifdef PT_GETFPREGS
	PTRACE_GETFPREGS,
#endif
	PTRACE_GETREGSET, PTRACE_GETSIGINFO, PTRACE_GETEVENTMSG,
	PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH,
#ifdef PYTOP_SANITIZED
	/* LeakSanitizer's check at exit stops pytop's own threads from a
	 * cloned helper with PTRACE_ATTACH, and passes on signals that arrive
	 * meanwhile with PTRACE_CONT. */
	PTRACE_ATTACH, PTRACE_CONT,
#endif
};
/* Requests are small numbers (0x4212 is the highest in Linux 6.x); all
 * from here up are refused by one rule. */
#define PTRACE_REQUEST_LIMIT 0x10000u

/* Calls that act on another process or on the system, which pytop never
 * needs: writing another process's memory or taking its descriptors,
 * modules, kexec, mounts and namespaces, the clock, keys and BPF.
 * By name, so that a call this architecture or this libseccomp lacks is
 * just skipped. */
static const char *const denied_calls[] = {
	"process_vm_writev", "process_madvise", "process_mrelease", "pidfd_getfd",
	"move_pages", "migrate_pages",
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "acct",
	"mount", "umount2", "move_mount", "fsopen", "fsconfig", "fsmount",
	"fspick", "open_tree", "mount_setattr", "pivot_root", "chroot",
	"setns", "unshare", "open_by_handle_at", "name_to_handle_at",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"sethostname", "setdomainname", "iopl", "ioperm",
	"keyctl", "add_key", "request_key", "quotactl",
	"bpf", "userfaultfd", "uselib", "pidfd_send_signal",
#ifndef PYTOP_SANITIZED
	/* pytop never starts a program or a process after start-up.  The
	 * sanitizers' run-time does (LeakSanitizer's helper, the symbolizer
	 * of a report), so sanitizer builds keep these. */
	"execve", "execveat", "fork", "vfork",
#endif
};

/* Argument n compared with datum_a, or, for SCMP_CMP_MASKED_EQ, masked
 * with datum_a and compared with datum_b.  Spelled out, as SCMP_A0 leaves
 * datum_b unset for the other comparisons. */
static struct scmp_arg_cmp arg(unsigned n, enum scmp_compare op, uint64_t a, uint64_t b)
{
	return (struct scmp_arg_cmp){ .arg = n, .op = op, .datum_a = a, .datum_b = b };
}

static struct scmp_arg_cmp arg0(enum scmp_compare op, uint64_t a, uint64_t b)
{
	return arg(0, op, a, b);
}

/* A pid_t argument equal to pid, whether the caller sign- or zero-extended
 * it to 64 bits. */
static struct scmp_arg_cmp pid_arg(unsigned n, pid_t pid)
{
	return arg(n, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)pid);
}

static bool any_allowed(uint64_t lo, uint64_t size)
{
	for (size_t i = 0; i < sizeof(ptrace_allowed) / sizeof(ptrace_allowed[0]); i++)
		if (ptrace_allowed[i] >= lo && ptrace_allowed[i] - lo < size)
			return true;
	return false;
}

/* libseccomp compares an argument once per rule, so the requests between
 * the allowed ones are refused as aligned power-of-two blocks
 * (arg & ~(size - 1)) == lo, halving a block until it holds no allowed
 * request: a few dozen rules. */
static int deny_ptrace_block(scmp_filter_ctx ctx, uint64_t lo, uint64_t size)
{
	if (!any_allowed(lo, size))
		return seccomp_rule_add(ctx, DENY, SCMP_SYS(ptrace), 1,
		                        arg0(SCMP_CMP_MASKED_EQ, ~(size - 1), lo));
	if (size == 1)
		return 0;
	int rc = deny_ptrace_block(ctx, lo, size / 2);
	return rc != 0 ? rc : deny_ptrace_block(ctx, lo + size / 2, size / 2);
}

static int deny_ptrace(scmp_filter_ctx ctx)
{
	int rc = deny_ptrace_block(ctx, 0, PTRACE_REQUEST_LIMIT);

	if (rc != 0)
		return rc;
	return seccomp_rule_add(ctx, DENY, SCMP_SYS(ptrace), 1,
	                        arg0(SCMP_CMP_GE, PTRACE_REQUEST_LIMIT, 0));
}

static int deny_calls(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < sizeof(denied_calls) / sizeof(denied_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(denied_calls[i]);
		int rc;

		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(ctx, DENY, nr, 0);
		if (rc != 0)
			return rc;
	}
	return 0;
}

#ifndef PYTOP_SANITIZED
/* A new process by clone (fork, posix_spawn) is refused; a new thread
 * (CLONE_THREAD) is not.  clone3 passes its flags in memory a filter
 * cannot read, so it answers ENOSYS, on which glibc's pthread_create
 * falls back to clone. */
static int deny_new_processes(scmp_filter_ctx ctx)
{
	int rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(clone), 1,
	                          arg0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));

	if (rc != 0)
		return rc;
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
}
#else
static int deny_new_processes(scmp_filter_ctx ctx)
{
	(void)ctx;
	return 0;
}
#endif

/* A signal to every process (kill(-1, sig)) is refused, and in attach
 * mode any signal to the target, its process group included; sig 0, which
 * only asks whether it still lives, stays allowed.  (In launch mode pytop
 * ends the program it started with SIGTERM, then SIGKILL.) */
static int deny_signals(scmp_filter_ctx ctx, pid_t attached)
{
	struct scmp_arg_cmp sig1 = arg(1, SCMP_CMP_NE, 0, 0), sig2 = arg(2, SCMP_CMP_NE, 0, 0);
	int rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(kill), 2, pid_arg(0, -1), sig1);

	if (rc != 0 || attached <= 0)
		return rc;
	if ((rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(kill), 2, pid_arg(0, attached), sig1)) ||
	    (rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(kill), 2, pid_arg(0, -attached), sig1)) ||
	    (rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(tkill), 2, pid_arg(0, attached), sig1)) ||
	    (rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(tgkill), 2, pid_arg(0, attached), sig2)) ||
	    (rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(rt_sigqueueinfo), 1, pid_arg(0, attached))))
		return rc;
	return seccomp_rule_add(ctx, DENY, SCMP_SYS(rt_tgsigqueueinfo), 1, pid_arg(0, attached));
}

/* --native samples each target thread with perf events of its own
 * (src/sampler/perf_rings.c): pid a thread, cpu -1 or one per CPU (an
 * event that counts and samples only that thread, only while it runs on
 * that CPU, and the threads it starts: inherited).  pid -1 watches every
 * process on a CPU and a cgroup's events every process in it, so any
 * negative pid (the kernel reads an int: the low 32 bits, whatever the
 * caller extends them with) and PERF_FLAG_PID_CGROUP are refused.  A
 * perf event reads; it cannot write into the thread it samples. */
static int limit_perf(scmp_filter_ctx ctx)
{
	int rc = seccomp_rule_add(ctx, DENY, SCMP_SYS(perf_event_open), 1,
	                          arg(1, SCMP_CMP_MASKED_EQ, 0x80000000u, 0x80000000u));

	return rc ? rc : seccomp_rule_add(ctx, DENY, SCMP_SYS(perf_event_open), 1,
	                                  arg(4, SCMP_CMP_MASKED_EQ, PERF_FLAG_PID_CGROUP,
	                                      PERF_FLAG_PID_CGROUP));
}

static int build(scmp_filter_ctx ctx, pid_t attached)
{
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);

	if (rc == 0)
		rc = deny_ptrace(ctx);
	if (rc == 0)
		rc = deny_calls(ctx);
	if (rc == 0)
		rc = limit_perf(ctx);
	if (rc == 0)
		rc = deny_new_processes(ctx);
	if (rc == 0)
		rc = deny_signals(ctx, attached);
	return rc;
}

int sandbox_install(pid_t attached, struct pytop_error *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (ctx == NULL) {
		error_set(err, PYTOP_ERR_INTERNAL, "cannot build the seccomp filter "
		          "(out of memory); pytop runs without it");
		return -1;
	}
	rc = build(ctx, attached);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc == 0)
		return 0;
	/* libseccomp returns -errno; the kernel's EINVAL, ENOSYS or EACCES
	 * here mean no seccomp filters (CONFIG_SECCOMP_FILTER) or a sandbox
	 * around pytop that forbids adding one. */
	error_set(err, PYTOP_ERR_INTERNAL, "cannot install the seccomp filter that "
	          "stops pytop from writing into any process (%s), so pytop runs "
	          "without it; use a kernel with CONFIG_SECCOMP_FILTER, and a "
	          "container that allows seccomp(2)", strerror(-rc));
	return -1;
}
