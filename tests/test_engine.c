/* Integration tests of the engine: real harnesses built with sift-cc, driven as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/subprocess.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dir; /* scratch folder shared by the tests; harnesses are built once */
static sift_test_proc proc;

/* A shell command line in the scratch folder; its status. */
#define sh(...) sift_test_sh(&proc, dir, __VA_ARGS__)

static size_t count_prefixed(const char *sub, const char *prefix)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, sub);
    DIR *d = opendir(path);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.' && !strncmp(e->d_name, prefix, strlen(prefix));
    if (d) closedir(d);
    return n;
}

static int build_harnesses(void **state)
{
    (void)state;
    dir = sift_test_tmpdir();
    assert_non_null(dir);
    const char *cc = SIFT_BUILD_DIR "/bin/sift-cc -g -O1";
    /* The magic example's overflow needs ASan to be seen, in either build. */
    if (sh("%s -fsanitize=fuzzer,address%s " SIFT_SOURCE_DIR "/examples/magic.c -o magic &&"
           "%s -fsanitize=fuzzer %s " SIFT_SOURCE_DIR "/tests/fixtures/faults.c -o faults &&"
           "%s -fsanitize=fuzzer %s " SIFT_SOURCE_DIR "/tests/fixtures/custom.c -o custom &&"
           "%s -fsanitize=fuzzer %s " SIFT_SOURCE_DIR "/examples/calc.c -o calc &&"
           "%s -fsanitize=fuzzer %s " SIFT_SOURCE_DIR "/examples/tlv.c -o tlv",
           cc, strstr(SIFT_TEST_SAN, "undefined") ? ",undefined" : "", cc, SIFT_TEST_SAN, cc,
           SIFT_TEST_SAN, cc, SIFT_TEST_SAN, cc, SIFT_TEST_SAN) != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return 0;
}

static int remove_scratch(void **state)
{
    (void)state;
    sift_test_rmtree(dir);
    return 0;
}

static void finds_the_magic_bug_from_nothing(void **state)
{
    (void)state;
    int rc =
        sh("rm -rf c a && mkdir c a && ./magic -seed=1 -max_total_time=120 -artifact_prefix=a/"
           " c 2>log; echo rc=$?; grep -m1 'INFO: Seed' log; grep -m1 INITED log; grep -m1 NEW log;"
           " grep -E 'ERROR: AddressSanitizer|Test unit written' log");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "INFO: Seed: 1"));
    assert_non_null(strstr(proc.out, "INITED cov: "));
    assert_non_null(strstr(proc.out, "NEW    cov: "));
    assert_non_null(strstr(proc.out, "ERROR: AddressSanitizer: stack-buffer-overflow"));
    assert_non_null(strstr(proc.out, "Test unit written to a/crash-"));
    assert_null(strstr(proc.out, "rc=0"));
    assert_int_equal(count_prefixed("a", "crash-"), 1);
    assert_true(count_prefixed("c", "") > 2); /* new inputs were saved into the corpus */

    /* Reproduction from the artifact. */
    rc = sh("./magic a/crash-*");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Running: a/crash-"));
    assert_non_null(strstr(proc.err, "SUMMARY: AddressSanitizer: stack-buffer-overflow"));

    /* A saved corpus input reproduces cleanly. */
    rc = sh("for f in c/*; do ./magic \"$f\" || exit 1; done");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "NOTE: fuzzing was not performed"));
}

static void runs_limit_and_stats(void **state)
{
    (void)state;
    int rc = sh("rm -rf c && mkdir c && ./tlv -seed=3 -runs=2000 -max_len=8 -stats_file=s.json "
                "-print_final_stats=1 c 2>&1 | grep -E 'DONE|Done|stat::number' ; cat s.json");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "DONE   cov: "));
    assert_non_null(strstr(proc.out, "Done 2000 runs in "));
    assert_non_null(strstr(proc.out, "stat::number_of_executed_units: 2000"));
    assert_non_null(strstr(proc.out, "\"execs\": 2000"));
}

static void smaller_inputs_replace_larger_ones(void **state)
{
    (void)state;
    /* Whether a given seed reduces in time depends on the build's code: try a few. */
    int rc = sh("for seed in 3 4 5 6 7; do rm -rf c && mkdir c && "
                "./tlv -seed=$seed -runs=60000 c 2>&1 | grep -m1 REDUCE && exit 0; done; exit 1");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.out, "REDUCE cov: "));
    assert_non_null(strstr(proc.out, " L: "));
}

static void same_seed_same_campaign(void **state)
{
    (void)state;
    int rc = sh("for i in 1 2; do rm -rf c$i && mkdir c$i && ./tlv -seed=7 -runs=3000 -max_len=16 "
                "c$i 2>/dev/null; ls c$i > l$i; done; cmp l1 l2 && wc -l < l1");
    assert_int_equal(rc, 0);
    assert_true(atoi(proc.out) > 1);
}

static void timeouts_ooms_and_signals_leave_artifacts(void **state)
{
    (void)state;
    static const struct {
        const char *input, *flags, *kind, *line;
        int exit_code;
    } cases[] = {
        {"H", "-timeout=1", "timeout-", "ERROR: libFuzzer: timeout after", 70},
        {"O", "-rss_limit_mb=300", "oom-", "ERROR: libFuzzer: out-of-memory (used: ", 71},
        {"A", "", "crash-", "SUMMARY: ", -1},
        {"S", "", "crash-", "SUMMARY: ", -1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = sh("rm -rf a && mkdir a && printf %s > in && ./faults %s -artifact_prefix=a/ in",
                    cases[i].input, cases[i].flags);
        if (cases[i].exit_code >= 0)
            assert_int_equal(rc, cases[i].exit_code);
        else
            assert_int_not_equal(rc, 0);
        assert_non_null(strstr(proc.err, cases[i].line));
        assert_non_null(strstr(proc.err, "Test unit written to a/"));
        assert_int_equal(count_prefixed("a", cases[i].kind), 1);
        assert_int_equal(sh("cmp in a/%s*", cases[i].kind), 0);
    }
}

static void silenced_target_still_reports_its_crash(void **state)
{
    (void)state;
    int rc = sh("rm -rf a && mkdir a && printf A > in && "
                "./faults -close_fd_mask=3 -exact_artifact_path=a/the-crash in");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Test unit written to a/the-crash"));
    assert_int_equal(sh("cmp in a/the-crash"), 0);
}

static void sanitizer_only_limits(void **state)
{
    (void)state;
    if (!SIFT_TEST_SAN[0]) skip(); /* malloc hooks and leak checks come with the sanitizers */
    int rc = sh("rm -rf a && mkdir a && printf M > in && ./faults -malloc_limit_mb=100 "
                "-artifact_prefix=a/ in");
    assert_int_equal(rc, 71);
    assert_non_null(strstr(proc.err, "out-of-memory (malloc("));
    assert_int_equal(count_prefixed("a", "oom-"), 1);
    rc = sh("rm -rf a && mkdir a && printf L > in && ./faults -artifact_prefix=a/ in");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "detected memory leaks"));
    assert_int_equal(count_prefixed("a", "leak-"), 1);
}

static void bad_flags_and_paths_get_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"-no_such_flag=1", "sift: unknown flag -no_such_flag=1"},
        {"-runs=abc", "sift: -runs=abc"},
        {"-features=edges,bogus", "sift: -features=edges,bogus"},
        {"/nonexistent/corpus", "sift: /nonexistent/corpus: No such file or directory"},
        {"-dict=bad.dict c", "sift: bad.dict:2: "},
        {"-dict=/nonexistent/d c", "sift: /nonexistent/d"},
        {"-merge=1 c", "sift: -merge=1 needs at least two corpus folders"},
        {"-minimize_crash=1 c", "sift: -minimize_crash=1 takes exactly one crashing input file"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = sh("rm -rf c && mkdir c && printf '\"ok\"\\n\"bad\\\\q\"\\n' > bad.dict && "
                    "./calc -runs=10 %s",
                    cases[i].args);
        assert_int_not_equal(rc, 0);
        const char *line = strstr(proc.err, cases[i].message);
        if (!line) fail_msg("%s: expected '%s' in:\n%s", cases[i].args, cases[i].message, proc.err);
        assert_null(strstr(line + 1, "sift: ")); /* one error line, not a cascade */
    }
    assert_int_equal(sh("./calc -help=1"), 0);
    assert_non_null(strstr(proc.out, "-max_total_time"));
}

static void merge_keeps_what_adds_coverage_and_skips_crashes(void **state)
{
    (void)state;
    int rc =
        sh("rm -rf into from && mkdir into from && printf 1+1 > into/a && "
           "printf 1+1 > from/dup && printf '(2*3)' > from/paren && printf 9-4 > from/minus && "
           "printf 1/7 > from/crash && ./calc -merge=1 into from");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "MERGE-OUTER: "));
    assert_non_null(strstr(proc.err, "crashed or hung the target; skipping it"));
    assert_int_equal(count_prefixed("into", ""), 3); /* a, paren and minus, not dup or crash */
}

static void minimize_crash_shrinks_and_keeps_the_crash(void **state)
{
    (void)state;
    int rc = sh("rm -rf a && mkdir a && printf '1+2+3+4+5+6+7+8/7+9' > big && "
                "./calc -minimize_crash=1 -runs=500 -artifact_prefix=a/ big");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "CRASH_MIN: failed to minimize beyond a/minimized-from-"));
    assert_int_equal(count_prefixed("a", "minimized-from-"), 1);
    rc = sh("wc -c < a/minimized-from-*");
    assert_true(atoi(proc.out) <= 3); /* "8/7" or shorter */
    assert_int_not_equal(sh("./calc a/minimized-from-*"), 0);
    assert_int_equal(sh("printf 1 > ok && ./calc -minimize_crash=1 ok"), 1);
    assert_non_null(strstr(proc.err, "does not crash the target"));
}

static void custom_mutator_and_initialize_are_used(void **state)
{
    (void)state;
    int rc =
        sh("rm -rf a c && mkdir a c && ./custom -seed=5 -max_total_time=60 -artifact_prefix=a/ c");
    assert_int_not_equal(rc, 0);
    assert_int_equal(count_prefixed("a", "crash-"), 1);
    assert_int_equal(sh("head -c 2 a/crash-*"), 0);
    assert_string_equal(proc.out, "#!");
}

static void oss_fuzz_style_build(void **state)
{
    (void)state;
    int rc =
        sh("CC=" SIFT_BUILD_DIR "/bin/sift-cc; CFLAGS='-fsanitize=fuzzer-no-link %s';"
           "printf 'int lib_parse(const unsigned char *d, unsigned long n)"
           "{ return n > 2 && d[0] == 0x42 ? d[1] : 0; }\\n' > lib.c && "
           "printf '#include <stdint.h>\\n#include <stddef.h>\\n"
           "int lib_parse(const unsigned char *, unsigned long);\\n"
           "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
           "{ lib_parse(d, n); return 0; }\\n' > fuzz.c && "
           "$CC $CFLAGS -c lib.c -o lib.o && ar rcs lib.a lib.o && "
           "$CC $CFLAGS -c fuzz.c -o fuzz.o && $CC -fsanitize=fuzzer %s fuzz.o lib.a -o oss && "
           "rm -rf c && mkdir c && ./oss -runs=500 c",
           SIFT_TEST_SAN, SIFT_TEST_SAN);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Done 500 runs"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finds_the_magic_bug_from_nothing),
        cmocka_unit_test(runs_limit_and_stats),
        cmocka_unit_test(smaller_inputs_replace_larger_ones),
        cmocka_unit_test(same_seed_same_campaign),
        cmocka_unit_test(timeouts_ooms_and_signals_leave_artifacts),
        cmocka_unit_test(silenced_target_still_reports_its_crash),
        cmocka_unit_test(sanitizer_only_limits),
        cmocka_unit_test(bad_flags_and_paths_get_one_line),
        cmocka_unit_test(merge_keeps_what_adds_coverage_and_skips_crashes),
        cmocka_unit_test(minimize_crash_shrinks_and_keeps_the_crash),
        cmocka_unit_test(custom_mutator_and_initialize_are_used),
        cmocka_unit_test(oss_fuzz_style_build),
    };
    return cmocka_run_group_tests(tests, build_harnesses, remove_scratch);
}
