/* Tests of the share of mutants' runs that count value features (engine/core/values_share.c):
 * the share each measured cost gives, blocks of one mode, every run at a budget of 100%, one
 * slow run that does not decide, and values that lead the finds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/core/values_share.h"

enum {
    ONE = SIFT_VALUES_SHARE_ONE,
    MOST = ONE - ONE / 16,
    LEAD = ONE - ONE / 64,
    LEAST = ONE / 32,
    BUDGET = ONE / 16
};

/* Draws N runs, each taking ON_NS with values and OFF_NS without, of which one in VALUE_EVERY
 * of those with values finds something through values alone and one in OTHER_EVERY of all finds
 * something else (0: none); returns how many had values. */
static unsigned run_finding(sift_values_share *s, unsigned n, uint64_t on_ns, uint64_t off_ns,
                            unsigned value_every, unsigned other_every)
{
    unsigned on = 0;
    for (unsigned i = 0; i < n; i++) {
        bool values = sift_values_share_next(s);
        on += values;
        if (values && value_every && on % value_every == 0) sift_values_share_found(s, true);
        if (other_every && i % other_every == 0) sift_values_share_found(s, false);
        sift_values_share_took(s, values, values ? on_ns : off_ns);
    }
    return on;
}

static unsigned run(sift_values_share *s, unsigned n, uint64_t on_ns, uint64_t off_ns)
{
    return run_finding(s, n, on_ns, off_ns, 0, 0);
}

static void starts_with_values_on_nearly_every_run(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 1);
    assert_int_equal(s.share, MOST);
    unsigned on = 0, n = 64 * 400;
    for (unsigned i = 0; i < n; i++)
        on += sift_values_share_next(&s);
    /* 400 blocks drawn at 15/16: about 375 with values. */
    assert_in_range(on / 64, 340, 395);
    assert_true(on < n);
}

static void runs_come_in_blocks_of_one_mode(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 7);
    s.share = ONE / 2;
    unsigned blocks_on = 0;
    for (unsigned b = 0; b < 200; b++) {
        bool first = sift_values_share_next(&s);
        for (unsigned i = 1; i < 64; i++)
            assert_int_equal(sift_values_share_next(&s), first);
        blocks_on += first;
    }
    assert_in_range(blocks_on, 60, 140);
}

static void cheap_values_keep_the_most_share(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 2);
    run(&s, 64 * 1000, 1000, 1000);
    assert_int_equal(s.share, MOST);
    /* Within the budget too: a twentieth more with values. */
    run(&s, 64 * 1000, 1050, 1000);
    assert_int_equal(s.share, MOST);
}

static void costly_values_get_the_share_the_budget_allows(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 3);
    /* Values double a run: a sixteenth of the runs spends the budget of a sixteenth. */
    run(&s, 64 * 4000, 2000, 1000);
    assert_int_equal(s.share, BUDGET);
    /* Then they cost half a run: twice the share. */
    run(&s, 64 * 4000, 1500, 1000);
    assert_in_range(s.share, 2 * BUDGET - 4, 2 * BUDGET + 4);
}

static void values_never_drop_below_the_least_share(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 4);
    unsigned on = run(&s, 64 * 8000, 100000, 1000);
    assert_int_equal(s.share, LEAST);
    assert_true(on > 0);
}

static void a_budget_of_every_run_counts_values_on_every_run(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, ONE, 5);
    assert_int_equal(run(&s, 64 * 100, 100000, 1000), 64 * 100);
    assert_int_equal(s.share, ONE);
}

/* A hang-like run among values' runs weighs at most eight mean runs, so it does not pass for
 * values' cost. */
static void one_slow_run_does_not_decide(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 6);
    run(&s, 64 * 1000, 1000, 1000);
    assert_int_equal(s.share, MOST);
    sift_values_share_took(&s, true, 1000000000000ull);
    run(&s, 64 * 1000, 1000, 1000);
    assert_int_equal(s.share, MOST);
}

/* Values that double a run, and only they find: a state machine whose states run the same code.
 * The budget would give them a sixteenth of the runs; they get 63 in 64, until edges find. */
static void values_that_lead_the_finds_get_the_lead_share(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 8);
    run_finding(&s, 64 * 4000, 2000, 1000, 1000, 0);
    assert_int_equal(s.share, LEAD);
    /* Nothing finds for a while (the next state is thousands of runs away): values still lead. */
    run_finding(&s, 64 * 4000, 2000, 1000, 0, 0);
    assert_int_equal(s.share, LEAD);
    /* Edges find again, a third as often per run as values alone: the budget's share. */
    run_finding(&s, 64 * 4000, 2000, 1000, 1000, 3000);
    assert_int_equal(s.share, BUDGET);
}

/* Values that find ten times what the rest finds still get the budget's share while the rest
 * finds at all: late in a campaign finds through values alone outnumber the others and each
 * brings less. Once nothing else finds, values lead. */
static void values_lead_only_where_nothing_else_finds(void **state)
{
    (void)state;
    sift_values_share s;
    sift_values_share_init(&s, BUDGET, 9);
    run_finding(&s, 64 * 4000, 2000, 1000, 100, 1000);
    assert_int_equal(s.share, BUDGET);
    run_finding(&s, 64 * 4000, 2000, 1000, 100, 0);
    assert_int_equal(s.share, LEAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(starts_with_values_on_nearly_every_run),
        cmocka_unit_test(runs_come_in_blocks_of_one_mode),
        cmocka_unit_test(cheap_values_keep_the_most_share),
        cmocka_unit_test(costly_values_get_the_share_the_budget_allows),
        cmocka_unit_test(values_never_drop_below_the_least_share),
        cmocka_unit_test(a_budget_of_every_run_counts_values_on_every_run),
        cmocka_unit_test(one_slow_run_does_not_decide),
        cmocka_unit_test(values_that_lead_the_finds_get_the_lead_share),
        cmocka_unit_test(values_lead_only_where_nothing_else_finds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
