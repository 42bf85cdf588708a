/* standalone_runner.h - a minimal in-process stand-in for the few Criterion
 * macros test_ring.c uses, so the ring tests can run under ThreadSanitizer.
 *
 * Why: Criterion's runner cannot start in a TSan process.  At startup it
 * maps a shared "inheritable arena" at a random address between 0x2000'0000'0000
 * and 0x7f00'0000'0000, and TSan has reserved all of that range for its
 * shadow memory, so Criterion aborts with "Could not initialize inheritable
 * arena" (Criterion issue #274).  This runner runs every test in one
 * process, in registration order, and prints "N passed, N failed".
 *
 * Include it instead of <criterion/criterion.h>, from one .c file only.
 */
#ifndef PYTOP_STANDALONE_RUNNER_H
#define PYTOP_STANDALONE_RUNNER_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define SR_MAX_TESTS 64

struct sr_test {
	const char *name;
	void (*fn)(void);
};

/* Registration happens in constructors before main, so the table has to be
 * file-scope state; only this runner touches it. */
static struct sr_test sr_tests[SR_MAX_TESTS];
static int sr_ntests;
static int sr_passed;
static bool sr_current_failed;

static void sr_register(const char *name, void (*fn)(void))
{
	if (sr_ntests == SR_MAX_TESTS) {
		fprintf(stderr, "standalone_runner: too many tests\n");
		abort();
	}
	sr_tests[sr_ntests].name = name;
	sr_tests[sr_ntests].fn = fn;
	sr_ntests++;
}

/* A failed assert ends the whole run at once (like Criterion ends the
 * test); a failed expect marks the test failed and carries on. */
static void sr_check(bool ok, bool fatal, const char *expr, const char *file, int line)
{
	if (ok)
		return;
	fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, fatal ? "assert" : "expect",
		expr);
	sr_current_failed = true;
	if (fatal) {
		printf("%d passed, 1 failed\n", sr_passed);
		exit(1);
	}
}

/* Extra Test() arguments (.timeout and the like) are accepted and ignored. */
#define Test(suite, name, ...)                                                \
	static void suite##_##name(void);                                    \
	__attribute__((constructor)) static void sr_reg_##suite##_##name(void) \
	{                                                                     \
		sr_register(#suite "::" #name, suite##_##name);                \
	}                                                                     \
	static void suite##_##name(void)

/* Messages after the condition are accepted and ignored: the failing
 * expression and its line are printed instead. */
#define SR_CHECK(fatal, cond, text) sr_check((cond), (fatal), (text), __FILE__, __LINE__)
#define cr_assert(c, ...) SR_CHECK(true, (c), #c)
#define cr_assert_not(c, ...) SR_CHECK(true, !(c), "!(" #c ")")
#define cr_assert_eq(a, b, ...) SR_CHECK(true, (a) == (b), #a " == " #b)
#define cr_assert_not_null(p, ...) SR_CHECK(true, (p) != NULL, #p " != NULL")
#define cr_expect(c, ...) SR_CHECK(false, (c), #c)
#define cr_expect_not(c, ...) SR_CHECK(false, !(c), "!(" #c ")")
#define cr_expect_eq(a, b, ...) SR_CHECK(false, (a) == (b), #a " == " #b)
#define cr_expect_gt(a, b, ...) SR_CHECK(false, (a) > (b), #a " > " #b)
#define cr_expect_null(p, ...) SR_CHECK(false, (p) == NULL, #p " == NULL")
#define cr_log_info(...) (fprintf(stderr, "  "), fprintf(stderr, __VA_ARGS__), \
			  fputc('\n', stderr))

int main(void)
{
	int failed = 0;

	for (int i = 0; i < sr_ntests; i++) {
		sr_current_failed = false;
		sr_tests[i].fn();
		failed += sr_current_failed;
		sr_passed += !sr_current_failed;
		printf("%s %s\n", sr_current_failed ? "FAIL" : "PASS", sr_tests[i].name);
	}
	printf("%d passed, %d failed\n", sr_passed, failed);
	return failed != 0;
}

#endif
