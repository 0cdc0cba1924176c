/* The canary runtime of bench/bugs (Magma's MAGMA_LOG, sift's records): a planted bug's first
 * reach and first trigger are recorded in the campaign's canary file, by any process of the
 * campaign, and a trigger survives the crash that follows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;
static sift_test_proc proc;

/* The runtime is built as the benchmark builds it: without coverage instrumentation. */
static int build(void **state)
{
    *state = dir = sift_test_scratch();
    if (!dir || SIFT_TEST_SH("clang -O1 -c " SIFT_TEST_SAN " '" SIFT_SOURCE_DIR
                             "/bench/bugs/canary.c' -o canary.o && clang -O1 '" SIFT_SOURCE_DIR
                             "/bench/bugs/canary_tool.c' -o canary_tool") != 0) {
        fprintf(stderr, "%s%s", proc.out, proc.err);
        return -1;
    }
    return sift_test_build(dir, "planted", "tests/fixtures/canary.c", "canary.o");
}

/* The canary file's lines after running the harness on the input INPUT (printf text). */
static const char *records_after(const char *input)
{
    SIFT_TEST_SH("printf '%s' > in && SIFT_CANARY_FILE=f CANARY_FIXTURE_WILD=1 ./planted in "
                 ">/dev/null 2>&1; "
                 "./canary_tool dump f | sort",
                 input);
    return proc.out;
}

/* Fields of BUG's line in TEXT: reached and triggered, "-" for never. */
static void times_of(const char *text, const char *bug, char reached[32], char triggered[32])
{
    char key[16];
    snprintf(key, sizeof key, "%s\t", bug);
    const char *line = strstr(text, key);
    if (!line) fail_msg("no record of %s in:\n%s", bug, text);
    if (sscanf(line + strlen(key), "%31s %31s", reached, triggered) != 2)
        fail_msg("a bad line for %s in:\n%s", bug, text);
}

static void without_a_file_nothing_is_recorded(void **state)
{
    (void)state;
    assert_int_equal(SIFT_TEST_SH("printf Ax > in && ./planted in"), 0);
    assert_int_equal(SIFT_TEST_SH("./canary_tool dump nothing"), 1);
    assert_non_null(strstr(proc.err, "canary_tool: nothing: not a canary file"));
}

static void reach_trigger_and_crash_are_recorded(void **state)
{
    (void)state;
    char reached[32], triggered[32], again[32], still[32];
    assert_int_equal(SIFT_TEST_SH("rm -f f && ./canary_tool init f"), 0);
    /* Reached, not triggered. */
    times_of(records_after("xy"), "T001", reached, triggered);
    assert_true(strtod(reached, NULL) >= 0);
    assert_string_equal(triggered, "-");
    assert_null(strstr(proc.out, "T002"));
    /* Triggered: the first reach keeps its time. */
    times_of(records_after("Ay"), "T001", again, triggered);
    assert_string_equal(again, reached);
    assert_true(strtod(triggered, NULL) >= strtod(reached, NULL));
    /* Triggered, then the process crashes: the record is there all the same. */
    times_of(records_after("ABC"), "T002", again, still);
    assert_string_not_equal(again, "-");
    assert_string_not_equal(still, "-");
    /* First times stay first. */
    times_of(records_after("ABC"), "T002", reached, triggered);
    assert_string_equal(reached, again);
    assert_string_equal(triggered, still);
}

/* A bug that writes past its buffer on into the canary file's mapping faults at the guard page
 * before it, and leaves the records whole. */
static void a_wild_write_does_not_wipe_the_records(void **state)
{
    (void)state;
    char reached[32], triggered[32];
    assert_int_equal(SIFT_TEST_SH("rm -f f && ./canary_tool init f"), 0);
    times_of(records_after("Wx"), "T003", reached, triggered);
    assert_string_not_equal(triggered, "-");
}

/* A campaign of worker processes: the one that triggers the bug crashes with it, and the
 * record is in the file the whole campaign shares. */
static void a_campaign_records_its_workers_triggers(void **state)
{
    (void)state;
    int rc = SIFT_TEST_SH("rm -rf f c && mkdir c && printf AB > c/seed && ./canary_tool init f && "
                          "SIFT_CANARY_FILE=f ./planted -workers=2 -max_total_time=120 c");
    assert_int_equal(rc, 77);
    char reached[32], triggered[32];
    SIFT_TEST_SH("./canary_tool dump f");
    times_of(proc.out, "T002", reached, triggered);
    assert_string_not_equal(triggered, "-");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_file_nothing_is_recorded),
        cmocka_unit_test(reach_trigger_and_crash_are_recorded),
        cmocka_unit_test(a_wild_write_does_not_wipe_the_records),
        cmocka_unit_test(a_campaign_records_its_workers_triggers),
    };
    return cmocka_run_group_tests(tests, build, sift_test_scratch_teardown);
}
