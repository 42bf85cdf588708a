/* crash_stop.c - on a fatal signal in pytop, SIGKILL the launched program
 * and its descendants, then die of the signal.  Everything here may run
 * in a signal handler: raw open/read/getdents64/kill, static buffers, no
 * malloc, no stdio. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "target/crash_stop.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static const int fatal_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE };
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])

/* Enough for the processes of any machine pytop is likely to run on and
 * for any family; beyond them, members are missed, never overrun. */
#define SCAN_MAX 16384
#define FAMILY_MAX 4096

static volatile sig_atomic_t armed_pid;
static pid_t scan_pid[SCAN_MAX], scan_ppid[SCAN_MAX];
static bool taken[SCAN_MAX];
static pid_t family[FAMILY_MAX];
static char dents[32768] __attribute__((aligned(8)));

static pid_t parse_pid(const char *s)
{
	long v = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9' || v > 99999999)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

/* The parent PID from /proc/PID/stat ("pid (comm) S ppid ..."; comm may
 * hold any character, so parse from the last ')'), -1 if gone. */
static pid_t parent_of(pid_t pid)
{
	char path[32], buf[256], *p = path + sizeof path, *close_paren = NULL;
	int fd;
	ssize_t n;
	long ppid = 0;

	*--p = '\0';
	memcpy(p -= 5, "/stat", 5);
	do
		*--p = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	memcpy(p -= 6, "/proc/", 6);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *c = buf; *c != '\0'; c++)
		if (*c == ')')
			close_paren = c;
	if (close_paren == NULL || close_paren + 4 >= buf + n)
		return -1;
	for (char *c = close_paren + 4; *c >= '0' && *c <= '9'; c++)
		ppid = ppid * 10 + (*c - '0');
	return (pid_t)ppid;
}

/* Every process with its parent, into scan_pid/scan_ppid; their count. */
static int scan_proc(void)
{
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = 0;
	ssize_t got;

	if (fd < 0)
		return 0;
	while (n < SCAN_MAX && (got = getdents64(fd, dents, sizeof dents)) > 0) {
		for (ssize_t off = 0; off < got && n < SCAN_MAX;) {
			const struct dirent64 *d = (const struct dirent64 *)(dents + off);
			pid_t pid = parse_pid(d->d_name), ppid = pid > 0 ? parent_of(pid) : -1;

			off += d->d_reclen;
			if (ppid < 0)
				continue;
			scan_pid[n] = pid;
			scan_ppid[n] = ppid;
			n++;
		}
	}
	close(fd);
	return n;
}

static bool in_family(pid_t pid, int nfam)
{
	for (int i = 0; i < nfam; i++)
		if (family[i] == pid)
			return true;
	return false;
}

/* The root, then its descendants, level by level (the family is small:
 * each pass costs processes x family). */
static int find_family(pid_t root, int n)
{
	int nfam = 0;
	bool grew = true;

	family[nfam++] = root;
	for (int i = 0; i < n; i++)
		taken[i] = scan_pid[i] == root;
	while (grew && nfam < FAMILY_MAX) {
		grew = false;
		for (int i = 0; i < n && nfam < FAMILY_MAX; i++)
			if (!taken[i] && in_family(scan_ppid[i], nfam)) {
				taken[i] = grew = true;
				family[nfam++] = scan_pid[i];
			}
	}
	return nfam;
}

/* The root first, so that it cannot start replacements for the children
 * being killed. */
static void kill_family(pid_t root)
{
	int nfam = find_family(root, scan_proc());

	for (int i = 0; i < nfam; i++)
		kill(family[i], SIGKILL);
}

/* SA_RESETHAND put the default action back; the signal stays blocked
 * until we return, then pytop dies of it. */
static void on_fatal(int sig)
{
	pid_t root = (pid_t)armed_pid;

	if (root > 0)
		kill_family(root);
	raise(sig);
}

void crash_stop_arm(pid_t pid)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	armed_pid = (sig_atomic_t)pid;
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &sa, NULL);
}

void crash_stop_disarm(void)
{
	armed_pid = 0;
}
