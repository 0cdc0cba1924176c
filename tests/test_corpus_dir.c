/* Tests of the corpus folder's writer: new inputs at once, replacements (REDUCE) and the removal
 * of what they replaced at the flush a second later, never a replaced file before its
 * replacement, and nothing at all for a replacement replaced again before the flush. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/clock.h"
#include "engine/core/corpus_dir.h"
#include "support/harness.h"

#include <stdio.h>
#include <string.h>

#define SECOND SIFT_SECOND_NS

static sift_entry entry(const char *name, const char *text)
{
    sift_entry e = {.data = (uint8_t *)text, .size = strlen(text)};
    snprintf(e.name, sizeof e.name, "%s", name);
    return e;
}

static bool has(const char *dir, const char *name)
{
    return sift_test_count_entries(dir, NULL, name) == 1;
}

/* SMALL is kept at NOW in place of OLD, which that leaves without a top rating. */
static void replace_evicting(sift_corpus_dir *d, sift_entry *old, sift_entry *small,
                             uint64_t now_ns)
{
    old->evicted = true;
    sift_corpus_dir_replace(d, small, &old, 1, now_ns);
}

static void a_new_input_is_written_at_once(void **state)
{
    const char *dir = *state;
    sift_corpus_dir d = {.path = dir};
    sift_entry a = entry("a", "first");
    sift_corpus_dir_save(&d, &a);
    assert_string_equal(sift_test_read(dir, "a"), "first");
    sift_corpus_dir_free(&d);
}

static void a_replacement_is_written_a_second_later_and_then_what_it_replaced_goes(void **state)
{
    const char *dir = *state;
    sift_corpus_dir d = {.path = dir};
    sift_entry old = entry("old", "a longer input"), kept = entry("kept", "stays"),
               small = entry("small", "short");
    sift_corpus_dir_save(&d, &old);
    sift_corpus_dir_save(&d, &kept);
    old.evicted = true; /* kept still holds a top rating of its own */
    sift_entry *gone[] = {&old, &kept};
    sift_corpus_dir_replace(&d, &small, gone, 2, 5 * SECOND);
    sift_corpus_dir_tick(&d, 5 * SECOND + SECOND / 2);
    assert_false(has(dir, "small"));
    assert_true(has(dir, "old"));
    sift_corpus_dir_tick(&d, 6 * SECOND);
    assert_string_equal(sift_test_read(dir, "small"), "short");
    assert_false(has(dir, "old"));
    assert_true(has(dir, "kept"));
    assert_int_equal(sift_test_count_entries(dir, NULL, "*"), 2);
    /* Nothing is left to flush. */
    sift_corpus_dir_tick(&d, UINT64_MAX);
    assert_int_equal(sift_test_count_entries(dir, NULL, "*"), 2);
    sift_corpus_dir_free(&d);
}

static void a_replacement_replaced_before_the_flush_never_reaches_disk(void **state)
{
    const char *dir = *state;
    sift_corpus_dir d = {.path = dir};
    sift_entry first = entry("first", "0123456789"), second = entry("second", "01234"),
               third = entry("third", "01");
    sift_corpus_dir_save(&d, &first);
    replace_evicting(&d, &first, &second, SECOND);
    /* The second replacement does not put the flush off: it is due a second after the first. */
    replace_evicting(&d, &second, &third, SECOND + SECOND / 2);
    sift_corpus_dir_tick(&d, 2 * SECOND);
    assert_string_equal(sift_test_read(dir, "third"), "01");
    assert_int_equal(sift_test_count_entries(dir, NULL, "*"), 1);
    sift_corpus_dir_free(&d);
}

static void the_last_flush_writes_what_is_pending_at_once(void **state)
{
    const char *dir = *state;
    sift_corpus_dir d = {.path = dir};
    sift_entry old = entry("old", "longer"), small = entry("small", "short");
    sift_corpus_dir_save(&d, &old);
    replace_evicting(&d, &old, &small, 3 * SECOND);
    sift_corpus_dir_tick(&d, UINT64_MAX);
    assert_true(has(dir, "small"));
    assert_false(has(dir, "old"));
    sift_corpus_dir_free(&d);
}

static void without_a_folder_nothing_is_written(void **state)
{
    const char *dir = *state;
    sift_corpus_dir d = {0};
    sift_entry a = entry("a", "x"), b = entry("b", "y");
    sift_corpus_dir_save(&d, &a);
    replace_evicting(&d, &a, &b, 0);
    sift_corpus_dir_tick(&d, UINT64_MAX);
    assert_int_equal(d.npending, 0);
    assert_int_equal(sift_test_count_entries(dir, NULL, "*"), 0);
    sift_corpus_dir_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SIFT_TEST_IN_SCRATCH(a_new_input_is_written_at_once),
        SIFT_TEST_IN_SCRATCH(
            a_replacement_is_written_a_second_later_and_then_what_it_replaced_goes),
        SIFT_TEST_IN_SCRATCH(a_replacement_replaced_before_the_flush_never_reaches_disk),
        SIFT_TEST_IN_SCRATCH(the_last_flush_writes_what_is_pending_at_once),
        SIFT_TEST_IN_SCRATCH(without_a_folder_nothing_is_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
