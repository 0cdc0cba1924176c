/* -set_cover_merge's choice (engine/modes/setcover.c): greedy set cover, the input that adds the
 * most features not yet covered first, the smaller on a tie, computed lazily. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/rng.h"
#include "engine/modes/setcover.h"

#include <stdbool.h>

#define MAX_IDS 64

typedef struct {
    sift_feature_id ids[MAX_IDS];
    sift_setcover_input in;
} owned_input;

static void set(owned_input *o, size_t size, const char *features)
{
    o->in = (sift_setcover_input){.ids = o->ids, .size = size};
    for (const char *c = features; *c; c++)
        o->ids[o->in.n++] = (sift_feature_id)*c;
}

static size_t pick(owned_input *o, size_t n, const char *known, size_t *order, size_t *added)
{
    sift_setcover_input in[16];
    for (size_t i = 0; i < n; i++)
        in[i] = o[i].in;
    sift_feature_id k[MAX_IDS];
    size_t nk = 0;
    for (const char *c = known; *c; c++)
        k[nk++] = (sift_feature_id)*c;
    return sift_setcover_pick(in, n, k, nk, order, added);
}

/* libFuzzer's set_cover_merge test: one input that covers five features beats five that cover
 * one each, and of two with the same features the smaller goes. */
static void one_wide_input_beats_many_narrow(void **state)
{
    (void)state;
    owned_input o[9];
    set(&o[0], 7, "F");
    set(&o[1], 7, "U");
    set(&o[2], 7, "Z");
    set(&o[3], 7, "z");
    set(&o[4], 7, "E");
    set(&o[5], 7, "R");
    set(&o[6], 9, "UZzER");
    set(&o[7], 8, "UZzER");
    set(&o[8], 7, "");
    size_t order[9], added;
    assert_int_equal(pick(o, 9, "", order, &added), 2);
    assert_int_equal(order[0], 7);
    assert_int_equal(order[1], 0);
    assert_int_equal(added, 6);
}

/* What the corpus already has counts for nothing; repeats count once. */
static void known_features_add_nothing(void **state)
{
    (void)state;
    owned_input o[3];
    set(&o[0], 1, "aab");
    set(&o[1], 1, "bc");
    set(&o[2], 1, "cccd");
    size_t order[3], added;
    assert_int_equal(pick(o, 3, "abcd", order, &added), 0);
    assert_int_equal(added, 0);
    assert_int_equal(pick(o, 3, "ab", order, &added), 1);
    assert_int_equal(order[0], 2);
    assert_int_equal(added, 2);
}

/* The plain greedy: every input counted again for every pick. */
static size_t naive(const owned_input *o, size_t n, size_t *order)
{
    bool covered[256] = {0}, taken[16] = {0};
    size_t picked = 0;
    for (;;) {
        size_t best = n, best_gain = 0;
        for (size_t i = 0; i < n; i++) {
            bool seen[256] = {0};
            size_t gain = 0;
            for (size_t j = 0; j < o[i].in.n; j++) {
                unsigned id = (unsigned)o[i].ids[j];
                gain += !covered[id] && !seen[id];
                seen[id] = true;
            }
            if (taken[i] || !gain) continue;
            if (gain > best_gain || (gain == best_gain && o[i].in.size < o[best].in.size)) {
                best = i;
                best_gain = gain;
            }
        }
        if (best == n) return picked;
        taken[best] = true;
        order[picked++] = best;
        for (size_t j = 0; j < o[best].in.n; j++)
            covered[(unsigned)o[best].ids[j]] = true;
    }
}

/* The lazy heap picks what counting everything every time picks, in the same order. */
static void lazy_picks_as_the_plain_greedy(void **state)
{
    (void)state;
    sift_rng rng;
    sift_rng_seed(&rng, 7);
    for (int round = 0; round < 500; round++) {
        owned_input o[16];
        size_t n = 1 + (size_t)sift_rng_below(&rng, 16);
        for (size_t i = 0; i < n; i++) {
            char features[MAX_IDS + 1];
            size_t k = (size_t)sift_rng_below(&rng, MAX_IDS);
            for (size_t j = 0; j < k; j++)
                features[j] = (char)('0' + sift_rng_below(&rng, 70));
            features[k] = 0;
            set(&o[i], 1 + (size_t)sift_rng_below(&rng, 4), features);
        }
        size_t want[16], got[16], added;
        size_t nwant = naive(o, n, want);
        assert_int_equal(pick(o, n, "", got, &added), nwant);
        for (size_t i = 0; i < nwant; i++)
            assert_int_equal(got[i], want[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_wide_input_beats_many_narrow),
        cmocka_unit_test(known_features_add_nothing),
        cmocka_unit_test(lazy_picks_as_the_plain_greedy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
