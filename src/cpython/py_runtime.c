/* py_runtime.c - finding _PyRuntime and the CPython version in a target:
 * the mapped object that exports it, its load bias, its debug offsets
 * (py_runtime.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "cpython/py_runtime.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "target/elf_syms.h"
#include "target/proc_maps.h"
#include "target/remote_mem.h"
#include "target/target_files.h"

/* A candidate object that may export _PyRuntime, with its load address. */
struct candidate {
	const char *path;        /* path as the target sees it */
	uintptr_t load_start;    /* first mapping with file offset 0 */
	uintptr_t load_end;      /* and its end */
	bool is_exe;             /* the executable the process runs */
};

static void version_string(uint32_t hex, char *buf, size_t len)
{
	static const char level[16] = { [0xA] = 'a', [0xB] = 'b', [0xC] = 'c' };
	unsigned rl = (hex >> 4) & 0xf;

	snprintf(buf, len, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
	if (rl != 0xF && level[rl] != 0)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%u",
		         level[rl] == 'c' ? "rc" : (level[rl] == 'a' ? "a" : "b"), hex & 0xf);
}

/* Minor version from a name like python3.10 or libpython3.9.so: 0 if none. */
static unsigned minor_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;
	unsigned major, minor;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (p == NULL || sscanf(p + 6, "%u.%u", &major, &minor) != 2 || major != 3)
		return 0;
	return minor;
}

/* Read the mapped object itself (/proc/PID/exe, /proc/PID/map_files),
 * not whatever its path names now: the target's user may have replaced a
 * deleted executable by a FIFO or a link to a file it may not read. */
static int inspect(pid_t pid, const struct candidate *c, struct elf_info *info)
{
	int fd = c->is_exe ? target_exe_open(pid)
	         : target_object_open(pid, c->load_start, c->load_end, c->path);

	if (fd < 0)
		return -1;
	elf_read_info_fd(fd, info);
	close(fd);
	return 0;
}

/* 3.13+: the interpreter describes its own layout at the start of
 * _PyRuntime.  Check that it is the table we expect (cookie, version, not
 * a free-threaded build) and take the offsets from it. */
static int read_debug_offsets(pid_t pid, const struct candidate *c,
                              struct py_runtime *out, struct pytop_error *err)
{
	uint8_t table[1024];
	uint64_t version, free_threaded;

	if (remote_read(pid, out->runtime, table, sizeof(table)) != 0) {
		error_set(err, PYTOP_ERR_NO_PROCESS, "process %d exited", (int)pid);
		return -1;
	}
	memcpy(&version, table + 8, 8);
	memcpy(&free_threaded, table + 16, 8);
	if (memcmp(table, "xdebugpy", 8) != 0 || version != out->version_hex) {
		/* Also what a library still being mapped looks like: ld.so maps
		 * the whole object from offset 0, then its data segment over it,
		 * so the caller may retry a process that is still starting. */
		out->table_unread = true;
		error_set(err, PYTOP_ERR_UNSUPPORTED,
		          "process %d runs Python %s (%s) whose _Py_DebugOffsets table is missing "
		          "or does not match its version; supported: %s",
		          (int)pid, out->version, c->path, py_offsets_supported());
		return -1;
	}
	if (free_threaded != 0) {
		error_set(err, PYTOP_ERR_UNSUPPORTED,
		          "process %d runs a free-threaded Python %s (%s), which this build cannot "
		          "read yet; supported: %s with the GIL", (int)pid, out->version, c->path,
		          py_offsets_supported());
		return -1;
	}
	if (py_offsets_from_debug(table, sizeof(table), out->offsets.minor, &out->offsets) != 0) {
		error_set(err, PYTOP_ERR_UNSUPPORTED,
		          "process %d runs Python %s (%s) with a _Py_DebugOffsets layout this build "
		          "does not understand; supported: %s", (int)pid, out->version, c->path,
		          py_offsets_supported());
		return -1;
	}
	out->debug_offsets = true;
	return 0;
}

static int fill_version(pid_t pid, const struct candidate *c,
                        const struct elf_info *info, uintptr_t bias,
                        struct py_runtime *out, struct pytop_error *err)
{
	uint64_t hex = 0;
	unsigned minor;
	const struct py_offsets *base;

	if (info->py_version == 0) {
		/* Py_Version exists from 3.11 on: without it, it is older. */
		minor = minor_from_name(c->path);
		if (minor != 0)
			error_set(err, PYTOP_ERR_UNSUPPORTED,
			          "process %d runs Python 3.%u (%s), which this build cannot read; "
			          "supported: %s", (int)pid, minor, c->path, py_offsets_supported());
		else
			error_set(err, PYTOP_ERR_UNSUPPORTED,
			          "process %d runs a Python older than 3.11 (%s); supported: %s",
			          (int)pid, c->path, py_offsets_supported());
		return -1;
	}
	if (remote_read(pid, info->py_version + bias, &hex, 4) != 0) {
		if (errno == EPERM)
			error_set_permission(err, pid, "read");
		else
			error_set(err, PYTOP_ERR_NO_PROCESS, "process %d exited", (int)pid);
		return -1;
	}
	out->version_hex = (uint32_t)hex;
	version_string(out->version_hex, out->version, sizeof(out->version));
	base = py_offsets_for(out->version_hex >> 24, (out->version_hex >> 16) & 0xff);
	if (base == NULL) {
		error_set(err, PYTOP_ERR_UNSUPPORTED,
		          "process %d runs Python %s (%s), which this build cannot read; supported: %s",
		          (int)pid, out->version, c->path, py_offsets_supported());
		return -1;
	}
	out->offsets = *base;
	out->off = &out->offsets;
	return base->minor >= 13 ? read_debug_offsets(pid, c, out, err) : 0;
}

static int try_candidate(pid_t pid, const struct candidate *c,
                         struct py_runtime *out, struct pytop_error *err)
{
	struct elf_info info;
	uintptr_t bias;

	if (inspect(pid, c, &info) != 0 || !info.is_elf || info.py_runtime == 0)
		return 1; /* not this one */
	bias = c->load_start - (uintptr_t)info.first_load_vaddr;
	out->runtime = (uintptr_t)info.py_runtime + bias;
	out->pycode_type = info.pycode_type ? (uintptr_t)info.pycode_type + bias : 0;
	snprintf(out->object, sizeof(out->object), "%s", c->path);
	return fill_version(pid, c, &info, bias, out, err);
}

static void exe_path(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n - 10] = '\0';
}

static int maps_error(pid_t pid, struct pytop_error *err)
{
	if (errno == ENOENT || errno == ESRCH)
		error_set(err, PYTOP_ERR_NO_PROCESS,
		          "no process with PID %d; check the PID (ps -e | grep python)", (int)pid);
	else if (errno == EACCES || errno == EPERM)
		error_set_permission(err, pid, "read");
	else
		error_set(err, PYTOP_ERR_INTERNAL, "cannot read /proc/%d/maps: %s",
		          (int)pid, strerror(errno));
	return -1;
}

int py_runtime_find(pid_t pid, struct py_runtime *out, struct pytop_error *err)
{
	struct proc_maps maps;
	char exe[PATH_MAX];
	const struct map_entry *m;
	int rc = 1;

	memset(out, 0, sizeof(*out));
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return maps_error(pid, err);
	if (maps_load(pid, &maps) != 0)
		return maps_error(pid, err);
	exe_path(pid, exe, sizeof(exe));
	/* The executable first (static builds), then libpython. */
	m = exe[0] ? maps_first_of(&maps, exe) : NULL;
	if (m != NULL)
		rc = try_candidate(pid, &(struct candidate){ exe, m->start, m->end, true },
		                   out, err);
	if (rc > 0 && (m = maps_find_libpython(&maps)) != NULL)
		rc = try_candidate(pid, &(struct candidate){ m->path, m->start, m->end, false },
		                   out, err);
	if (rc > 0 && maps.n == 0 && access(exe, F_OK) != 0)
		rc = maps_error(pid, err);
	maps_free(&maps);
	if (rc > 0) {
		error_set(err, PYTOP_ERR_NOT_PYTHON,
		          "process %d is not a CPython process: it runs %s, and neither it nor a "
		          "mapped libpython exports _PyRuntime", (int)pid, exe[0] ? exe : "an unknown program");
		return -1;
	}
	return rc;
}

int py_runtime_ready(pid_t pid, const struct py_runtime *rt)
{
	uint64_t interp = 0, tstate = 0;

	if (remote_read(pid, rt->runtime + rt->off->rt_interp_head, &interp, 8) != 0 || interp == 0)
		return -1;
	if (remote_read(pid, interp + rt->off->is_threads_head, &tstate, 8) != 0 || tstate == 0)
		return -1;
	return 0;
}
