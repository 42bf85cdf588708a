/* test_tree_output.c - the call tree and the stacks in batch output:
 * -b --tree prints the tree, indented, with the function table's
 * columns, under the function table; --json --stacks adds "frames" and
 * "stacks" (every stack's frames outermost first, its counts and split)
 * and leaves every other field as it was; the options refuse --tree
 * without -b (or with --json) and --stacks without --json. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "headless.h"
#include "snapshot_builder.h"
#include "stack_fixture.h"
#include "../ui/batch_text.h"
#include "../ui/json_out.h"

static struct snapshot fixture(void)
{
	struct snapshot s = sb_snapshot(4242, "python3 app.py", "3.12.1", 0);

	sf_stack(&s, "main:3 handle:12 parse:21", 500, 1, 4242);
	sf_stack(&s, "main:3 handle:14 render:31", 200, 1, 4242);
	sf_stack(&s, "main:5 idle:42", 100, 2, 4242);
	sf_stack(&s, "main:3 handle:12 parse:22 parse:25", 100, 1, 4242);
	sf_stack(&s, "main:5 lib_tiny:7", 2, 2, 4242);
	sf_stack(&s, "!", 98, 1, 4242);
	return s;
}

Test(batch, tree_follows_the_function_table)
{
	struct snapshot s = fixture();
	char *text = headless_capture(batch_text_print_tree, &s);
	char *plain = headless_capture(batch_text_print, &s);
	const char *want =
	"Call tree since start, % of 1,000 samples of running threads, nodes from 0.5%\n"
	" %Own  %Total   %Py  %Nat  %Sys  Mem+   Net  Faults  MajFlt  OwnTime  TotalTime Function (file:line)\n"
	"  0.0    90.2   0.0   0.0   0.0     0     0       0       0    0.00s      0.90s ▾ main (app.py:1)\n"
	"  0.0    80.0   0.0   0.0   0.0     0     0       0       0    0.00s      0.80s   ▾ handle (app.py:11)\n"
	" 50.0    60.0  37.5  12.5   0.0  2.0M  2.0M       0       0    0.50s      0.60s     ▾ parse (app.py:21)\n"
	" 10.0    10.0   7.5   2.5   0.0  400K  400K       0       0    0.10s      0.10s         parse (app.py:21)\n"
	" 20.0    20.0  15.0   5.0   0.0  800K  800K       0       0    0.20s      0.20s       render (app.py:31)\n"
	" 10.0    10.0   7.5   2.5   0.0  400K  400K       0       0    0.10s      0.10s     idle (app.py:41)\n"
	"  9.8     9.8   7.3   2.5   0.0  392K  392K       0       0    0.10s      0.10s   [other stacks] (stacks folded away)\n"
	"(1 smaller nodes not shown)\n";

	cr_assert_not_null(text);
	cr_assert_not_null(strstr(text, want), "got:\n%s", text);
	cr_expect_null(strstr(plain, "Call tree"), "only with --tree");
	/* the tree comes after the functions, before the threads */
	cr_expect_lt(strstr(text, "Function (file:line)"), strstr(text, want));
	free(text);
	free(plain);
	snapshot_free(&s);
}

static json_t *json_of(int (*print)(FILE *, const struct snapshot *),
                       const struct snapshot *s)
{
	char *text = headless_capture(print, s);
	json_error_t err;
	json_t *o;

	cr_assert_not_null(text);
	cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1, "one line");
	o = json_loads(text, 0, &err);
	cr_assert_not_null(o, "%s: %s", err.text, text);
	free(text);
	return o;
}

/* "main handle parse" from a stack's frame indices. */
static void names_of(json_t *frames, json_t *idx, char *buf, size_t size)
{
	size_t i, len = 0;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(idx, i, v) {
		json_t *f = json_array_get(frames, (size_t)json_integer_value(v));
		cr_assert_not_null(f);
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "",
		        json_string_value(json_object_get(f, "name")));
	}
}

Test(json, stacks_only_when_asked_and_nothing_else_changes)
{
	struct snapshot s = fixture();
	json_t *plain = json_of(json_out_print, &s);
	json_t *with = json_of(json_out_print_stacks, &s);
	json_t *frames = json_object_get(with, "frames");
	json_t *stacks = json_object_get(with, "stacks"), *st;
	uint64_t samples = 0;
	size_t i;
	char names[256];

	cr_expect_null(json_object_get(plain, "frames"));
	cr_expect_null(json_object_get(plain, "stacks"));
	cr_assert(json_is_array(frames) && json_is_array(stacks));
	cr_expect_eq(json_array_size(frames), s.nstack_frames);
	cr_expect_eq(json_array_size(stacks), 6);
	json_array_foreach(stacks, i, st)
		samples += (uint64_t)json_integer_value(json_object_get(st, "samples"));
	cr_expect_eq(samples, 1000);
	st = json_array_get(stacks, 3);
	names_of(frames, json_object_get(st, "frames"), names, sizeof names);
	cr_expect_str_eq(names, "main handle parse parse");
	cr_expect_eq(json_integer_value(json_object_get(st, "samples")), 100);
	cr_expect_eq(json_integer_value(json_object_get(st, "tid")), 1);
	cr_expect_eq(json_real_value(json_object_get(st, "python")), 75.0);
	cr_expect_eq(json_integer_value(json_object_get(st, "mem_growth")),
	             100 * 4096);
	json_t *f = json_array_get(frames, json_integer_value(
	        json_array_get(json_object_get(st, "frames"), 2)));
	cr_expect_str_eq(json_string_value(json_object_get(f, "file")), "app.py");
	cr_expect_eq(json_integer_value(json_object_get(f, "line")), 22);
	cr_expect_eq(json_integer_value(json_object_get(f, "first_line")), 21);
	cr_expect_str_eq(json_string_value(json_object_get(f, "kind")), "python");
	names_of(frames, json_object_get(json_array_get(stacks, 5), "frames"),
	         names, sizeof names);
	cr_expect_str_eq(names, "[other stacks]");
	/* every other field as it was */
	json_object_del(with, "frames");
	json_object_del(with, "stacks");
	cr_expect(json_equal(plain, with));
	json_decref(plain);
	json_decref(with);
	snapshot_free(&s);
}

/* One thread's stacks only, as the functions under a thread filter. */
Test(json, stacks_follow_the_thread_filter)
{
	struct snapshot s = fixture();
	json_t *o, *st;
	size_t i;

	s.thread_filter = 2;
	o = json_of(json_out_print_stacks, &s);
	cr_expect_eq(json_array_size(json_object_get(o, "stacks")), 2);
	json_array_foreach(json_object_get(o, "stacks"), i, st)
		cr_expect_eq(json_integer_value(json_object_get(st, "tid")), 2);
	json_decref(o);
	snapshot_free(&s);
}

static enum options_result parse(const char *const *args, struct options *o)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = (char *)"pytop";
	for (; *args != NULL; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return options_parse(argc, argv, true, o);
}

Test(options, tree_and_stacks_belong_to_batch_output)
{
	struct options o;

	cr_expect_eq(parse((const char *[]){ "-b", "--tree", "-p", "1", NULL },
	                   &o), OPTIONS_OK);
	cr_expect(o.tree && !o.stacks);
	cr_expect_eq(parse((const char *[]){ "-b", "--json", "--stacks", "-p",
	                                     "1", NULL }, &o), OPTIONS_OK);
	cr_expect(o.stacks && !o.tree);
	cr_expect_eq(parse((const char *[]){ "--tree", "-p", "1", NULL }, &o),
	             OPTIONS_ERROR);
	cr_expect_eq(parse((const char *[]){ "-b", "--json", "--tree", "-p",
	                                     "1", NULL }, &o), OPTIONS_ERROR);
	cr_expect_eq(parse((const char *[]){ "-b", "--stacks", "-p", "1", NULL },
	                   &o), OPTIONS_ERROR);
}
