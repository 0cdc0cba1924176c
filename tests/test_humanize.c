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

/* Names from folders others write into: no byte that a terminal acts on gets through. */
static void names_are_escaped(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(sift_human_name("id:000001,ok+x-1.2", buf, sizeof buf),
                        "id:000001,ok+x-1.2");
    assert_string_equal(
        sift_human_name("a\nsift: forged\x1b]0;t\x07\x1b[2J\\\xff", buf, sizeof buf),
        "a\\x0asift: forged\\x1b]0;t\\x07\\x1b[2J\\x5c\\xff");
    char small[12];
    assert_string_equal(sift_human_name("\n\n\n\n", small, sizeof small), "\\x0a\\x0a...");
    assert_string_equal(sift_human_name("abcdefghijklmnop", small, sizeof small), "abcde...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_get_thousands_separators),
        cmocka_unit_test(run_times_are_hours_minutes_seconds),
        cmocka_unit_test(spans_use_their_two_largest_units),
        cmocka_unit_test(names_are_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
