/* Tests of the -out folder: ids that never repeat across starts, whatever names the queue holds,
 * and a plot_data that a kill left torn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/outdir.h"
#include "support/subprocess.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sift_test_proc proc;

static int setup(void **state)
{
    char *dir = sift_test_tmpdir();
    assert_non_null(dir);
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    sift_test_rmtree(*state);
    return 0;
}

/* Queues N entries through a freshly opened O on DIR. */
static void queue_some(const char *dir, int n)
{
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, dir), 0);
    for (int i = 0; i < n; i++)
        assert_true(sift_outdir_queue(&o, (const uint8_t *)"x", 1, "t") >= 0);
    sift_outdir_close(&o);
}

/* The ids of DIR/queue; fails on a repeated one. Returns how many. */
static size_t distinct_ids(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/queue", dir);
    DIR *d = opendir(path);
    assert_non_null(d);
    long ids[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long id = sift_outdir_id(e->d_name);
        if (id < 0) continue;
        for (size_t i = 0; i < n; i++)
            if (ids[i] == id) fail_msg("id %ld is used twice", id);
        assert_true(n < 64);
        ids[n++] = id;
    }
    closedir(d);
    return n;
}

/* An entry named with the largest id AFL++'s six digits allow, or more, made every later start
 * hand out the ids after it again, since it could not read back the names it had written. */
static void ids_never_repeat_after_a_huge_one(void **state)
{
    const char *dir = *state;
    assert_int_equal(sift_test_sh(&proc, dir,
                                  "mkdir -p o/queue && : > o/queue/id:999999999,planted && "
                                  ": > o/queue/id:99999999999,past"),
                     0);
    char out[512];
    snprintf(out, sizeof out, "%s/o", dir);
    for (int start = 0; start < 3; start++)
        queue_some(out, 4);
    assert_int_equal(distinct_ids(out), 13);
    assert_int_equal(sift_outdir_id("id:1000000011,t"), 1000000011);
    assert_int_equal(sift_outdir_id("id:4294967295,x"), -1); /* past the largest */
    assert_int_equal(sift_outdir_id("id:99999999999999999999999,x"), -1);

    /* After the largest id there is none left: one line, never a name reused. */
    assert_int_equal(sift_test_sh(&proc, dir, "mkdir -p e/queue && : > e/queue/id:4294967294,last"),
                     0);
    snprintf(out, sizeof out, "%s/e", dir);
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, out), 0);
    assert_int_equal(sift_outdir_queue(&o, (const uint8_t *)"x", 1, "t"), -1);
    sift_outdir_close(&o);
}

static void report_once(const char *dir, uint64_t now)
{
    sift_outdir o;
    assert_int_equal(sift_outdir_open(&o, dir), 0);
    sift_outdir_stats st = {.start_time = 100, .now = now, .banner = "b", .command_line = "c"};
    assert_int_equal(sift_outdir_report(&o, &st, true), 0);
    sift_outdir_close(&o);
}

/* A kill in the middle of a line of plot_data, then a resume: the torn line is cut, and every
 * line is whole again. */
static void a_torn_plot_line_is_cut_on_resume(void **state)
{
    const char *dir = *state;
    char out[512];
    snprintf(out, sizeof out, "%s/o", dir);
    report_once(out, 101);
    assert_int_equal(sift_test_sh(&proc, dir, "printf '2, 0, 0, 7' >> o/plot_data"), 0);
    report_once(out, 103);
    assert_int_equal(sift_test_sh(&proc, dir, "cut -d, -f1 o/plot_data | tr '\\n' ' '"), 0);
    assert_string_equal(proc.out, "# relative_time 1 3 ");
    /* A file with no whole line at all. */
    assert_int_equal(sift_test_sh(&proc, dir, "printf '# relat' > o/plot_data"), 0);
    report_once(out, 104);
    assert_int_equal(sift_test_sh(&proc, dir, "cut -d, -f1 o/plot_data | tr '\\n' ' '"), 0);
    assert_string_equal(proc.out, "# relative_time 4 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(ids_never_repeat_after_a_huge_one, setup, teardown),
        cmocka_unit_test_setup_teardown(a_torn_plot_line_is_cut_on_resume, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
