/* The man page's OPTIONS section and `pytop --help` name the same long
 * options: each one either lists appears in the other. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAX_OPTS 64
#define MAX_NAME 32

struct names {
	char v[MAX_OPTS][MAX_NAME];
	size_t n;
};

static void add(struct names *s, const char *name, size_t len)
{
	cr_assert_lt(len, MAX_NAME, "option name too long: %.*s", (int)len, name);
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && memcmp(s->v[i], name, len) == 0)
			return;
	cr_assert_lt(s->n, MAX_OPTS);
	memcpy(s->v[s->n], name, len);
	s->v[s->n++][len] = '\0';
}

static bool has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return true;
	return false;
}

/* Every "--name" in text; in roff, "\-" stands for "-" (dash is "\-"). */
static void scan(const char *text, bool roff, struct names *out)
{
	const char *dash = roff ? "\\-" : "-";
	size_t dl = strlen(dash);

	for (const char *p = text; (p = strstr(p, dash)) != NULL;) {
		char name[MAX_NAME];
		size_t len = 0;

		if (strncmp(p + dl, dash, dl) != 0 || !islower((unsigned char)p[2 * dl])) {
			p += dl;
			continue;
		}
		p += 2 * dl;
		while (len + 1 < sizeof(name)) {
			if (islower((unsigned char)*p)) {
				name[len++] = *p++;
			} else if (strncmp(p, dash, dl) == 0 && islower((unsigned char)p[dl])) {
				name[len++] = '-';
				p += dl;
			} else {
				break;
			}
		}
		add(out, name, len);
	}
}

static char *man_options_section(void)
{
	const char *srcdir = getenv("PYTOP_SRCDIR");
	char path[4096], *text = NULL, *start, *end;
	size_t cap = 0;
	FILE *f;

	cr_assert_not_null(srcdir, "PYTOP_SRCDIR is not set (make check sets it)");
	snprintf(path, sizeof(path), "%s/man/pytop.1.in", srcdir);
	f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s", path);
	cr_assert_gt(getdelim(&text, &cap, '\0', f), 0);
	fclose(f);
	start = strstr(text, "\n.SH OPTIONS\n");
	cr_assert_not_null(start, "%s has no OPTIONS section", path);
	start += strlen("\n.SH OPTIONS\n");
	end = strstr(start, "\n.SH ");
	if (end != NULL)
		*end = '\0';
	memmove(text, start, strlen(start) + 1);
	return text;
}

static void both(struct names *man, struct names *help)
{
	char *text = man_options_section(), *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	memset(man, 0, sizeof(*man));
	memset(help, 0, sizeof(*help));
	scan(text, true, man);
	cr_assert_not_null(f);
	options_print_help(f);
	fclose(f);
	scan(out, false, help);
	free(text);
	free(out);
	cr_assert_gt(man->n, 0, "no long option found in the man page's OPTIONS");
	cr_assert_gt(help->n, 0, "no long option found in --help");
}

Test(man_options, every_help_option_is_in_the_man_page)
{
	struct names man, help;

	both(&man, &help);
	for (size_t i = 0; i < help.n; i++)
		cr_expect(has(&man, help.v[i]),
		          "--help lists --%s, the man page's OPTIONS do not", help.v[i]);
}

Test(man_options, every_man_page_option_is_in_help)
{
	struct names man, help;

	both(&man, &help);
	for (size_t i = 0; i < man.n; i++)
		cr_expect(has(&help, man.v[i]),
		          "the man page's OPTIONS list --%s, --help does not", man.v[i]);
}
