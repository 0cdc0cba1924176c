/* The search on targets of sift's own writing that guard their bugs as LLVM's libFuzzer tests
 * guard theirs: behind comparisons, libFuzzer's extra counters, or only the empty input. Each
 * must be found within a libFuzzer-sized budget, with every seed tried. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bugs guarded as LLVM's libFuzzer tests guard theirs (tests/fixtures/guarded.c: memcmp and
 * strncmp chains, substring searches, constants on either side, a 64-bit value and its negation,
 * a count of matching bytes), each found from an empty corpus with every one of three seeds
 * within a libFuzzer-sized budget: through the interposed comparisons in this build, through
 * the sanitizer's interceptors under ASan. */
static void guarded_bugs_are_found(void **state)
{
    char *dir = *state;
    sift_test_proc *proc = malloc(sizeof(*proc));
    assert_non_null(proc);
    for (int guard = 1; guard <= 6; guard++) {
        char flags[32];
        snprintf(flags, sizeof flags, "-DGUARD=%d", guard);
        assert_int_equal(sift_test_build(dir, "guarded", "tests/fixtures/guarded.c", flags), 0);
        for (int seed = 1; seed <= 3; seed++) {
            sift_test_sh(proc, dir,
                         "rm -rf c a && mkdir c a && ./guarded -seed=%d -runs=3000000 "
                         "-artifact_prefix=a/ c >/dev/null 2>&1",
                         seed);
            if (sift_test_count_entries(dir, "a", "crash-*") != 1)
                fail_msg("guard %d, seed %d: not found", guard, seed);
        }
    }
    free(proc);
}

/* libFuzzer's extra counters count as coverage: a bug that only they lead to is found (without
 * them four bytes would have to be guessed at once). */
static void extra_counters_guide_the_search(void **state)
{
    char *dir = *state;
    sift_test_proc proc;
    assert_int_equal(sift_test_build(dir, "extra", "tests/fixtures/extra_counters.c", ""), 0);
    for (int seed = 1; seed <= 2; seed++) {
        int rc = SIFT_TEST_SH(
            "rm -rf c a && mkdir c a && ./extra -seed=%d -runs=2000000 -artifact_prefix=a/ c",
            seed);
        assert_int_not_equal(rc, 0);
        assert_int_equal(sift_test_count_entries(dir, "a", "crash-*"), 1);
    }
}

/* The empty input runs first, once, as in libFuzzer: a bug only it reaches is found at once,
 * and the run ends there. */
static void the_empty_input_runs_first(void **state)
{
    char *dir = *state;
    sift_test_proc proc;
    assert_int_equal(sift_test_build(dir, "empty", "tests/fixtures/empty.c", ""), 0);
    int rc = SIFT_TEST_SH(
        "rm -rf c a && mkdir c a && ./empty -seed=1 -runs=100000 -artifact_prefix=a/ c");
    assert_int_not_equal(rc, 0);
    /* The SHA-1 of no bytes names the artifact. */
    assert_non_null(
        strstr(proc.err, "Test unit written to a/crash-da39a3ee5e6b4b0d3255bfef95601890afd80709"));
    assert_null(strstr(proc.err, "INITED"));
    assert_null(strstr(proc.err, "Done "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SIFT_TEST_IN_SCRATCH(guarded_bugs_are_found),
        SIFT_TEST_IN_SCRATCH(extra_counters_guide_the_search),
        SIFT_TEST_IN_SCRATCH(the_empty_input_runs_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
