/* The seed corpus as a campaign reads it (core/seeds.c), and the inputs named on the command
 * line: real harnesses built with sift-cc, driven as a user would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dir; /* scratch folder shared by the tests; harnesses are built once */
static sift_test_proc proc;

static int build_harnesses(void **state)
{
    *state = dir = sift_test_scratch();
    if (sift_test_build(dir, "calc", "examples/calc.c", "") ||
        sift_test_build(dir, "tlv", "examples/tlv.c", ""))
        return -1;
    return 0;
}

/* libFuzzer runs every file named on its command line, however many a shell glob gives. */
static void any_number_of_input_files_run(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH(
        "rm -rf many && mkdir many && for i in $(seq 300); do echo $i >many/$i; done && "
        "./tlv many/* -runs=2 2>&1 | grep -c '^Executed many/'");
    assert_int_equal(rc, 0);
    assert_string_equal(proc.out, "300\n");
}

/* A 100 MB input (sparse, so that the test is quick). In a corpus it costs what -max_len
 * allows, as libFuzzer reads it: 1 MiB without -max_len, -max_len bytes with it; the file
 * stays as it is. Run on its own (./harness FILE) it runs whole. */
static void huge_inputs_cost_at_most_max_len(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf h && mkdir h && printf 1+2 > h/small"), 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/h/big", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 100 << 20), 0);
    assert_int_equal(pwrite(fd, "(1)", 3, 0), 3);
    close(fd);

    int rc = SIFT_TEST_SH(
        "rm -rf hc && mkdir hc && ./tlv -seed=1 -runs=20000 -print_final_stats=1 hc h");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "not generate inputs larger than 1048576 bytes"));
    assert_non_null(strstr(proc.err, "INFO: seed corpus: files: 2 min: 3b max: 1048576b total: "
                                     "1048579b rss: "));
    assert_non_null(strstr(proc.err, "Mb (1 longer than 1048576 bytes, cut to that)"));
    assert_non_null(strstr(proc.err, "Done 20000 runs"));
    const char *rss = strstr(proc.err, "stat::peak_rss_mb:");
    assert_non_null(rss);
    /* Never the whole file (ASan's own memory is counted in hundreds of MB). */
    if (!SIFT_TEST_SAN[0]) assert_true(strtol(rss + strlen("stat::peak_rss_mb:"), NULL, 10) < 100);

    rc = SIFT_TEST_SH("rm -rf hc && mkdir hc && ./tlv -seed=1 -runs=20000 -max_len=64 hc h");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "max: 64b total: 67b rss: "));
    assert_non_null(strstr(proc.err, "Mb (1 longer than 64 bytes, cut to that)"));
    assert_int_equal(SIFT_TEST_SH("stat -c %%s h/big"), 0);
    assert_string_equal(proc.out, "104857600\n"); /* seeds are read, never rewritten */

    rc = SIFT_TEST_SH("./calc h/big");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Executed h/big in "));
    rc = SIFT_TEST_SH("./calc -max_len=2 h/big"); /* "(1": an unclosed parenthesis, read as such */
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "Executed h/big in "));
}

/* Entries of a corpus folder that are no readable files are skipped, counted in one line;
 * none stops the campaign, and a FIFO is never opened, so that nothing blocks. */
static void odd_corpus_entries_are_skipped(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH("rm -rf o && mkdir o o/sub o/closed && chmod 777 o && cd o && "
                     "printf 1+1 > a && : > empty && mkfifo fifo && ln -s nowhere dangling && "
                     "ln -s l2 l1 && ln -s l1 l2 && ln -s .. sub/up && ln -s ../sub sub/self && "
                     "printf 2+2 > closed/f && chmod 000 closed && "
                     "printf 3+3 > unreadable && chmod 000 unreadable"),
        0);
    /* As a user whom the closed folder and file stop; under a time limit, in case the FIFO
     * blocked. */
    int rc = sift_test_sh_limited(&proc, dir, 0, true, "cd o && timeout 60 ../tlv -runs=2000 .");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "sift: corpus: skipped 7 entries that are not readable files "
                                     "(first: ./"));
    assert_non_null(strstr(proc.err, "sift: skipping seed ./unreadable: Permission denied"));
    assert_non_null(strstr(proc.err, "INFO: seed corpus: files: 2 min: 0b max: 3b"));
    assert_non_null(strstr(proc.err, "Done 2000 runs"));
    assert_int_equal(SIFT_TEST_SH("chmod 755 o/closed"), 0);

    /* A corpus of empty files only. */
    rc = SIFT_TEST_SH("rm -rf e && mkdir e && : > e/1 && : > e/2 && ./tlv -runs=2000 e");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(proc.err, "INFO: seed corpus: files: 2 min: 0b max: 0b"));
}

/* -seed_inputs names seed files besides the corpus folders', as a list or in a file that holds
 * the list ("@FILE"); both count among the seeds read, with or without a folder. A list file
 * that cannot be read, or a list of no names, stops the run with one line holding libFuzzer's
 * words for it (its lit test seed_inputs.test looks for them). */
static void seed_inputs_are_read_with_the_folders(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf s f && mkdir s f && printf '1+2' > s/a && "
                                  "printf '(3*4)' > s/b && printf 's/a,s/b\n' > list && "
                                  "printf 9-1 > f/c"),
                     0);
    static const char *const runs[] = {"-seed_inputs=s/a,s/b", "-seed_inputs=@list"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(SIFT_TEST_SH("./calc -runs=0 %s", runs[i]), 0);
        assert_non_null(strstr(proc.err, "INFO: seed corpus: files: 2 min: 3b max: 5b"));
        assert_int_equal(SIFT_TEST_SH("./calc -runs=0 %s f", runs[i]), 0);
        assert_non_null(strstr(proc.err, "INFO: seed corpus: files: 3 min: 3b max: 5b"));
    }
    assert_int_equal(SIFT_TEST_SH("./calc -runs=0 -seed_inputs=@nolist"), 1);
    sift_test_one_line(&proc, "missing list",
                       "sift: -seed_inputs=@nolist: seed_inputs is empty or @file does not exist. "
                       "(nolist: No such file or directory)");
    static const char *const empty[] = {",", ""};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(SIFT_TEST_SH("./calc -runs=0 -seed_inputs=%s", empty[i]), 1);
        char line[128];
        snprintf(line, sizeof line,
                 "sift: -seed_inputs=%s: seed_inputs is empty or @file does not exist.", empty[i]);
        sift_test_one_line(&proc, "empty list", line);
    }
}

/* -keep_seed=1 keeps a seed that adds no coverage: "2+2" takes the edges "1+1" does (its
 * values differ, hence -features=edges), so only one of them is an entry without it, and both
 * are with it. */
static void keep_seed_keeps_what_adds_nothing(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf k && mkdir k && printf 1+1 > k/a && printf 2+2 > k/b"),
                     0);
    assert_int_equal(SIFT_TEST_SH("./calc -runs=0 -features=edges k"), 0);
    assert_non_null(strstr(proc.err, " corp: 1/3b "));
    assert_int_equal(SIFT_TEST_SH("./calc -runs=0 -features=edges -keep_seed=1 k"), 0);
    assert_non_null(strstr(proc.err, " corp: 2/6b "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(any_number_of_input_files_run),
        cmocka_unit_test(huge_inputs_cost_at_most_max_len),
        cmocka_unit_test(odd_corpus_entries_are_skipped),
        cmocka_unit_test(seed_inputs_are_read_with_the_folders),
        cmocka_unit_test(keep_seed_keeps_what_adds_nothing),
    };
    return cmocka_run_group_tests(tests, build_harnesses, sift_test_scratch_teardown);
}
