/* -malloc_limit_mb in every build: a harness built by sift-c++ asks for 1 GiB through each
 * allocation function of C and C++, and the engine reports it at the request, as libFuzzer does
 * under a sanitizer; in builds without one through the wraps of src/rt/interpose/alloc.c, in
 * the ASan build through the sanitizer's malloc hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <string.h>

static char *dir; /* scratch folder shared by the tests; the harness is built once */
static sift_test_proc proc;

static int build_harness(void **state)
{
    *state = dir = sift_test_scratch();
    if (SIFT_TEST_SH(SIFT_BUILD_DIR "/bin/sift-c++ -g -O1 -fsanitize=fuzzer %s '" SIFT_SOURCE_DIR
                                    "/tests/fixtures/alloc.cc' -o alloc",
                     SIFT_TEST_SAN) != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return 0;
}

/* Each function, reported at 1 GiB with the size asked for, an oom- artifact and libFuzzer's
 * exit code, before a byte of it was touched. */
static void every_allocation_function_meets_the_limit(void **state)
{
    (void)state;
    for (const char *how = "mcryalpnNtT"; *how; how++) {
        int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && printf %c > c/in && ./alloc -runs=0 "
                              "-malloc_limit_mb=100 -artifact_prefix=a/ c",
                              *how);
        if (rc != 71) fail_msg("'%c': exit status %d: %s", *how, rc, proc.err);
        if (!strstr(proc.err, "ERROR: libFuzzer: out-of-memory (malloc(1073741824))\n"))
            fail_msg("'%c': no out-of-memory line: %s", *how, proc.err);
        assert_non_null(strstr(proc.err, "SUMMARY: libFuzzer: out-of-memory\n"));
        assert_int_equal(sift_test_count_entries(dir, "a", "oom-*"), 1);
    }
}

/* Under the limit every function allocates as it did; -rss_limit_mb is the default limit, and
 * 0 leaves allocations unbounded. The limit is well above what ASan's allocator touches for a
 * 1 GiB block before its malloc hook runs (its shadow, 128 MB): the memory watcher would
 * otherwise report the RSS when it looks first. */
static void below_the_limit_nothing_changes(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("printf s > small && ./alloc -malloc_limit_mb=1 small"), 0);
    assert_non_null(strstr(proc.err, "Executed small"));
    assert_int_equal(SIFT_TEST_SH("printf m > in && ./alloc -rss_limit_mb=500 in"), 71);
    assert_non_null(strstr(proc.err, "out-of-memory (malloc(1073741824))"));
    assert_int_equal(SIFT_TEST_SH("./alloc -malloc_limit_mb=2048 -rss_limit_mb=0 in"), 0);
    assert_int_equal(SIFT_TEST_SH("./alloc -rss_limit_mb=0 in"), 0);
}

/* A program that sift-cc links without the engine (a configure check, a project's tool)
 * allocates without a limit. */
static void programs_without_the_engine_allocate_freely(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("printf '#include <stdlib.h>\\nint main(void) { char *p = "
                          "malloc((size_t)3 << 30); if (!p) return 1; p[0] = 1; free(p); "
                          "return 0; }\\n' > plain.c && " SIFT_BUILD_DIR "/bin/sift-cc %s "
                          "plain.c -o plain && ./plain",
                          SIFT_TEST_SAN);
    if (rc != 0) fail_msg("exit status %d: %s%s", rc, proc.out, proc.err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_function_meets_the_limit),
        cmocka_unit_test(below_the_limit_nothing_changes),
        cmocka_unit_test(programs_without_the_engine_allocate_freely),
    };
    return cmocka_run_group_tests(tests, build_harness, sift_test_scratch_teardown);
}
