/* lines_callees.c - see lines_callees.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lines_callees.h"

#include <stdio.h>
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
