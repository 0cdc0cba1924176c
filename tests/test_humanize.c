/* Tests of the numbers and times shown to people (live view, sift show). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/humanize.h"

static void counts_get_thousands_separators(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(sift_human_count(0, buf), "0");
    assert_string_equal(sift_human_count(999, buf), "999");
    assert_string_equal(sift_human_count(1000, buf), "1,000");
    assert_string_equal(sift_human_count(1234567, buf), "1,234,567");
    assert_string_equal(sift_human_count(UINT64_MAX, buf), "18,446,744,073,709,551,615");
}

static void run_times_are_hours_minutes_seconds(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(sift_human_clock(0, buf), "0:00:00");
    assert_string_equal(sift_human_clock(3661, buf), "1:01:01");
    assert_string_equal(sift_human_clock(100 * 3600 + 59, buf), "100:00:59");
}

static void spans_use_their_two_largest_units(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(sift_human_span(7, buf), "7s");
    assert_string_equal(sift_human_span(59, buf), "59s");
    assert_string_equal(sift_human_span(60, buf), "1m00s");
    assert_string_equal(sift_human_span(192, buf), "3m12s");
    assert_string_equal(sift_human_span(2 * 3600 + 5 * 60 + 9, buf), "2h05m");
    assert_string_equal(sift_human_span(3 * 86400 + 4 * 3600 + 1, buf), "3d04h");
    assert_non_null(sift_human_span(UINT64_MAX, buf));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_get_thousands_separators),
        cmocka_unit_test(run_times_are_hours_minutes_seconds),
        cmocka_unit_test(spans_use_their_two_largest_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
