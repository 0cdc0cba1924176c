/* Tests of the input history: the ring keeps the last N in order, the folder appears whole or
 * not at all, and a crash that depends on an earlier input runs again from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/fsutil.h"
#include "engine/contain/history.h"
#include "engine/contain/report.h"
#include "support/harness.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;
static sift_test_proc proc;

static int group_setup(void **state)
{
    (void)state;
    dir = sift_test_scratch();
    if (!dir) return -1;
    return sift_test_build(dir, "stateful", "tests/fixtures/stateful.c", "");
}

static int group_teardown(void **state)
{
    (void)state;
    sift_test_rmtree(dir);
    return 0;
}

/* The report line of a write, from a log file the report descriptor points to. */
static char *write_logged(const sift_history *h, const char *path, int *rc)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/report.log", dir);
    int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    int old = sift_report_fd();
    sift_report_set_fd(fd);
    *rc = sift_history_write(h, path, "./fuzzer");
    sift_report_set_fd(old);
    close(fd);
    char *text = NULL;
    size_t size = 0;
    char err[256];
    assert_int_equal(sift_fs_read(log, 1 << 20, (uint8_t **)&text, &size, NULL, err, sizeof err),
                     0);
    char *line = calloc(1, size + 1);
    memcpy(line, text, size);
    free(text);
    return line;
}

static void expect_file(const char *folder, const char *name, const char *want)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/%s", dir, folder, name);
    uint8_t *data = NULL;
    size_t size = 0;
    char err[256];
    assert_int_equal(sift_fs_read(path, 1 << 20, &data, &size, NULL, err, sizeof err), 0);
    assert_int_equal(size, strlen(want));
    assert_memory_equal(data, want, size);
    free(data);
}

static void the_last_n_are_written_oldest_first(void **state)
{
    (void)state;
    sift_history h;
    assert_int_equal(sift_history_init(&h, 3), 0);
    const char *inputs[] = {"a", "bb", "a longer one, which grows its slot", "dddd", ""};
    for (size_t i = 0; i < 5; i++)
        sift_history_add(&h, (const uint8_t *)inputs[i], strlen(inputs[i]));
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/h1", dir);
    int rc;
    char *line = write_logged(&h, path, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(sift_test_count_entries(dir, "h1", "*"), 3);
    expect_file("h1", "000001", inputs[2]);
    expect_file("h1", "000002", inputs[3]);
    expect_file("h1", "000003", inputs[4]);
    assert_non_null(strstr(line, "History: the last 3 inputs run, this one last, written to "));
    assert_non_null(strstr(line, "./fuzzer "));
    assert_int_equal(sift_test_count_entries(dir, NULL, ".*"), 0); /* no temporary left */
    free(line);
    sift_history_free(&h);
}

static void fewer_inputs_than_kept_are_all_written(void **state)
{
    (void)state;
    sift_history h;
    assert_int_equal(sift_history_init(&h, 8), 0);
    sift_history_add(&h, (const uint8_t *)"x", 1);
    sift_history_add(&h, (const uint8_t *)"y", 1);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/h2", dir);
    int rc;
    free(write_logged(&h, path, &rc));
    assert_int_equal(rc, 0);
    assert_int_equal(sift_test_count_entries(dir, "h2", "*"), 2);
    expect_file("h2", "000002", "y");
    sift_history_free(&h);
}

/* The same input crashed before: the folder it left stays as it is, and no temporary is left. */
static void an_existing_folder_is_left_alone(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("mkdir h3 && printf old > h3/000001"), 0);
    sift_history h;
    assert_int_equal(sift_history_init(&h, 2), 0);
    sift_history_add(&h, (const uint8_t *)"new", 3);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/h3", dir);
    int rc;
    char *line = write_logged(&h, path, &rc);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(line, "ERROR: cannot write the inputs run before it to "));
    expect_file("h3", "000001", "old");
    assert_int_equal(sift_test_count_entries(dir, "h3", "*"), 1);
    assert_int_equal(sift_test_count_entries(dir, NULL, ".*"), 0);
    free(line);
    sift_history_free(&h);
}

static void none_kept_without_n(void **state)
{
    (void)state;
    sift_history h;
    assert_int_equal(sift_history_init(&h, 0), 0);
    sift_history_add(&h, (const uint8_t *)"x", 1);
    assert_null(h.slots);
    assert_int_equal(h.added, 0);
    sift_history_free(&h);
}

/* The crash the fuzzer finds ("B" after "A") does not repeat from its artifact alone; the
 * history beside it, run in one process, repeats it. */
static void a_crash_that_needs_an_earlier_input_runs_again_from_its_history(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf c a && mkdir c a && printf A > c/arm && printf C > c/other && "
                          "./stateful -seed=1 -runs=2000000 -crash_history=16 -artifact_prefix=a/ c");
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(proc.err, "History: the last 16 inputs run, this one last, written to "
                                     "a/history-"));
    assert_int_equal(sift_test_count_entries(dir, "a", "crash-*"), 1);
    assert_int_equal(sift_test_count_entries(dir, "a", "history-*"), 1);
    /* The history's last input is the crash's. */
    assert_int_equal(SIFT_TEST_SH("cmp a/crash-* a/history-*/000016"), 0);
    assert_int_equal(SIFT_TEST_SH("./stateful a/crash-*"), 0);
    assert_int_not_equal(SIFT_TEST_SH("./stateful a/history-*/*"), 0);
    assert_non_null(strstr(proc.err, "SUMMARY: "));
    /* Without the flag, no history. */
    SIFT_TEST_SH("rm -rf a && mkdir a && ./stateful -seed=1 -runs=2000000 -artifact_prefix=a/ c");
    assert_int_equal(sift_test_count_entries(dir, "a", "crash-*"), 1);
    assert_int_equal(sift_test_count_entries(dir, "a", "history-*"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_last_n_are_written_oldest_first),
        cmocka_unit_test(fewer_inputs_than_kept_are_all_written),
        cmocka_unit_test(an_existing_folder_is_left_alone),
        cmocka_unit_test(none_kept_without_n),
        cmocka_unit_test(a_crash_that_needs_an_earlier_input_runs_again_from_its_history),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
