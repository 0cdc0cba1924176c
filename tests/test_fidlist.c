/* Tests of the packed lists of dense feature indices: every index read back in ascending order
 * whatever the order given, the byte counts the packing promises, and the extremes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/base/fidlist.h"

/* Packs the N indices at FIDS (sorting them), checks the length against the bound and EXPECT
 * (when not 0), and reads them back. */
static void round_trip(uint32_t *fids, size_t n, size_t expect)
{
    uint8_t *out = malloc(sift_fidlist_bound(n) + 1);
    assert_non_null(out);
    out[sift_fidlist_bound(n)] = 0xa5; /* a write past the bound would show here */
    uint32_t *scratch = malloc(n * sizeof(*scratch) + 1);
    assert_non_null(scratch);
    size_t len = sift_fidlist_pack(fids, n, scratch, out);
    free(scratch);
    assert_true(len <= sift_fidlist_bound(n));
    if (expect) assert_int_equal(len, expect);
    assert_int_equal(out[sift_fidlist_bound(n)], 0xa5);
    sift_fidlist_reader r = sift_fidlist_read(out);
    for (size_t j = 0; j < n; j++) {
        assert_int_equal(sift_fidlist_next(&r), fids[j]);
        if (j) assert_true(fids[j] > fids[j - 1]);
    }
    assert_ptr_equal(r.at, out + len);
    free(out);
}

static void indices_come_back_ascending(void **state)
{
    (void)state;
    uint32_t fids[] = {9, 3, 0, 127, 5, 128};
    round_trip(fids, 6, 0);
    assert_int_equal(fids[0], 0);
    assert_int_equal(fids[5], 128);
}

/* Close indices take a byte each, the distance from the last one deciding, not the value. */
static void a_dense_run_takes_a_byte_each(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint32_t fids[N];
    for (size_t j = 0; j < N; j++)
        fids[j] = 5000000 + 2 * (uint32_t)j;
    /* The first distance, 5,000,000, needs 23 bits: four bytes; the rest are 2 each: one byte. */
    round_trip(fids, N, 4 + (N - 1));
}

static void the_extremes_fit_the_bound(void **state)
{
    (void)state;
    uint32_t one[] = {UINT32_MAX};
    round_trip(one, 1, 5);
    uint32_t ends[] = {UINT32_MAX, 0, 1u << 28, (1u << 28) - 1, 1u << 14, 1u << 7};
    round_trip(ends, 6, 0);
    uint32_t step_edges[] = {127, 127 + 128, 127 + 128 + 16384};
    round_trip(step_edges, 3, 1 + 2 + 3);
}

static void an_empty_list_takes_nothing(void **state)
{
    (void)state;
    uint8_t out[1] = {0xa5};
    assert_int_equal(sift_fidlist_pack(NULL, 0, NULL, out), 0);
    assert_int_equal(out[0], 0xa5);
}

/* Random sets, shuffled: what a corpus hands over, its indices in the order of their ids. */
static void random_sets_round_trip(void **state)
{
    (void)state;
    enum { N = 4096 };
    static uint32_t fids[N];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 20; round++) {
        size_t n = 0;
        uint32_t v = 0;
        unsigned spread = 1u << (round % 31);
        while (n < N) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t step = 1 + (uint32_t)(x % spread);
            if (v > UINT32_MAX - step) break;
            fids[n++] = v += step;
        }
        for (size_t j = n; j > 1; j--) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t k = x % j;
            uint32_t t = fids[j - 1];
            fids[j - 1] = fids[k];
            fids[k] = t;
        }
        round_trip(fids, n, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(indices_come_back_ascending),
        cmocka_unit_test(a_dense_run_takes_a_byte_each),
        cmocka_unit_test(the_extremes_fit_the_bound),
        cmocka_unit_test(an_empty_list_takes_nothing),
        cmocka_unit_test(random_sets_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
