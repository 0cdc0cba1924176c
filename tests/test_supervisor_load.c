/* The supervisor under load: a target on which nearly every execution is a find, run as users
 * run it (a default descriptor limit, SIGTERM, kill -9 at any moment). The supervisor must
 * save as fast as the workers find, or slow them down, and never hold more than it can save. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *dir;
static sift_test_proc proc;

static int build(void **state)
{
    *state = dir = sift_test_scratch();
    return sift_test_build(dir, "burst", "tests/fixtures/burst.c", "");
}

/* Waits up to MS for PID to end; whether it did. */
static bool ended_within(pid_t pid, uint64_t ms)
{
    uint64_t t0 = sift_test_now_ms();
    while (sift_test_alive(pid) && sift_test_now_ms() - t0 < ms)
        sift_test_nap_ms(10);
    return !sift_test_alive(pid);
}

/* A number the last command printed alone. */
static long printed(void)
{
    return strtol(proc.out, NULL, 10);
}

/* Lines of FILE (in the scratch folder) that report a saved find. */
static long reported_finds(const char *file)
{
    SIFT_TEST_SH("grep -c '	NEW ' %s", file);
    return printed();
}

/* Under the descriptor limit most machines have (and far below it), a burst of finds is saved
 * as it comes: every find reported is in both folders, and no temporary is left. The supervisor
 * used to keep every find of a burst open until the rings were empty, which they never were:
 * "Too many open files" within the first second. */
static void a_burst_is_saved_under_a_low_descriptor_limit(void **state)
{
    (void)state;
    static const char *const workers[] = {"2", "8"};
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        int rc = SIFT_TEST_SH("rm -rf c o && mkdir c && ulimit -n 256 && ./burst -workers=%s "
                              "-max_total_time=4 -out=o c 2>log",
                              workers[i]);
        if (rc != 0) fail_msg("-workers=%s: exit %d\n%s", workers[i], rc, proc.err);
        assert_int_equal(SIFT_TEST_SH("grep -c 'sift: ' log"), 1);
        assert_string_equal(proc.out, "0\n");
        long finds = reported_finds("log");
        if (finds < 100) fail_msg("-workers=%s: only %ld finds", workers[i], finds);
        /* The start's newline is in the queue only. */
        assert_int_equal(sift_test_count_entries(dir, "c", "[!.]*"), finds);
        assert_int_equal(sift_test_count_entries(dir, "o/queue", "id:*"), finds + 1);
        assert_int_equal(sift_test_count_entries(dir, "c", ".*tmp*"), 0);
        assert_int_equal(sift_test_count_entries(dir, "o/queue", ".*"), 0);
    }
}

/* SIGTERM in the middle of a burst ends the campaign within a second, cleanly: the
 * supervisor used to drain rings that kept filling, without looking at signals, until the
 * descriptors of its unsaved finds ran out. */
static void sigterm_ends_a_burst(void **state)
{
    (void)state;
    static const char *const workers[] = {"2", "8"};
    for (size_t i = 0; i < sizeof workers / sizeof workers[0]; i++) {
        assert_int_equal(SIFT_TEST_SH("rm -rf c o && mkdir c && { ulimit -n 1024 && ./burst "
                                      "-workers=%s -max_total_time=600 -out=o c 2>log & echo $!; }",
                                      workers[i]),
                         0);
        pid_t sup = (pid_t)printed();
        uint64_t t0 = sift_test_now_ms();
        while (sift_test_now_ms() - t0 < 60000 && sift_test_count_entries(dir, "c", "[!.]*") < 200)
            sift_test_nap_ms(20);
        kill(sup, SIGTERM);
        /* Bounded far above the second it takes, so that a loaded machine cannot fail it:
         * before, the campaign went on for as long as the burst did (minutes). */
        if (!ended_within(sup, 30000)) {
            kill(sup, SIGKILL);
            fail_msg("-workers=%s: still running 30 s after SIGTERM", workers[i]);
        }
        assert_int_equal(SIFT_TEST_SH("grep -c '^sift: ' log"), 1);
        assert_string_equal(proc.out, "0\n");
        /* What it reported as saved is there; nothing else is. */
        long finds = reported_finds("log");
        assert_true(finds >= 200);
        assert_int_equal(sift_test_count_entries(dir, "c", "[!.]*"), finds);
        assert_int_equal(sift_test_count_entries(dir, "c", ".*tmp*"), 0);
    }
}

/* kill -9 of the supervisor at arbitrary moments of a burst, each time started again at once,
 * then a resume: no start is refused (the dying workers used to hold the folder's lock for a
 * few milliseconds), every find that was reported saved is on disk whole, and the resume
 * replays exactly what is there. */
static void kills_during_a_burst_lose_nothing_reported(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("rm -rf c o log && mkdir c"), 0);
    for (int cycle = 0; cycle < 8; cycle++) {
        assert_int_equal(SIFT_TEST_SH("{ ulimit -n 256 && ./burst -workers=2 -out=o c 2>>log & "
                                      "echo $!; }"),
                         0);
        pid_t sup = (pid_t)printed();
        long before = sift_test_count_entries(dir, "c", "[!.]*");
        uint64_t t0 = sift_test_now_ms();
        while (sift_test_now_ms() - t0 < 60000 &&
               sift_test_count_entries(dir, "c", "[!.]*") < before + 50)
            sift_test_nap_ms(10);
        sift_test_nap_ms(20 + (cycle * 53) % 300);
        kill(sup, SIGKILL);
        assert_true(ended_within(sup, 30000));
    }
    assert_int_equal(SIFT_TEST_SH("grep -c 'in use by another campaign' log"), 1);
    assert_string_equal(proc.out, "0\n");
    /* Resumed: the temporaries the kills left are removed, every file is replayed, and every
     * find reported is there whole. */
    long reported = reported_finds("log");
    long queued = sift_test_count_entries(dir, "o/queue", "id:*");
    long in_dir = sift_test_count_entries(dir, "c", "[!.]*");
    SIFT_TEST_SH("./burst -workers=2 -out=o -runs=0 c 2>log2; echo rc=$?; grep -E "
                 "'INFO: replayed' log2");
    assert_non_null(strstr(proc.out, "rc=0"));
    char line[128];
    snprintf(line, sizeof line, "INFO: replayed %ld inputs", queued + in_dir);
    if (!strstr(proc.out, line)) fail_msg("expected \"%s\", got %s", line, proc.out);
    assert_int_equal(sift_test_count_entries(dir, "o/queue", ".*"), 0);
    long files = sift_test_intact_files(&proc, dir, "c");
    if (files < reported) fail_msg("%ld finds reported, %ld whole files in c", reported, files);
}

/* The largest "exec/s: N" of the NEW and pulse lines in FILE (INITED's is measured over the
 * first milliseconds of the workers). */
static double top_status_rate(const char *file)
{
    SIFT_TEST_SH("grep -E '	(NEW|pulse) ' %s | grep -o 'exec/s: [0-9]*' | cut -d' ' -f2 | "
                 "sort -n | tail -n 1",
                 file);
    return (double)printed();
}

/* plot_data's first line measures exec/s over the time that really went by: the supervisor
 * took its clock before a round's saving, which takes long in a burst, and divided what the
 * workers had done by then by the time before it (40x too much, seen in 30 of 33 files). The
 * status lines, each on a fresh clock, bound it. */
static void the_first_plot_line_rates_real_time(void **state)
{
    (void)state;
    assert_int_equal(
        SIFT_TEST_SH(
            "rm -rf c o && mkdir c && ./burst -workers=2 -max_total_time=3 -out=o c 2>log"),
        0);
    double status = top_status_rate("log");
    assert_true(status > 0);
    assert_int_equal(SIFT_TEST_SH("sed -n 2p o/plot_data | cut -d, -f11"), 0);
    double plotted = strtod(proc.out, NULL);
    if (plotted > 1.5 * status)
        fail_msg("plot_data's first line says %.0f exec/s, the status lines at most %.0f", plotted,
                 status);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_burst_is_saved_under_a_low_descriptor_limit),
        cmocka_unit_test(sigterm_ends_a_burst),
        cmocka_unit_test(kills_during_a_burst_lose_nothing_reported),
        cmocka_unit_test(the_first_plot_line_rates_real_time),
    };
    return cmocka_run_group_tests(tests, build, sift_test_scratch_teardown);
}
