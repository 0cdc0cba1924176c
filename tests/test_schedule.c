/* Tests of the corpus's scheduler (core/schedule.c): the favored set, and how often entries are
 * picked by the rarity of their features, their cost, their time and their energy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/core/corpus.h"
#include "support/corpus_add.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void favored_set_is_minimal_and_covers(void **state)
{
    (void)state;
    /* Small pairs and a large triple: the pairs are needed, the triple is redundant. */
    sift_corpus *c = sift_corpus_new();
    sift_entry *a = add(c, "a", 10, 100, 1, 2);
    sift_entry *b = add(c, "b", 10, 100, 2, 3);
    sift_entry *t = add(c, "t", 100, 100, 1, 2, 3);
    sift_corpus_update(c);
    assert_true(a->favored && b->favored);
    assert_false(t->favored);
    assert_true(t->evicted);
    assert_int_equal(sift_corpus_favored(c), 2);
    sift_corpus_free(c);

    /* A small triple covers everything alone. */
    c = sift_corpus_new();
    a = add(c, "a", 100, 100, 1, 2);
    b = add(c, "b", 100, 100, 2, 3);
    t = add(c, "t", 10, 100, 1, 2, 3);
    sift_corpus_update(c);
    assert_true(t->favored);
    assert_false(a->favored || b->favored);
    assert_int_equal(sift_corpus_favored(c), 1);
    assert_int_equal(sift_corpus_active(c), 1);
    sift_corpus_free(c);

    /* Greedy in feature order takes the tiny entry for feature 1, then the big one for 2 and 3,
     * which covers 1 too: the tiny one is dropped from the set but still scheduled. */
    c = sift_corpus_new();
    a = add(c, "a", 1, 100, 1);
    t = add(c, "t", 100, 100, 1, 2, 3);
    sift_corpus_update(c);
    assert_true(t->favored);
    assert_false(a->favored || a->evicted);
    assert_int_equal(sift_corpus_favored(c), 1);
    assert_int_equal(sift_corpus_active(c), 2);
    assert_true(t->weight > a->weight);
    sift_corpus_free(c);
}

static size_t count_picks(sift_corpus *c, sift_rng *rng, const sift_entry *e, int n)
{
    size_t hits = 0;
    for (int i = 0; i < n; i++)
        hits += sift_corpus_pick(c, rng) == e;
    return hits;
}

static void rare_features_are_picked_more(void **state)
{
    (void)state;
    /* All three are favored, each for a feature of its own; A and B have as many features,
     * but one of B's is also E's. */
    sift_corpus *c = sift_corpus_new();
    sift_entry *e = add(c, "e", 100, 100, 3, 9);
    sift_entry *b = add(c, "b", 5, 100, 3, 4);
    sift_entry *a = add(c, "a", 5, 100, 1, 2);
    sift_corpus_update(c);
    assert_true(a->favored && b->favored && e->favored);
    assert_int_equal(sift_corpus_active(c), 3);
    sift_rng rng;
    sift_rng_seed(&rng, 7);
    size_t na = count_picks(c, &rng, a, 3000), nb = b->times_chosen;
    assert_int_equal(na + nb + e->times_chosen, 3000);
    /* Shares 2 against 1.5 (over the same square root of two features). */
    assert_true(na * 10 > nb * 12);
    sift_corpus_free(c);
}

/* An entry with four times the features (all its own) weighs twice as much, not four times:
 * the deep inputs that hold most features are also the slowest to run. (Comparison features, so
 * that both entries cost the same work.) */
static void features_weigh_by_their_square_root(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    const sift_feature_id cmp = (sift_feature_id)1 << 40;
    sift_entry *one = add(c, "one", 5, 100, cmp + 8);
    sift_entry *four = add(c, "four", 5, 100, cmp + 16, cmp + 24, cmp + 32, cmp + 40);
    sift_corpus_update(c);
    assert_true(one->favored && four->favored);
    assert_true(fabs(four->weight / one->weight - 2.0) < 1e-9);
    sift_corpus_free(c);
}

/* -focus_function: an entry that runs the focus function weighs 1000 times its like, as
 * libFuzzer weighs such inputs; the count follows the live entries, eviction included. */
static void focus_entries_weigh_a_thousand_times(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    const sift_feature_id cmp = (sift_feature_id)1 << 40;
    sift_entry *plain = add(c, "plain", 5, 100, cmp + 8);
    sift_entry *focus = add(c, "focus", 5, 100, cmp + 16);
    sift_corpus_mark_focus(c, focus);
    sift_corpus_mark_focus(c, focus);
    assert_int_equal(sift_corpus_focus(c), 1);
    sift_corpus_update(c);
    assert_true(fabs(focus->weight / plain->weight - 1000.0) < 1e-6);
    /* A smaller input with the focus entry's one feature evicts it. */
    add(c, "smaller", 1, 100, cmp + 16);
    assert_true(focus->evicted);
    assert_int_equal(sift_corpus_focus(c), 0);
    sift_corpus_free(c);
}

/* Costly entries are picked less, in proportion to the corpus's mean work over theirs, as AFL
 * weighs its queue by time: an edge run 128 times or more counts 128, once counts 1, so the
 * works are 2, 129 and 2 and the speeds 3 (the most an entry gets) and 44.3 / 129. */
static void costly_entries_are_picked_less(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    sift_entry *cheap = add(c, "cheap", 5, 100, sift_feature(0, 1, 0));
    sift_entry *costly = add(c, "costly", 5, 100, sift_feature(0, 2, 7));
    add(c, "other", 5, 100, sift_feature(0, 3, 0));
    sift_corpus_update(c);
    assert_true(fabs(cheap->weight / costly->weight - 3.0 / (133.0 / 3 / 129)) < 1e-6);
    sift_rng rng;
    sift_rng_seed(&rng, 5);
    size_t ncheap = count_picks(c, &rng, cheap, 3000);
    assert_true(ncheap > 5 * costly->times_chosen);
    sift_corpus_free(c);
}

/* Work saturates at 128 hits per edge, so time counts too: with a mean execution of 1 ms, an
 * entry of 100 ms gets a fiftieth of the weight of one of the same work that takes no time, one
 * of 2 ms (twice the mean) as much. Before the campaign's mean is known, times count for
 * nothing. */
static void slow_entries_are_picked_less_by_time(void **state)
{
    (void)state;
    const uint64_t ms = 1000000;
    for (int known = 0; known < 2; known++) {
        sift_corpus *c = sift_corpus_new();
        if (known) sift_corpus_set_mean_run(c, ms);
        sift_entry *slow = add(c, "slow", 5, 100 * ms, sift_feature(0, 0, 0));
        sift_entry *two = add(c, "two", 5, 2 * ms, sift_feature(0, 1, 0));
        sift_entry *fast = NULL;
        char name[8];
        for (uint64_t i = 2; i < 100; i++) {
            snprintf(name, sizeof(name), "f%d", (int)i);
            fast = add(c, name, 5, 0, sift_feature(0, i, 0));
        }
        sift_corpus_update(c);
        assert_true(slow->favored && two->favored && fast->favored);
        assert_true(fabs(slow->weight / fast->weight - (known ? 0.0004 : 1.0)) < 1e-9);
        assert_true(two->weight == fast->weight);
        sift_rng rng;
        sift_rng_seed(&rng, 5);
        size_t picks = count_picks(c, &rng, slow, 20000);
        if (known) assert_true(picks < 20000 / 100 / 20);
        if (!known) assert_true(picks > 20000 / 100 / 2);
        sift_corpus_free(c);
    }
}

/* Slow entries' share of the campaign's time stays small when they outnumber the fast ones,
 * though the mean they are measured against counts their own mutants' runs. */
static void slow_entries_take_little_time_when_many(void **state)
{
    (void)state;
    const uint64_t us = 1000;
    sift_corpus *c = sift_corpus_new();
    sift_entry *slowest = NULL;
    char name[8];
    for (uint64_t i = 0; i < 100; i++) {
        snprintf(name, sizeof(name), "e%d", (int)i);
        slowest = add(c, name, 5, i < 40 ? 0 : 500 * us, sift_feature(0, i, 0));
    }
    /* Fast runs take 5 us, and the slow entries' mutants raise the mean. The fast entries go
     * stale over the picks; slow ones picked as seldom as their time says must go stale as
     * soon. (Each slow entry picked for the time of one at the limit, and staling by picks,
     * they took 89% of the time.) */
    sift_corpus_set_mean_run(c, 6 * us);
    sift_corpus_update(c);
    double fast_ns = 0, slow_ns = 0;
    sift_rng rng;
    sift_rng_seed(&rng, 9);
    for (int i = 0; i < 100000; i++) {
        sift_entry *e = sift_corpus_pick(c, &rng);
        if (e->exec_ns)
            slow_ns += (double)e->exec_ns;
        else
            fast_ns += 5.0 * (double)us;
    }
    assert_true(slowest->favored);
    assert_true(slow_ns < 0.3 * (fast_ns + slow_ns));
    sift_corpus_free(c);
}

static void new_entries_get_energy_that_fades(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    char name[8];
    for (uint64_t i = 1; i <= 10; i++) {
        snprintf(name, sizeof(name), "e%d", (int)i);
        assert_non_null(add(c, name, 10, 100, i));
    }
    sift_rng rng;
    sift_rng_seed(&rng, 3);
    count_picks(c, &rng, NULL, 10000);
    sift_entry *n = add(c, "new", 10, 100, 11);
    size_t early = count_picks(c, &rng, n, 50);
    count_picks(c, &rng, NULL, 20000);
    size_t late = count_picks(c, &rng, n, 5000);
    /* Equal entries: about 1 in 11 once the energy is gone, far more at first. */
    assert_true(early >= 10);
    assert_true((double)early / 50 > 2.0 * (double)late / 5000);
    assert_true(late > 100);
    sift_corpus_free(c);
}

static void finds_stop_the_fading(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    sift_entry *a = add(c, "a", 10, 100, 1);
    sift_entry *b = add(c, "b", 10, 100, 2);
    sift_rng rng;
    sift_rng_seed(&rng, 5);
    count_picks(c, &rng, NULL, 40000);
    double wa = a->weight;
    sift_corpus_found(c, a);
    assert_true(a->weight > 2 * wa);
    assert_true(a->weight > 2 * b->weight);
    size_t na = count_picks(c, &rng, a, 1000);
    assert_true(na > 600);
    sift_corpus_free(c);
}

static void featureless_seeds_until_coverage(void **state)
{
    (void)state;
    sift_corpus *c = sift_corpus_new();
    sift_entry *s = sift_corpus_add(c, (const uint8_t *)"x", 1, NULL, 0, 1, "seed", 0);
    sift_rng rng;
    sift_rng_seed(&rng, 9);
    assert_ptr_equal(sift_corpus_pick(c, &rng), s);
    assert_false(s->evicted);
    sift_entry *e = add(c, "e", 1, 1, 1);
    assert_ptr_equal(sift_corpus_pick(c, &rng), e);
    assert_true(s->evicted);
    sift_corpus_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(favored_set_is_minimal_and_covers),
        cmocka_unit_test(rare_features_are_picked_more),
        cmocka_unit_test(features_weigh_by_their_square_root),
        cmocka_unit_test(costly_entries_are_picked_less),
        cmocka_unit_test(slow_entries_are_picked_less_by_time),
        cmocka_unit_test(slow_entries_take_little_time_when_many),
        cmocka_unit_test(new_entries_get_energy_that_fades),
        cmocka_unit_test(finds_stop_the_fading),
        cmocka_unit_test(featureless_seeds_until_coverage),
        cmocka_unit_test(focus_entries_weigh_a_thousand_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
