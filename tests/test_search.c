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

/* Bugs guarded as LLVM's libFuzzer tests guard theirs (tests/fixtures/guarded.c), each under the
 * flags and within the run budget of the libFuzzer test whose pattern it follows, or a smaller
 * one. Found from an empty corpus with every one of three seeds: through the interposed
 * comparisons in this build, through the sanitizer's interceptors under ASan. */
static const struct {
    int guard;
    const char *flags;
    const char *build; /* compiler flags beyond -DGUARD=N */
} guards[] = {
    {1, "-runs=3000000", NULL}, /* memcmp chain (MemcmpTest) */
    {2, "-runs=3000000", NULL}, /* strncmp parts (StrncmpTest) */
    {3, "-runs=3000000", NULL}, /* strstr, memmem (StrstrTest) */
    {4, "-runs=3000000", NULL}, /* constant first */
    {5, "-runs=3000000", NULL}, /* 64-bit constant, negation */
    /* Count of matching bytes: LLVM's CounterTest has no run limit (and -max_len=6, guard 12).
     * Here the fourth match must land at one of a hundred-odd positions of the entry that
     * holds three: 48 seeds took 33 K to 4.2 M runs, and 3 of them more than 3 M. */
    {6, "-runs=10000000", NULL},
    {7, "-runs=10000000", NULL},                      /* byte-swapped fields (SwapCmpTest) */
    {8, "-use_value_profile=1 -runs=10000000", NULL}, /* llabs(x) < 0 (AbsNegAndConstant64Test) */
    {9, "-use_value_profile=2 -runs=1000000", NULL},  /* bytes folded into a sum (ThreeBytes) */
    /* Deep recursion (DeepRecursionTest): sift-cc's stack-depth coverage, as clang's. */
    {10, "-runs=10000000", NULL},
    {11, "-runs=3000000", NULL},            /* an allocator that compares (custom alloc) */
    {12, "-max_len=6 -runs=3000000", NULL}, /* counts, exit() (CounterTest) */
};

static void guarded_bugs_are_found(void **state)
{
    char *dir = *state;
    sift_test_proc *proc = malloc(sizeof(*proc));
    assert_non_null(proc);
    for (size_t g = 0; g < sizeof guards / sizeof guards[0]; g++) {
        char flags[160];
        snprintf(flags, sizeof flags, "-DGUARD=%d %s", guards[g].guard,
                 guards[g].build ? guards[g].build : "");
        assert_int_equal(sift_test_build(dir, "guarded", "tests/fixtures/guarded.c", flags), 0);
        for (int seed = 1; seed <= 3; seed++) {
            /* The limit only turns a hang (a deadlock at start-up, say) into a failure. */
            int rc = sift_test_sh(proc, dir,
                                  "rm -rf c a && mkdir c a && timeout 900 ./guarded -seed=%d %s "
                                  "-artifact_prefix=a/ c >/dev/null 2>&1",
                                  seed, guards[g].flags);
            if (rc == 124) fail_msg("guard %d, seed %d: did not end", guards[g].guard, seed);
            if (sift_test_count_entries(dir, "a", "crash-*") != 1)
                fail_msg("guard %d, seed %d: not found", guards[g].guard, seed);
        }
    }
    free(proc);
}

/* libFuzzer's extra counters count as coverage: a bug that only they lead to is found (without
 * them four bytes would have to be guessed at once). Their number is printed, as libFuzzer's. */
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
        assert_non_null(strstr(proc.err, "INFO: 5 Extra Counters\n"));
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
