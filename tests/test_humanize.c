/* Tests of the numbers and times shown to people (live view, sift show). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/humanize.h"

#include <string.h>

typedef struct {
    uint64_t v;
    const char *want;
} human_case;

/* Each case of Cases through Fn, named by Fn's Name and the value in a failure. */
static void check_human(const char *name, const char *(*fn)(uint64_t, char[32]),
                        const human_case *cases, size_t n)
{
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        const char *got = fn(cases[i].v, buf);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s(%llu): got \"%s\", want \"%s\"", name, (unsigned long long)cases[i].v, got,
                     cases[i].want);
    }
}

static void counts_get_thousands_separators(void **state)
{
    (void)state;
    static const human_case cases[] = {
        {0, "0"},
        {999, "999"},
        {1000, "1,000"},
        {1234567, "1,234,567"},
        {UINT64_MAX, "18,446,744,073,709,551,615"},
    };
    check_human("sift_human_count", sift_human_count, cases, sizeof cases / sizeof cases[0]);
}

/* As libFuzzer writes a corpus's size in its status lines. */
static void sizes_as_libfuzzer_writes_them(void **state)
{
    (void)state;
    static const human_case cases[] = {
        {0, "0b"},           {16383, "16383b"}, {16384, "16Kb"}, {(16u << 20) - 1, "16383Kb"},
        {16u << 20, "16Mb"},
    };
    check_human("sift_human_size", sift_human_size, cases, sizeof cases / sizeof cases[0]);
}

static void run_times_are_hours_minutes_seconds(void **state)
{
    (void)state;
    static const human_case cases[] = {
        {0, "0:00:00"},
        {3661, "1:01:01"},
        {100 * 3600 + 59, "100:00:59"},
    };
    check_human("sift_human_clock", sift_human_clock, cases, sizeof cases / sizeof cases[0]);
}

static void spans_use_their_two_largest_units(void **state)
{
    (void)state;
    static const human_case cases[] = {
        {7, "7s"},
        {59, "59s"},
        {60, "1m00s"},
        {192, "3m12s"},
        {2 * 3600 + 5 * 60 + 9, "2h05m"},
        {3 * 86400 + 4 * 3600 + 1, "3d04h"},
    };
    check_human("sift_human_span", sift_human_span, cases, sizeof cases / sizeof cases[0]);
    char buf[32];
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
        cmocka_unit_test(sizes_as_libfuzzer_writes_them),
        cmocka_unit_test(run_times_are_hours_minutes_seconds),
        cmocka_unit_test(spans_use_their_two_largest_units),
        cmocka_unit_test(names_are_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
