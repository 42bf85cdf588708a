/* lines_callees.c - see lines_callees.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lines_callees.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t lines_callees_count(const struct snapshot *s, const char *file,
                           int line)
{
	size_t n;

	(void)snapshot_callees_of(s, file, line, &n);
	return n > LINES_CALLEES_SHOWN ? LINES_CALLEES_SHOWN + 1 : n;
}

/* The leading blanks of the caller's source, so the arrow sits under the
 * code it explains; at most 40 columns of them. */
static int indent_of(const char *text)
{
	int n = 0;

	while (text != NULL && (text[n] == ' ' || text[n] == '\t') && n < 40)
		n++;
	return n;
}

static const char *base_name(const char *path)
{
	const char *slash = path != NULL ? strrchr(path, '/') : NULL;

	return slash != NULL ? slash + 1 : path != NULL ? path : "";
}

void lines_callees_fill(const struct snapshot *s, const char *file, int line,
                        const char *caller_text, bool utf8,
                        struct lines_callee_row *out)
{
	size_t n;
	const struct snap_callee *c = snapshot_callees_of(s, file, line, &n);
	int indent = indent_of(caller_text);
	const char *arrow = utf8 ? "\u21b3" : "->";

	for (size_t i = 0; i < n && i < LINES_CALLEES_SHOWN; i++) {
		snprintf(out[i].text, sizeof out[i].text, "%.*s%s %s  %s",
		         indent, caller_text, arrow, c[i].name,
		         base_name(c[i].module));
		out[i].c = c[i].c;
	}
	if (n <= LINES_CALLEES_SHOWN)
		return;
	struct lines_callee_row *rest = &out[LINES_CALLEES_SHOWN];
	memset(&rest->c, 0, sizeof rest->c);
	for (size_t i = LINES_CALLEES_SHOWN; i < n; i++)
		snap_counts_add(&rest->c, &c[i].c);
	snprintf(rest->text, sizeof rest->text,
	         "%.*s%s %zu more", indent, caller_text, arrow,
	         n - LINES_CALLEES_SHOWN);
}

static bool same(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static bool is_caller_of(const struct snap_callee *c, const char *name,
                         const char *file)
{
	return same(c->name, name) && same(c->file, file);
}

size_t lines_callers_count(const struct snapshot *s, const char *name,
                           const char *file)
{
	size_t n = 0;

	for (size_t i = 0; i < s->ncallees; i++)
		n += is_caller_of(&s->callees[i], name, file);
	return n;
}

/* The function a Python line belongs to, as the snapshot's lines say. */
static const char *function_of(const struct snapshot *s, const char *file,
                               int line)
{
	for (size_t i = 0; i < s->nlines; i++)
		if (s->lines[i].line == line && same(s->lines[i].file, file))
			return s->lines[i].name;
	return "?";
}

static int by_own_desc(const void *pa, const void *pb)
{
	const struct lines_callee_row *a = pa, *b = pb;

	return (a->c.own < b->c.own) - (a->c.own > b->c.own);
}

void lines_callers_fill(const struct snapshot *s, const char *name,
                        const char *file, bool utf8,
                        struct lines_callee_row *out)
{
	size_t n = 0;
	const char *arrow = utf8 ? "\u21b0" : "<-";

	for (size_t i = 0; i < s->ncallees; i++) {
		const struct snap_callee *c = &s->callees[i];

		if (!is_caller_of(c, name, file))
			continue;
		snprintf(out[n].text, sizeof out[n].text, "%s %s (%s:%d)",
		         arrow, function_of(s, c->caller_file, c->caller_line),
		         base_name(c->caller_file), c->caller_line);
		out[n++].c = c->c;
	}
	qsort(out, n, sizeof *out, by_own_desc);
}
