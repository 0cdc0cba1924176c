/* Read first by `make lint` in every test file (-include), never by the build. cmocka 1.1 does
 * not declare _fail(), behind fail() and fail_msg(), noreturn, though it never returns (it jumps
 * out of the test): told so, clang's analyzer stops following a test past a failure, as in
 * `if (!p) fail_msg(...); use(p);`. */
#ifndef SIFT_TEST_ANALYZER_H
#define SIFT_TEST_ANALYZER_H

void _fail(const char *const file, const int line) __attribute__((analyzer_noreturn));

#endif
