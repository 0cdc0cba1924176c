/* Tests of -fork_corpus_groups (engine/campaign/groups.c): libFuzzer's group counts, group
 * ranges and job lengths, the job numbers each worker takes, and picks that stay in the band of
 * the current job's group while it lasts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/clock.h"
#include "engine/base/rng.h"
#include "engine/campaign/groups.h"
#include "support/corpus_add.h"

#include <stdio.h>

static void libfuzzer_numbers(void **state)
{
    (void)state;
    assert_int_equal(sift_groups_count(0), 12);
    assert_int_equal(sift_groups_count(1999), 12);
    assert_int_equal(sift_groups_count(2000), 20);
    assert_int_equal(sift_groups_count(12000), 40);
    assert_int_equal(sift_groups_count(23999), 60);
    assert_int_equal(sift_groups_count(24000), 80);
    assert_int_equal(sift_groups_job_seconds(1), 1);
    assert_int_equal(sift_groups_job_seconds(299), 299);
    assert_int_equal(sift_groups_job_seconds(5000), 300);
    /* 100 entries in 12 groups of 100 / 12 + 1 = 9: job 1 takes 0..8, job 2 takes 9..17, job 12
     * would start at 99 and ends there, job 13 starts over. */
    size_t first, last;
    sift_groups_range(1, 100, &first, &last);
    assert_int_equal(first, 0);
    assert_int_equal(last, 8);
    sift_groups_range(2, 100, &first, &last);
    assert_int_equal(first, 9);
    assert_int_equal(last, 17);
    sift_groups_range(12, 100, &first, &last);
    assert_int_equal(first, 99);
    assert_int_equal(last, 99);
    sift_groups_range(13, 100, &first, &last);
    assert_int_equal(first, 0);
    /* A corpus smaller than the groups: the late groups are its largest entry. */
    sift_groups_range(5, 3, &first, &last);
    assert_int_equal(first, 2);
    assert_int_equal(last, 2);
}

/* 100 entries of sizes 1..100, added largest first, each with a feature of its own. */
static sift_corpus *sized_corpus(void)
{
    sift_corpus *c = sift_corpus_new();
    assert_non_null(c);
    for (size_t size = 100; size >= 1; size--) {
        char name[41];
        snprintf(name, sizeof name, "%040zu", size);
        assert_non_null(add(c, name, size, 1000, (sift_feature_id)size));
    }
    return c;
}

static void assert_picks_within(sift_corpus *c, sift_rng *rng, size_t lo, size_t hi)
{
    for (int i = 0; i < 300; i++) {
        sift_entry *e = sift_corpus_pick(c, rng);
        assert_non_null(e);
        if (e->size < lo || e->size > hi)
            fail_msg("picked an entry of %zu bytes outside %zu..%zu", e->size, lo, hi);
    }
}

static void jobs_take_turns_at_the_groups(void **state)
{
    (void)state;
    sift_corpus *c = sized_corpus();
    sift_rng rng;
    sift_rng_seed(&rng, 7);
    /* Worker 1 of 2 takes libFuzzer's jobs 2, 4, 6, ...: job 2 is the second group of nine
     * (sizes 10..18) and lasts 2 s. */
    sift_groups g;
    sift_groups_init(&g, 1, 2);
    uint64_t t = 5 * SIFT_SECOND_NS;
    sift_groups_tick(&g, c, t);
    assert_picks_within(c, &rng, 10, 18);
    sift_groups_tick(&g, c, t + 2 * SIFT_SECOND_NS - 1);
    assert_picks_within(c, &rng, 10, 18);
    /* Then job 4: sizes 28..36, for 4 s. */
    sift_groups_tick(&g, c, t + 2 * SIFT_SECOND_NS);
    assert_picks_within(c, &rng, 28, 36);
    sift_groups_tick(&g, c, t + 6 * SIFT_SECOND_NS - 1);
    assert_picks_within(c, &rng, 28, 36);
    sift_groups_tick(&g, c, t + 6 * SIFT_SECOND_NS);
    assert_picks_within(c, &rng, 46, 54);
    sift_groups_free(&g);
    /* Without groups every size is picked. */
    sift_corpus_set_band(c, 0, SIZE_MAX);
    bool small = false, large = false;
    for (int i = 0; i < 2000; i++) {
        size_t size = sift_corpus_pick(c, &rng)->size;
        small |= size <= 9;
        large |= size >= 90;
    }
    assert_true(small && large);
    sift_corpus_free(c);
}

/* An empty corpus has no band, and a band nobody is in leaves picks as they would be. */
static void empty_and_unreachable_bands(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    sift_groups g;
    sift_groups_init(&g, 0, 1);
    sift_groups_tick(&g, c, 1);
    sift_groups_free(&g);
    assert_non_null(add(c, "a", 10, 1000, 1));
    sift_rng rng;
    sift_rng_seed(&rng, 1);
    sift_corpus_set_band(c, 50, 60);
    sift_entry *e = sift_corpus_pick(c, &rng);
    assert_non_null(e);
    assert_int_equal(e->size, 10);
    sift_corpus_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(libfuzzer_numbers),
        cmocka_unit_test(jobs_take_turns_at_the_groups),
        cmocka_unit_test(empty_and_unreachable_bands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
