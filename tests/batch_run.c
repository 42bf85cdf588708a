/* batch_run.c - pytop -b on a workload script, for the live session
 * tests. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "batch_run.h"

#include <criterion/criterion.h>

#include "harness.h"

static void add(const char *argv[], size_t max, size_t *n, const char *arg)
{
	cr_assert_lt(*n + 1, max, "too many pytop arguments");
	argv[(*n)++] = arg;
}

static void add_all(const char *argv[], size_t max, size_t *n,
                    const char *const more[])
{
	for (size_t i = 0; more != NULL && more[i] != NULL; i++)
		add(argv, max, n, more[i]);
}

void batch_argv(const char *argv[], size_t max, bool json,
                const char *const opts[], const char *const extra[],
                const char *script, const char *seconds)
{
	const char *py = h_need_python(H_PY_DEBIAN);
	size_t n = 0;

	add(argv, max, &n, h_pytop());
	add(argv, max, &n, "-b");
	if (json)
		add(argv, max, &n, "--json");
	add(argv, max, &n, "-d");
	add(argv, max, &n, "0.25");
	add_all(argv, max, &n, opts);
	add_all(argv, max, &n, extra);
	add(argv, max, &n, "--");
	add(argv, max, &n, py);
	add(argv, max, &n, script);
	add(argv, max, &n, seconds);
	argv[n] = NULL;
}

json_t *batch_last_json(const char *out)
{
	json_t *blocks, *last;
	int bad = 0;

	blocks = h_json_lines(out, &bad);
	cr_assert_not_null(blocks, "bad JSON line %d", bad);
	last = json_incref(json_array_get(blocks, json_array_size(blocks) - 1));
	json_decref(blocks);
	return last;
}
