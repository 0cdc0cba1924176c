/* libFuzzer's flags that OSS-Fuzz and ClusterFuzz pass, driven on real harnesses: each does what
 * libFuzzer's documentation says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir; /* scratch folder shared by the tests; harnesses are built once */
static sift_test_proc proc;

static int build_harnesses(void **state)
{
    *state = dir = sift_test_scratch();
    /* The overwritten input shows only where inputs run from an exact-size copy: under ASan. */
    return sift_test_build(dir, "faults", "tests/fixtures/faults.c", "") ||
                   sift_test_build(dir, "faults_asan", "tests/fixtures/faults.c",
                                   "-fsanitize=address") ||
                   sift_test_build(dir, "calc", "examples/calc.c", "") ||
                   sift_test_build(dir, "peer", "tests/fixtures/peer.c", "") ||
                   sift_test_build(dir, "argv0", "tests/fixtures/argv0.c", "")
               ? -1
               : 0;
}

/* Runs Cmd in the scratch folder and expects exit status Want and Text in what it printed on
 * stderr; a failure names the command. */
static void expect_err(const char *cmd, int want, const char *text)
{
    int rc = SIFT_TEST_SH("%s", cmd);
    if (rc != want) fail_msg("%s: exit status %d, want %d: %s", cmd, rc, want, proc.err);
    if (!strstr(proc.err, text)) fail_msg("%s: no \"%s\" in: %s", cmd, text, proc.err);
}

/* OSS-Fuzz scrubs a testcase with -cleanse_crash=1: every byte the crash does not need becomes
 * ' ' or 0xff, and the crash stays the same. Where no byte can go, no output is written, as
 * libFuzzer writes none. */
static void cleanse_crash_scrubs_what_the_crash_does_not_need(void **state)
{
    (void)state;
    expect_err("printf 'Asecret' > crash && ./faults -cleanse_crash=1 -exact_artifact_path=clean "
               "crash",
               0, "CLEANSE_CRASH: cleansed input written to clean");
    /* 'A' is the crash; the rest is spaces. */
    assert_int_equal(SIFT_TEST_SH("wc -c < clean && tr -d ' ' < clean"), 0);
    assert_string_equal(proc.out, "7\nA");
    assert_int_not_equal(SIFT_TEST_SH("./faults clean"), 0);
    assert_non_null(strstr(proc.err, "SUMMARY: "));
    expect_err("printf x > ok && ./faults -cleanse_crash=1 ok", 1,
               "does not crash the target; nothing to cleanse");
    expect_err("rm -f clean && printf A > bare && ./faults -cleanse_crash=1 "
               "-exact_artifact_path=clean bare",
               0, "CLEANSE_CRASH: no byte could be replaced; nothing written");
    assert_int_not_equal(SIFT_TEST_SH("test -e clean"), 0);
}

static void create_missing_dirs_makes_the_folders(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf new art && ./calc -runs=10 -artifact_prefix=art/x/ new/corpus"), 1);
    assert_int_equal(SIFT_TEST_SH("./calc -runs=10 -create_missing_dirs=1 -artifact_prefix=art/x/ "
                                  "new/corpus && test -d new/corpus && test -d art/x"),
                     0);
    assert_int_equal(SIFT_TEST_SH("mkdir -p c && printf A > c/in && ./faults -runs=0 "
                                  "-create_missing_dirs=1 -exact_artifact_path=deep/er/crash c; "
                                  "test -s deep/er/crash"),
                     0);
}

/* The same seeded run reduces with the default, not with -reduce_inputs=0, and again with
 * -shrink=1. */
static void reduce_inputs_and_shrink(void **state)
{
    (void)state;
    const char *run =
        "rm -rf c && mkdir c && ./calc -seed=1 -runs=30000 %s c 2>&1 | grep -c REDUCE";
    char flags[3][64] = {"", "-reduce_inputs=0", "-reduce_inputs=0 -shrink=1"};
    long counts[3];
    for (int i = 0; i < 3; i++) {
        SIFT_TEST_SH(run, flags[i]);
        counts[i] = strtol(proc.out, NULL, 10);
    }
    assert_true(counts[0] > 0);
    assert_int_equal(counts[1], 0);
    assert_int_equal(counts[2], counts[0]);
}

/* -reload=1 (libFuzzer's default) takes in, about once a second, the inputs another process
 * saved into the corpus folder; here the harness plays that process. -reload=0 does not. */
static void reload_takes_in_what_others_saved(void **state)
{
    (void)state;
    expect_err("rm -rf c && mkdir c && ./peer -seed=1 -max_total_time=4 c", 0, "\tRELOAD cov: ");
    assert_int_equal(
        SIFT_TEST_SH("rm -rf c && mkdir c && ./peer -seed=1 -max_total_time=3 -reload=0 c"), 0);
    assert_null(strstr(proc.err, "RELOAD"));
}

/* The mutations of the inputs calc keeps, by the traces of their NEW lines (the words after DE:
 * left out): -cross_over=0 leaves crossover out, and -mutate_depth=1 stacks one operator on a
 * mutant (input-to-state's "All" stage works on a mutant that ran, and adds its own name to
 * that mutant's). */
static void cross_over_and_mutate_depth(void **state)
{
    (void)state;
    static const char count[] =
        "rm -rf c && mkdir c && ./calc -seed=1 -runs=30000 %s c 2>&1 | grep -a 'NEW .*MS:' | "
        "sed 's/ DE: .*//' > ms; "
        "echo $(wc -l < ms) $(grep -c CrossOver ms) $(grep -v 'All-$' ms | grep -vc 'MS: 1 ')";
    static const char *const flags[] = {"", "-cross_over=0", "-mutate_depth=1"};
    long lines[3], crossed[3], stacked[3];
    for (size_t i = 0; i < 3; i++) {
        SIFT_TEST_SH(count, flags[i]);
        char *end = proc.out;
        lines[i] = strtol(end, &end, 10);
        crossed[i] = strtol(end, &end, 10);
        stacked[i] = strtol(end, &end, 10);
        assert_string_equal(end, "\n");
        assert_true(lines[i] > 10);
    }
    assert_true(crossed[0] > 0 && stacked[0] > 0);
    assert_int_equal(crossed[1], 0);
    assert_int_equal(stacked[2], 0);
}

/* A target that takes the sanitizer's crash state reports for itself: its exit is not one that
 * libFuzzer reports, nor does sift. */
static void acquired_crash_state_silences_the_exit(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf c && mkdir c && printf Q > c/q && ./faults_asan -runs=0 c"), 0);
    assert_null(strstr(proc.err, "fuzz target exited"));
    /* Without ASan too: the sanitizer runtime that clang links for coverage has the state. */
    assert_int_equal(SIFT_TEST_SH("./faults -runs=0 c"), 0);
    assert_null(strstr(proc.err, "fuzz target exited"));
}

/* -close_fd_mask=2 silences the target's stderr, not the sanitizer's report, which goes to a
 * copy of it, as libFuzzer sends it, nor sift's own lines; 1 silences its stdout. */
static void silenced_stderr_keeps_the_sanitizer_report(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf B > c/b && "
                          "./faults_asan -runs=0 -close_fd_mask=2 -artifact_prefix=a/ c");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "ERROR: AddressSanitizer: heap-buffer-overflow"));
    assert_non_null(strstr(proc.err, "Test unit written to a/crash-"));
    assert_int_equal(SIFT_TEST_SH("printf P > c/b && ./faults -runs=0 -close_fd_mask=2 c"), 0);
    assert_null(strstr(proc.err, "FAULTS_STDERR"));
    assert_non_null(strstr(proc.err, "INITED"));
    assert_non_null(strstr(proc.out, "FAULTS_STDOUT"));
    assert_int_equal(SIFT_TEST_SH("./faults -runs=0 -close_fd_mask=1 c"), 0);
    assert_non_null(strstr(proc.err, "FAULTS_STDERR"));
    assert_null(strstr(proc.out, "FAULTS_STDOUT"));
}

/* SIGUSR1 and SIGUSR2 stop a run (a -fork campaign too) after the input that was running, with
 * libFuzzer's lines and exit code 0; a merge's child writes that input's progress into the control
 * file first, and what it saved so far stays (there, "U" only: "zz" never ran). The harness signals
 * its own process group when it runs "U" (setsid gives it one of its own). */
static void sigusr_exits_gracefully(void **state)
{
    (void)state;
    expect_err("rm -rf usr && mkdir usr && printf U > usr/u && setsid ./faults -runs=1000000 usr",
               0, "INFO: signal received, trying to exit gracefully\n");
    assert_non_null(strstr(proc.err, "INFO: libFuzzer: exiting as requested\n"));
    assert_null(strstr(proc.err, "Done 1000000 runs"));
    expect_err("setsid ./faults -fork=1 -runs=1000000 usr", 0,
               "INFO: libFuzzer: exiting as requested\n");
    expect_err("rm -rf m1 m2 && mkdir m1 m2 && printf U > m2/u && printf zz > m2/z && "
               "setsid ./faults -merge=1 -merge_control_file=mcf m1 m2",
               0, "INFO: libFuzzer: exiting as requested\n");
    assert_null(strstr(proc.err, "new files with"));
    assert_int_equal(SIFT_TEST_SH("tail -n 3 mcf && ls m1 | wc -l"), 0);
    assert_string_equal(proc.out, "STARTED 0 1\nFT 0\nCOV 0\n1\n");
}

/* A target built with -fsanitize=memory sees no report for what the engine does: the input and
 * the custom mutator's buffer are initialised for MSan, and the engine's own calls that MSan
 * intercepts (the memcmp that checks for an overwritten input) are not checked, as libFuzzer's
 * are not. The suite's ASan build cannot be combined with MSan. */
static void memory_sanitizer_sees_only_the_target(void **state)
{
    (void)state;
    if (SIFT_TEST_SAN[0]) skip();
    assert_int_equal(sift_test_build(dir, "msan", "tests/fixtures/msan.c", "-fsanitize=memory"), 0);
    expect_err("./msan -seed=1 -runs=20000", 0, "Done 20000 runs");
    assert_null(strstr(proc.err, "MemorySanitizer"));
}

/* -features_dir gets a file per input the corpus takes, named as the input; the
 * -mutation_graph_file a vertex per input and, for a mutant, an edge from its parent labelled
 * with its mutations, in DOT's syntax (LLVM's features_dir and mutation-graph tests). */
static void finds_are_recorded_for_tools(void **state)
{
    (void)state;
    SIFT_TEST_SH("rm -rf c fd g && mkdir c fd && ./calc -seed=1 -runs=5000 -features_dir=fd "
                 "-mutation_graph_file=g c");
    assert_int_equal(SIFT_TEST_SH("n=0; for f in c/*; do b=${f#c/}; test -s fd/$b || exit 1; "
                                  "grep -q \"^\\\"$b\\\"$\" g || exit 1; n=$((n+1)); done; "
                                  "echo $n $(ls fd | wc -l)"),
                     0);
    long inputs = strtol(proc.out, NULL, 10);
    assert_true(inputs > 3);
    assert_int_equal(SIFT_TEST_SH("grep -Ec '^\"[0-9a-f]{40}\" -> \"[0-9a-f]{40}\" "
                                  "\\[label=\"([A-Za-z]+-)+\"\\];$' g"),
                     0);
    assert_true(strtol(proc.out, NULL, 10) > 0);
}

/* A -fork campaign that spends its budget says so and ends with its exit code and time, as
 * libFuzzer's fork mode does (its lit test fork.test looks for both). */
static void fork_says_why_it_ends(void **state)
{
    (void)state;
    expect_err("./argv0 -fork=1 -max_total_time=1", 0, " seconds, wrapping up soon\n");
    assert_non_null(strstr(proc.err, "INFO: fuzzed for "));
    assert_non_null(strstr(proc.err, "INFO: exiting: 0 time: "));
    expect_err("./argv0 -fork=1 -runs=2000", 0, " iterations, wrapping up soon\n");
}

/* A harness whose LLVMFuzzerInitialize writes over argv[0] is stopped, as libFuzzer stops it. */
static void modified_argv0_stops_the_run(void **state)
{
    (void)state;
    expect_err("BOGUS_ARGV0=1 ./argv0 -runs=10", 1,
               "ERROR: argv[0] has been modified in LLVMFuzzerInitialize\n");
    assert_null(strstr(proc.err, "INITED"));
    assert_int_equal(SIFT_TEST_SH("./argv0 -runs=10"), 0);
}

/* libFuzzer's seed is an unsigned int: -seed=-1 is 4294967295, the same campaign. */
static void negative_seed_converts_as_libfuzzer_reads_it(void **state)
{
    (void)state;
    /* calc's planted crash may end either run; both end alike. */
    assert_int_equal(SIFT_TEST_SH("rm -f err; for s in -1 4294967295; do rm -rf c && mkdir c && "
                                  "./calc -seed=$s -runs=2000 c 2>>err; ls c > l$s; done; "
                                  "cmp l-1 l4294967295 && test -s l-1 && cat err"),
                     0);
    assert_non_null(strstr(proc.out, "INFO: Seed: 4294967295\n"));
}

/* ClusterFuzz's two-step merge passes -merge_control_file; a merge started again over the same
 * files skips the inputs that stopped the last one, and one that ran them all has nothing left
 * to do. What it finds there is said in libFuzzer's MERGE-OUTER lines. */
static void merge_control_file_records_and_resumes(void **state)
{
    (void)state;
    expect_err("rm -rf into from mcf && mkdir into from && printf x > into/x && printf H > "
               "from/hang && printf A > from/abort && "
               "./faults -timeout=1 -merge=1 -merge_control_file=mcf into from",
               0, "MERGE-OUTER: from/hang crashed or hung the target");
    assert_non_null(strstr(proc.err, "MERGE-INNER: using the control file 'mcf'\n"));
    assert_int_equal(SIFT_TEST_SH("head -n 5 mcf; grep -c '^STARTED' mcf; grep -c '^FT' mcf"), 0);
    assert_string_equal(proc.out, "3\n1\ninto/x\nfrom/abort\nfrom/hang\n3\n1\n");
    expect_err("./faults -timeout=1 -merge=1 -merge_control_file=mcf into from", 0,
               "MERGE-OUTER: non-empty control file provided: 'mcf'\n"
               "MERGE-OUTER: control file ok, 3 files total, first not processed file 3\n"
               "MERGE-OUTER: 'from/abort' will be skipped as unlucky (merge has stumbled on it "
               "the last time)\n"
               "MERGE-OUTER: 'from/hang' will be skipped as unlucky");
    assert_null(strstr(proc.err, "crashed or hung"));
    expect_err("rm -f from/hang from/abort && printf b > from/b && printf junk > mcf && "
               "./faults -merge=1 -merge_control_file=mcf into from",
               0, "MERGE-OUTER: bad control file, will overwrite it\n");
    assert_non_null(strstr(proc.err, "MERGE-OUTER: successful in 1 attempt(s)\n"));
    expect_err("./faults -merge=1 -merge_control_file=mcf into from", 0,
               "MERGE-OUTER: nothing to do, merge has been completed before\n");
    assert_null(strstr(proc.err, "MERGE-OUTER: 2 files"));
}

/* The control file's temporary is made new: a link planted at CTL.tmp is not followed (it used
 * to be, and the file it named was overwritten with the control file). */
static void merge_control_file_follows_no_planted_link(void **state)
{
    (void)state;
    expect_err("rm -rf into from mcf* victim && mkdir into from && printf x > into/x && "
               "printf y > from/y && printf keep > victim && ln -s victim mcf.tmp && "
               "./faults -merge=1 -merge_control_file=mcf into from",
               0, "MERGE-OUTER: ");
    assert_int_equal(SIFT_TEST_SH("cat victim; echo; head -n 2 mcf; test -L mcf.tmp"), 0);
    assert_string_equal(proc.out, "keep\n2\n1\n");
}

/* SIGTERM ends a merge at once with exit code 72, as libFuzzer's does, in one process
 * and with workers; it used to be acknowledged and then the merge ran to its end (here, to the
 * end of a hang). Nothing is merged. */
static void sigterm_ends_a_merge(void **state)
{
    (void)state;
    static const char *const modes[] = {"", "-workers=2"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        int rc = SIFT_TEST_SH(
            "rm -rf into from && mkdir into from && printf x > into/x && printf H > from/hang && "
            "printf y > from/y && { ./faults -timeout=30 %s -merge=1 into from 2>log & p=$!; }; "
            "for i in $(seq 600); do grep -qE 'MERGE-OUTER: |replay' log && break; sleep 0.05; "
            "done; sleep 0.2; kill -TERM $p; wait $p; echo rc=$?; ls into; "
            "grep -c 'libFuzzer: run interrupted; exiting' log",
            modes[i]);
        assert_int_equal(rc, 0);
        if (strcmp(proc.out, "rc=72\nx\n1\n") != 0) fail_msg("%s: %s", modes[i], proc.out);
    }
}

/* libFuzzer reports a harness that writes into its input, and ClusterFuzz takes the words of
 * that report in a binary as the sign that it supports the two-step merge. */
static void overwritten_input_is_reported(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("grep -c 'fuzz target overwrites its const input' faults"), 0);
    for (int from_file = 0; from_file < 2; from_file++) {
        int rc = SIFT_TEST_SH("rm -rf a c && mkdir a c && printf W > c/w && "
                              "./faults_asan -runs=0 -artifact_prefix=a/ %s",
                              from_file ? "c/w" : "c");
        assert_int_equal(rc, 77);
        assert_non_null(
            strstr(proc.err, "ERROR: libFuzzer: fuzz target overwrites its const input"));
        assert_non_null(strstr(proc.err, "SUMMARY: libFuzzer: overwrites-const-input"));
        assert_int_equal(SIFT_TEST_SH("cat a/crash-* 2>/dev/null"), from_file ? 1 : 0);
        /* The input as it was given; a file run, as libFuzzer's, writes none. */
        assert_string_equal(proc.out, from_file ? "" : "W");
    }
}

/* libFuzzer warns about a flag it lacks and runs; a bad value of a flag it has is an error. */
static void unknown_flags_warn_and_run(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c && mkdir c && ./calc -runs=10 -no_such_flag=1 -entropic=1 "
                          "-entropic_number_of_rarest_features=50 -use_memmem=0 "
                          "-use_value_profile=2 c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "WARNING: unrecognized flag '-no_such_flag=1'; use -help=1 "
                                     "to list all flags\n"));
    /* Flags of libFuzzer's that sift takes (docs/flags.md says what each does here). */
    assert_null(strstr(proc.err, "WARNING: unrecognized flag '-entropic"));
    assert_null(strstr(proc.err, "WARNING: unrecognized flag '-use_"));
    assert_non_null(strstr(proc.err, "Done 10 runs"));
}

/* OSS-Fuzz's run_fuzzer, reproduce and bad_build_check put "--" before the fuzzer's flags. */
static void double_dash_is_ignored_as_libfuzzer_does(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c && mkdir c && ./calc -- -runs=10 --runs=abc c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "INFO: libFuzzer ignores flags that start with '--'\n"));
    assert_non_null(strstr(proc.err, "WARNING: did you mean '-runs=abc' (single dash)?\n"));
    assert_non_null(strstr(proc.err, "Done 10 runs"));
}

/* -exit_on_item=SHA1 ends the run, with exit code 0 and libFuzzer's line, once an input with
 * that SHA-1 is taken into the corpus (here the seed "1+1"); another checksum changes nothing. */
static void exit_on_item_stops_at_the_input(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c && mkdir c && printf 1+1 > c/s && ./calc -runs=1000000 "
                          "-exit_on_item=3f5651c4c9a7b65dc4d6bb11e2d6fee7348979d7 c");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "INFO: found item with checksum "
                                     "'3f5651c4c9a7b65dc4d6bb11e2d6fee7348979d7', exiting.\n"));
    assert_null(strstr(proc.err, "Done "));
    /* calc's division by zero is a few mutations from "1+1": about one random seed in 60
     * reaches it within 100 runs. Seed 1 does not, and a seeded campaign is the same each run. */
    rc = SIFT_TEST_SH("rm -rf c && mkdir c && printf 1+1 > c/s && ./calc -seed=1 -runs=100 "
                      "-exit_on_item=0000000000000000000000000000000000000000 c");
    assert_int_equal(rc, 0);
    assert_null(strstr(proc.err, "found item"));
    assert_non_null(strstr(proc.err, "Done 100 runs"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_flags_warn_and_run),
        cmocka_unit_test(double_dash_is_ignored_as_libfuzzer_does),
        cmocka_unit_test(exit_on_item_stops_at_the_input),
        cmocka_unit_test(cleanse_crash_scrubs_what_the_crash_does_not_need),
        cmocka_unit_test(create_missing_dirs_makes_the_folders),
        cmocka_unit_test(reduce_inputs_and_shrink),
        cmocka_unit_test(reload_takes_in_what_others_saved),
        cmocka_unit_test(merge_control_file_records_and_resumes),
        cmocka_unit_test(merge_control_file_follows_no_planted_link),
        cmocka_unit_test(sigterm_ends_a_merge),
        cmocka_unit_test(overwritten_input_is_reported),
        cmocka_unit_test(cross_over_and_mutate_depth),
        cmocka_unit_test(negative_seed_converts_as_libfuzzer_reads_it),
        cmocka_unit_test(modified_argv0_stops_the_run),
        cmocka_unit_test(sigusr_exits_gracefully),
        cmocka_unit_test(fork_says_why_it_ends),
        cmocka_unit_test(finds_are_recorded_for_tools),
        cmocka_unit_test(memory_sanitizer_sees_only_the_target),
        cmocka_unit_test(acquired_crash_state_silences_the_exit),
        cmocka_unit_test(silenced_stderr_keeps_the_sanitizer_report),
    };
    return cmocka_run_group_tests(tests, build_harnesses, sift_test_scratch_teardown);
}
