/* source_stale.c - is the file on disk still the source the target ran? */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "source_stale.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The start time is known to a clock tick (10 ms): a file written in the
 * same tick is not called newer. */
#define START_SLACK_S 0.01
/* Lines of decorators searched for the def below them. */
#define MAX_DECORATOR_LINES 40

static bool ident_char(unsigned char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c >= 0x80;
}

/* The code's own name: the last part of its qualified name. */
static const char *own_name(const char *qualname)
{
	const char *dot = strrchr(qualname, '.');

	return dot != NULL ? dot + 1 : qualname;
}

/* A name shown escaped or shortened (py_strings.c) cannot be compared
 * with the file's text: only plain identifiers are. */
static bool plain_identifier(const char *name)
{
	if (*name == '\0')
		return false;
	for (const char *p = name; *p != '\0'; p++)
		if (!ident_char((unsigned char)*p))
			return false;
	return true;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\f')
		s++;
	return s;
}

/* After "def", "async def" or "class" and blanks: the name there, or
 * NULL when t starts none of them. */
static const char *defined_name(const char *t, size_t *len)
{
	static const char *const kw[] = {"def", "class", NULL};
	const char *p;

	if (strncmp(t, "async", 5) == 0 && (t[5] == ' ' || t[5] == '\t'))
		t = skip_blanks(t + 5);
	for (size_t i = 0; kw[i] != NULL; i++) {
		size_t k = strlen(kw[i]);

		if (strncmp(t, kw[i], k) != 0 || (t[k] != ' ' && t[k] != '\t'))
			continue;
		p = skip_blanks(t + k);
		*len = 0;
		while (ident_char((unsigned char)p[*len]))
			(*len)++;
		return p;
	}
	return NULL;
}

/* The def (or class) line at `first`, or the first one below the
 * decorators that start there; its name compared with `name`. */
static bool def_matches(const struct source_file *sf, const char *name, int first)
{
	const char *line = source_file_line(sf, first), *t, *got;
	size_t len;

	if (line == NULL)
		return false;
	t = skip_blanks(line);
	if (*t == '@') {
		for (int i = first + 1; i <= first + MAX_DECORATOR_LINES; i++) {
			if ((line = source_file_line(sf, i)) == NULL)
				return false;
			t = skip_blanks(line);
			if (defined_name(t, &len) != NULL)
				break;
		}
	}
	got = defined_name(t, &len);
	return got != NULL && len == strlen(name) && strncmp(got, name, len) == 0;
}

static bool lambda_at(const struct source_file *sf, int first)
{
	const char *line = source_file_line(sf, first), *p = line;

	while (p != NULL && (p = strstr(p, "lambda")) != NULL) {
		if ((p == line || !ident_char((unsigned char)p[-1])) && !ident_char((unsigned char)p[6]))
			return true;
		p += 6;
	}
	return false;
}

enum source_stale source_stale(const struct source_file *sf, double started,
                               const char *qualname, int first)
{
	const char *name;

	if (!sf->loaded)
		return SOURCE_CURRENT;
	if (started > 0 && sf->mtime > started + START_SLACK_S)
		return SOURCE_NEWER;
	if (qualname == NULL || first <= 0)
		return SOURCE_CURRENT;
	name = own_name(qualname);
	if (strcmp(name, "<lambda>") == 0)
		return lambda_at(sf, first) ? SOURCE_CURRENT : SOURCE_DEF_MOVED;
	if (!plain_identifier(name))
		return SOURCE_CURRENT; /* <module>, <genexpr>, escaped names */
	return def_matches(sf, name, first) ? SOURCE_CURRENT : SOURCE_DEF_MOVED;
}

void source_stale_reason(enum source_stale why, const struct source_file *sf,
                         double started, const char *qualname, int first,
                         char *buf, size_t size)
{
	switch (why) {
	case SOURCE_NEWER:
		snprintf(buf, size, "source changed since start: the file was modified "
		         "%.1f s after the process started", sf->mtime - started);
		break;
	case SOURCE_DEF_MOVED:
		snprintf(buf, size, "source changed since start: line %d no longer begins "
		         "%s", first, own_name(qualname));
		break;
	default:
		buf[0] = '\0';
		break;
	}
}
