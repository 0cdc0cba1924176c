/* Tests of the progress record's printers: libFuzzer's status lines, the -stats_file JSON and
 * the final "stat::" lines, for one process and for a -workers campaign. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/clock.h"
#include "engine/progress/progress.h"
#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What PRINT writes to stderr for P and WHAT (static). */
static const char *captured(void (*print)(const sift_progress *, const char *),
                            const sift_progress *p, const char *what)
{
    sift_test_capture c;
    sift_test_capture_begin(&c);
    print(p, what);
    return sift_test_capture_end(&c);
}

static void line_of(const sift_progress *p, const char *what)
{
    sift_progress_line(p, what, " L: 3/3 MS: 1 ChangeByte-");
}

static void final_of(const sift_progress *p, const char *what)
{
    (void)what;
    sift_progress_print_final(p);
}

static sift_progress one_process(void)
{
    return (sift_progress){
        .execs = 4096,
        .exec_per_sec = 2048,
        .cov = 17,
        .ft = 40,
        .corpus = 5,
        .corpus_bytes = 20000,
        .len_limit = 64,
        .new_units = 4,
        .slowest_ns = 3 * SIFT_SECOND_NS + 1,
        .slow_finds = 2,
        .rss_mb = 31,
        .seed = 7,
    };
}

static void rates_count_whole_milliseconds(void **state)
{
    (void)state;
    assert_int_equal(sift_progress_rate(1000, SIFT_MS_NS - 1), 0);
    assert_int_equal(sift_progress_rate(1000, SIFT_SECOND_NS), 1000);
    assert_int_equal(sift_progress_rate(3, 2 * SIFT_SECOND_NS), 1);
}

static void a_process_line_reads_as_libfuzzers(void **state)
{
    (void)state;
    sift_progress p = one_process();
    const char *text = captured(line_of, &p, "NEW");
    assert_string_equal(text, "#4096\tNEW    cov: 17 ft: 40 corp: 5/19Kb lim: 64 exec/s: 2048 "
                              "rss: 31Mb L: 3/3 MS: 1 ChangeByte-\n");
}

/* -focus_function's count follows the corpus, where libFuzzer prints it. */
static void a_focus_count_follows_the_corpus(void **state)
{
    (void)state;
    sift_progress p = one_process();
    p.focus = 2;
    const char *text = captured(line_of, &p, "NEW");
    assert_string_equal(text, "#4096\tNEW    cov: 17 ft: 40 corp: 5/19Kb focus: 2 lim: 64 exec/s: "
                              "2048 rss: 31Mb L: 3/3 MS: 1 ChangeByte-\n");
}

static void a_campaign_line_names_its_workers(void **state)
{
    (void)state;
    sift_progress p = one_process();
    p.len_limit = 0;
    p.corpus_bytes = 100;
    p.nworkers = 3;
    const char *text = captured(line_of, &p, "pulse");
    assert_string_equal(text, "#4096\tpulse  cov: 17 ft: 40 corp: 5/100b exec/s: 2048 rss: 31Mb "
                              "workers: 3 L: 3/3 MS: 1 ChangeByte-\n");
}

/* Only libFuzzer's keys: ClusterFuzz puts every stat:: line it reads in libFuzzer's columns. */
static void final_stats_are_libfuzzers_stat_lines(void **state)
{
    (void)state;
    sift_progress p = one_process();
    const char *text = captured(final_of, &p, NULL);
    assert_string_equal(text, "stat::number_of_executed_units: 4096\n"
                              "stat::average_exec_per_sec:     2048\n"
                              "stat::new_units_added:          4\n"
                              "stat::slowest_unit_time_sec:    3\n"
                              "stat::peak_rss_mb:              31\n");
}

static void json_holds_every_figure_and_the_workers(void **state)
{
    char *dir = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/stats.json", dir);
    sift_progress_worker w[2] = {
        {.pid = 11,
         .execs = 100,
         .exec_per_sec_avg = 50,
         .corpus = 3,
         .found_any = true,
         .since_new_ns = SIFT_SECOND_NS,
         .starts = 1},
        {.pid = 0, .execs = 7, .starts = 2},
    };
    sift_progress p = one_process();
    p.run_ns = 2 * SIFT_SECOND_NS;
    p.crashes = 1;
    p.persist_lag_ns = 5 * SIFT_MS_NS;
    assert_int_equal(sift_progress_write_json(&p, path), 0);
    const char *json = sift_test_read(dir, "stats.json");
    assert_non_null(strstr(json, "{\"execs\": 4096, \"exec_per_sec\": 2048, \"elapsed_sec\": "
                                 "2.000, \"cov\": 17, \"ft\": 40, \"corpus\": 5, "));
    assert_non_null(strstr(json, "\"last_new_sec\": 2.000, \"crashes\": 1, "));
    assert_non_null(strstr(json, "\"persist_lag_ms\": 5.000, \"slowest_unit_ms\": 3000.000, "
                                 "\"slow_finds_not_kept\": 2, \"rss_mb\": 31, \"seed\": 7}\n"));
    assert_null(strstr(json, "workers"));

    p.nworkers = 2;
    p.workers = w;
    assert_int_equal(sift_progress_write_json(&p, path), 0);
    json = sift_test_read(dir, "stats.json");
    assert_non_null(strstr(json,
                           "\"workers\": [{\"pid\": 11, \"execs\": 100, \"exec_per_sec\": 50, "
                           "\"corpus\": 3, "));
    assert_non_null(strstr(json, "\"last_new_sec\": 1.000, \"starts\": 1}, {\"pid\": 0, "));
    assert_non_null(strstr(json, "\"last_new_sec\": -1.000, \"starts\": 2}]}\n"));
}

static void an_unwritable_stats_file_is_reported(void **state)
{
    (void)state;
    sift_progress p = one_process();
    assert_int_equal(sift_progress_write_json(&p, "/nonexistent-sift-folder/stats.json"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rates_count_whole_milliseconds),
        cmocka_unit_test(a_process_line_reads_as_libfuzzers),
        cmocka_unit_test(a_campaign_line_names_its_workers),
        cmocka_unit_test(a_focus_count_follows_the_corpus),
        cmocka_unit_test(final_stats_are_libfuzzers_stat_lines),
        SIFT_TEST_IN_SCRATCH(json_holds_every_figure_and_the_workers),
        cmocka_unit_test(an_unwritable_stats_file_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
