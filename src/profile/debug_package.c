/* debug_package.c - a module's debug-symbol package from the target's
 * dpkg database (debug_package.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "profile/debug_package.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/target_files.h"

#define STATUS_PATH "/var/lib/dpkg/status"
#define INFO_DIR "/var/lib/dpkg/info/"
#define DB_FILE_MAX (64u << 20) /* a status file is a few MB */
#define NAME_MAX_LEN 128

/* The whole file at path in pid's root (caller frees), or NULL. */
static char *read_all(pid_t pid, const char *path)
{
	int fd = target_file_open(pid, path);
	size_t len = 0, cap = 1 << 16;
	char *buf = fd >= 0 ? malloc(cap + 1) : NULL;
	ssize_t got;

	while (buf != NULL && (got = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)got;
		if (len == cap) {
			char *more = cap < DB_FILE_MAX ? realloc(buf, 2 * cap + 1) : NULL;

			if (more == NULL) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	if (fd >= 0)
		close(fd);
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/* Whether text has a line equal to path. */
static bool has_line(const char *text, const char *path)
{
	size_t n = strlen(path);

	for (const char *p = text; (p = strstr(p, path)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* Lists name path as it is, or (merged /usr) without or with /usr. */
static bool lists(const char *list, const char *path)
{
	char alias[4096];

	if (has_line(list, path))
		return true;
	if (strncmp(path, "/usr/", 5) == 0)
		return has_line(list, path + 4);
	snprintf(alias, sizeof alias, "/usr%s", path);
	return has_line(list, alias);
}

/* Whether package (architecture arch) lists path. */
static bool owns(pid_t pid, const char *package, const char *arch, const char *path)
{
	char file[2 * NAME_MAX_LEN + sizeof INFO_DIR + 8];
	char *list;
	bool yes;

	snprintf(file, sizeof file, INFO_DIR "%s.list", package);
	list = read_all(pid, file);
	if (list == NULL) { /* Multi-Arch: same packages name theirs so */
		snprintf(file, sizeof file, INFO_DIR "%s:%s.list", package, arch);
		list = read_all(pid, file);
	}
	yes = list != NULL && lists(list, path);
	free(list);
	return yes;
}

/* The value of field "Name: value" on the line at p, in out. */
static void field(const char *p, size_t name_len, char *out, size_t size)
{
	size_t n;

	p += name_len;
	while (*p == ' ')
		p++;
	n = strcspn(p, "\n");
	if (n >= size)
		n = size - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* "Status: install ok installed" (not half-installed, config-files...). */
static bool ends_installed(const char *line)
{
	char value[NAME_MAX_LEN];
	size_t n;

	field(line, 7, value, sizeof value);
	n = strlen(value);
	return n >= 10 && strcmp(value + n - 10, " installed") == 0;
}

/* The next stanza's package and architecture, if installed; the stanza's
 * end. */
static const char *stanza(const char *p, char *package, char *arch, bool *installed)
{
	const char *end = strstr(p, "\n\n");

	end = end != NULL ? end + 2 : p + strlen(p);
	package[0] = arch[0] = '\0';
	*installed = false;
	for (const char *l = p; l < end; l = strchr(l, '\n') + 1) {
		if (strncmp(l, "Package:", 8) == 0)
			field(l, 8, package, NAME_MAX_LEN);
		else if (strncmp(l, "Architecture:", 13) == 0)
			field(l, 13, arch, NAME_MAX_LEN);
		else if (strncmp(l, "Status:", 7) == 0)
			*installed = ends_installed(l);
		if (strchr(l, '\n') == NULL)
			break;
	}
	return end;
}

/* python3.11-minimal, libpython3.11, python3.11 -> python3.11-dbg (where
 * Debian ships the interpreter's debug symbols). */
static bool python_dbg(const char *owner, char *out, size_t size)
{
	const char *p = strncmp(owner, "lib", 3) == 0 ? owner + 3 : owner;
	int minor = -1, len = 0;

	/* Any suffix: python3.11-minimal, libpython3.12t64, python3.13-venv. */
	if (sscanf(p, "python3.%d%n", &minor, &len) != 1 || minor < 0 || len == 0)
		return false;
	snprintf(out, size, "python3.%d-dbg", minor);
	return true;
}

void debug_package_name(const char *owner, char *out, size_t size)
{
	if (!python_dbg(owner, out, size))
		snprintf(out, size, "%s-dbgsym", owner);
}

bool debug_package_of(pid_t pid, const char *path, char *out, size_t size)
{
	char *status = read_all(pid, STATUS_PATH);
	char package[NAME_MAX_LEN], arch[NAME_MAX_LEN];
	bool installed, found = false;

	for (const char *p = status; p != NULL && *p != '\0' && !found;) {
		p = stanza(p, package, arch, &installed);
		/* Names from the database stay file names. */
		if (installed && package[0] != '\0' && strchr(package, '/') == NULL &&
		    strchr(arch, '/') == NULL)
			found = owns(pid, package, arch, path);
	}
	free(status);
	if (found)
		debug_package_name(package, out, size);
	return found;
}
