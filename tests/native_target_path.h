/* native_target_path.h - where the tests' C program with known hot
 * functions (tests/native_target, built with -g) is: next to pytop in
 * the build tree. */
#ifndef PYTOP_TESTS_NATIVE_TARGET_PATH_H
#define PYTOP_TESTS_NATIVE_TARGET_PATH_H

/* Its path (owned). */
char *native_target_path(void);

#endif
