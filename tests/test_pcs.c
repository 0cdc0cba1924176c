/* The program counters a campaign covers, reported as libFuzzer reports them (engine/core/pcs.c),
 * on a chain of functions reached one byte deeper each (tests/fixtures/chain.c): NEW_FUNC and
 * NEW_PC lines, -exit_on_src_pos and the coverage listings. sift-cc links a sanitizer runtime's
 * symbolizer into every build; nothing here reads the names it finds, which depend on
 * llvm-symbolizer being installed (without it, a PC is described by its module and offset). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir; /* scratch folder shared by the tests; the harness is built once */
static sift_test_proc proc;

static int build_chain(void **state)
{
    *state = dir = sift_test_scratch();
    return sift_test_build(dir, "chain", "tests/fixtures/chain.c", "");
}

/* The occurrences of TEXT in S. */
static size_t count(const char *s, const char *text)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, text)); p++)
        n++;
    return n;
}

/* By default, as libFuzzer's -print_funcs=2: at most two NEW_FUNC lines after an input taken,
 * numbered of how many it covered first, and none for what the seeds covered (before INITED).
 * -print_funcs=0 prints none; -print_pcs=1 adds a NEW_PC line per counter covered first. */
static void new_functions_and_pcs_are_printed(void **state)
{
    (void)state;
    SIFT_TEST_SH("./chain -seed=1 -runs=3000");
    const char *inited = strstr(proc.err, "INITED");
    assert_non_null(inited);
    const char *first = strstr(proc.err, "\tNEW_FUNC[1/");
    assert_non_null(first);
    assert_true(first > inited);
    assert_int_equal(count(proc.err, "\tNEW_FUNC[3/"), 0);
    assert_int_equal(count(proc.err, "NEW_PC"), 0);
    SIFT_TEST_SH("./chain -seed=1 -runs=3000 -print_funcs=0 -print_pcs=1");
    assert_int_equal(count(proc.err, "NEW_FUNC"), 0);
    first = strstr(proc.err, "\tNEW_PC: 0x");
    assert_non_null(first);
    assert_true(first > strstr(proc.err, "INITED"));
}

/* -exit_on_src_pos stops the run, with exit code 0, once an input taken covers code whose
 * description holds the text: every PC of the harness is described with "chain" in it (its
 * source file, or without llvm-symbolizer its module); a text nothing holds lets the run go on. */
static void exit_on_src_pos_stops_at_a_match(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("./chain -seed=1 -runs=3000 -exit_on_src_pos=nowhere.c:99999"),
                     0);
    assert_null(strstr(proc.err, "found line matching"));
    assert_non_null(strstr(proc.err, "Done 3000 runs"));
    assert_int_equal(SIFT_TEST_SH("./chain -seed=1 -runs=1000000 -exit_on_src_pos=chain"), 0);
    assert_non_null(strstr(proc.err, "INFO: found line matching 'chain', exiting.\n"));
    assert_null(strstr(proc.err, "Done 1000000 runs"));
}

/* -print_coverage lists each function, covered or not, with its edges, and -print_full_coverage
 * its uncovered and covered lines, at exit: with the seed "F", the harness and first() are
 * covered, second() and third() not. */
static void coverage_is_listed_at_exit(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf c && mkdir c && printf F > c/a && "
                                  "./chain -runs=0 -print_coverage=1 -print_full_coverage=1 c"),
                     0);
    const char *listing = strstr(proc.err, "COVERAGE:\n");
    assert_non_null(listing);
    assert_int_equal(count(listing, "\nCOVERED_FUNC: hits: 1 edges: "), 2);
    assert_int_equal(count(listing, "\nUNCOVERED_FUNC: hits: 0 edges: 0/"), 2);
    const char *full = strstr(proc.err, "FULL COVERAGE:\n");
    assert_non_null(full);
    assert_int_equal(count(full, "\nU"), 4);
    assert_int_equal(count(full, "\nC"), 4);
}

/* -focus_function finds the function by the symbolizer's name for it, as libFuzzer: a name no
 * function has stops the run, and so does any name where no symbolizer is installed; "auto"
 * (libFuzzer's data-flow choice) sets nothing. With the seed "FUZ!", one of the seeds' entries
 * runs third(), which the INFO line and the status lines count. */
static void focus_function_is_found_by_name(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("./chain -runs=10 -focus_function=nowhere"), 1);
    assert_non_null(strstr(proc.err, "ERROR: Failed to set focus function. Make sure the function "
                                     "name is valid (nowhere) and symbolization is enabled.\n"));
    assert_int_equal(SIFT_TEST_SH("./chain -runs=10 -focus_function=auto"), 0);
    assert_null(strstr(proc.err, "Focus function"));
    int rc = SIFT_TEST_SH("rm -rf f && mkdir f && printf F > f/a && printf FUZ! > f/b && "
                          "./chain -seed=1 -runs=2000 -focus_function=third f");
    if (strstr(proc.err, "ERROR: Failed to set focus function")) {
        assert_int_equal(rc, 1); /* no symbolizer here to name the functions */
        return;
    }
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "INFO: Focus function is set to 'third'\n"));
    assert_non_null(strstr(proc.err, "INITED"));
    assert_non_null(strstr(proc.err, " focus: 1 "));
    const char *touch = strstr(proc.err, "INFO: 1/");
    assert_non_null(touch);
    assert_true(touch > strstr(proc.err, "INITED"));
    assert_non_null(strstr(touch, " inputs touch the focus function\n"));
    assert_non_null(strstr(strstr(proc.err, "DONE"), " focus: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_functions_and_pcs_are_printed),
        cmocka_unit_test(exit_on_src_pos_stops_at_a_match),
        cmocka_unit_test(coverage_is_listed_at_exit),
        cmocka_unit_test(focus_function_is_found_by_name),
    };
    return cmocka_run_group_tests(tests, build_chain, NULL);
}
