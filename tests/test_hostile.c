/* Hostile targets: a harness that installs its own crash handler, changes its working folder,
 * forks, writes into its input, or runs where the symbolizer cannot start. None of it may cost
 * a crash or move an artifact (docs/robustness.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <string.h>

static char *dir;
static sift_test_proc proc;

#define entries(sub, glob) sift_test_count_entries(dir, sub, glob)

static int build_harnesses(void **state)
{
    *state = dir = sift_test_scratch();
    return sift_test_build(dir, "calc", "examples/calc.c", "") ||
                   sift_test_build(dir, "hostile", "tests/fixtures/hostile.c", "")
               ? -1
               : 0;
}

/* A sanitizer whose symbolizer cannot start (seen as an unprivileged user) writes into a pipe
 * without a reader: the crash report must not die of SIGPIPE before the artifact is written
 * and announced. A symbolizer that exits at once stands in for it. */
static void a_symbolizer_that_cannot_start_loses_no_crash(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf a && mkdir -p a bin && printf '#!/bin/sh\\nexit 0\\n' > "
        "bin/llvm-symbolizer && chmod 755 bin/llvm-symbolizer && rm -rf c && mkdir c && "
        "printf 1/7 > c/crash17 && o=external_symbolizer_path=$PWD/bin/llvm-symbolizer && "
        "ASAN_OPTIONS=$ASAN_OPTIONS:$o UBSAN_OPTIONS=$UBSAN_OPTIONS:$o "
        "./calc -runs=0 -artifact_prefix=a/ c");
    if (rc == 141) fail_msg("died of SIGPIPE:\n%s", proc.err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Test unit written to a/crash-"));
    assert_int_equal(entries("a", "crash-*"), 1);
}

/* The harness in tests/fixtures/hostile.c, run once on the input "MODE" (a crash each time)
 * with the environment ENV ("" for none), must leave its artifact in a/ and exit with a
 * failure; returns the exit code. */
static int hostile_crash(const char *env, const char *mode)
{
    int rc = SIFT_TEST_SH("rm -rf a c sub && mkdir a c sub && printf '%s' > c/in && %s ./hostile "
                          "-runs=0 -artifact_prefix=a/ c",
                          mode, env);
    if (rc == 0 || entries("a", "crash-*") != 1)
        fail_msg("%s: exit code %d, %ld artifacts:\n%s", mode, rc, entries("a", "crash-*"),
                 proc.err);
    assert_non_null(strstr(proc.err, "Test unit written to a/crash-"));
    return rc;
}

/* A SIGSEGV handler that the target installs in LLVMFuzzerInitialize (and that dies of the
 * signal without a word) does not take the crash away from sift. */
static void own_crash_handler_does_not_swallow_the_crash(void **state)
{
    (void)state;
    assert_int_not_equal(hostile_crash("OWN_SEGV_HANDLER=1", "S"), 128 + 11);
}

/* A target that changes its working folder gets its artifacts, and its finds, where the paths
 * given at the start pointed. */
static void chdir_moves_no_artifact(void **state)
{
    (void)state;
    hostile_crash("", "C");
    assert_int_equal(entries("sub", "[!.]*"), 0);
    assert_int_equal(SIFT_TEST_SH("rm -rf sub crash-* && mkdir sub && ./hostile -runs=0 c"), 1);
    assert_non_null(strstr(proc.err, "Test unit written to ./crash-"));
    assert_int_equal(sift_test_count_entries(dir, NULL, "crash-*"), 1);
    assert_int_equal(entries("sub", "[!.]*"), 0);
    assert_int_equal(SIFT_TEST_SH("rm -f crash-*"), 0);
}

/* A crash in a process that the target forks is reported by that process, and the campaign
 * fails with it. */
static void crash_in_a_forked_child_fails_the_campaign(void **state)
{
    (void)state;
    assert_int_equal(hostile_crash("", "F"), 77);
    assert_non_null(strstr(proc.err, "ERROR: libFuzzer: a process forked by the fuzz target "
                                     "crashed"));
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf F > c/f && ./hostile -runs=100 "
                          "-artifact_prefix=a/ c");
    assert_int_equal(rc, 77);
    assert_int_equal(entries("a", "crash-*"), 1);
    /* A child that calls exit() ends as it asks. */
    rc = SIFT_TEST_SH("rm -rf a && mkdir a && printf E > in && ./hostile -artifact_prefix=a/ in");
    assert_int_equal(rc, 0);
    assert_int_equal(entries("a", "[!.]*"), 0);
}

/* A target that forks on its first input, while the fuzzer's memory watcher thread may still
 * be starting, leaves its child nothing that hangs it at exit: under ASan the child's leak check
 * waited for ever on an allocator lock that the starting thread held at the fork (8 starts of
 * 300 here, before). Each start is killed after a minute, far beyond what one takes. */
static void a_child_forked_at_start_up_exits(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("printf E > in && hung=0 && for i in $(seq 60); do "
                          "timeout -s KILL 60 ./hostile in >/dev/null 2>&1; "
                          "[ $? = 137 ] && hung=$((hung + 1)); done; echo $hung");
    assert_int_equal(rc, 0);
    assert_string_equal(proc.out, "0\n");
}

/* A target that writes into its input is stopped as libFuzzer stops it; the artifact and the
 * corpus hold the input as it was, and the read-only newline a campaign without seeds starts
 * from is written over without harm. */
static void overwritten_input_is_caught_and_never_saved(void **state)
{
    (void)state;
    assert_int_equal(hostile_crash("", "W"), 77);
    assert_non_null(strstr(proc.err, "ERROR: libFuzzer: fuzz target overwrites its const input"));
    assert_int_equal(SIFT_TEST_SH("cat a/crash-*"), 0);
    assert_string_equal(proc.out, "W");
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf W > c/w && ./hostile -runs=1000 "
                          "-artifact_prefix=a/ c && exit 3; cat c/* a/*");
    assert_int_equal(rc, 0);
    assert_string_equal(proc.out, "WW");
    rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && ./hostile -runs=1000 -artifact_prefix=a/ c");
    assert_int_equal(rc, 77);
    assert_non_null(strstr(proc.err, "overwrites its const input"));
    assert_int_equal(SIFT_TEST_SH("cat a/crash-*"), 0);
    assert_string_equal(proc.out, "\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_symbolizer_that_cannot_start_loses_no_crash),
        cmocka_unit_test(own_crash_handler_does_not_swallow_the_crash),
        cmocka_unit_test(chdir_moves_no_artifact),
        cmocka_unit_test(crash_in_a_forked_child_fails_the_campaign),
        cmocka_unit_test(a_child_forked_at_start_up_exits),
        cmocka_unit_test(overwritten_input_is_caught_and_never_saved),
    };
    return cmocka_run_group_tests(tests, build_harnesses, sift_test_scratch_teardown);
}
