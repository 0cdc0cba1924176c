/* Tests of the feature id table: every key value usable, lookups after growth, reserved room
 * that inserts never outgrow, and sizes it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/featmap.h"

/* Keys as feature ids are: small fields in a few bit ranges, ids that differ only in their
 * high bits (which a table keyed on the low bits would pile into one slot), and the extremes. */
static uint64_t key_of(size_t i)
{
    switch (i % 4) {
    case 0:
        return (uint64_t)i << 40;
    case 1:
        return i;
    case 2:
        return UINT64_MAX - i;
    default:
        return ((uint64_t)(i % 7) << 56) | ((uint64_t)i << 8) | 3;
    }
}

/* Inserts key_of(0..N-1), room reserved for STEP keys at a time, key i holding i. */
static void fill(sift_featmap *m, size_t n, size_t step)
{
    for (size_t i = 0; i < n; i++) {
        if (i % step == 0) assert_int_equal(sift_featmap_reserve(m, step), 0);
        uint32_t *v = sift_featmap_slot(m, key_of(i));
        assert_int_equal(*v, SIFT_FEATMAP_NONE); /* no key repeats */
        *v = (uint32_t)i;
    }
}

static void an_empty_map_finds_nothing(void **state)
{
    (void)state;
    sift_featmap m;
    sift_featmap_init(&m);
    assert_int_equal(m.cap, 0);
    assert_int_equal(sift_featmap_get(&m, 0), SIFT_FEATMAP_NONE);
    assert_int_equal(sift_featmap_get(&m, UINT64_MAX), SIFT_FEATMAP_NONE);
    sift_featmap_free(&m);
    /* Reserved room holds nothing yet. */
    assert_int_equal(sift_featmap_reserve(&m, 10), 0);
    assert_true(m.cap >= 10);
    assert_int_equal(m.count, 0);
    assert_int_equal(sift_featmap_get(&m, 0), SIFT_FEATMAP_NONE);
    assert_int_equal(sift_featmap_get(&m, 12345), SIFT_FEATMAP_NONE);
    sift_featmap_free(&m);
    assert_null(m.keys);
    assert_int_equal(m.cap, 0);
}

static void every_key_value_is_usable(void **state)
{
    (void)state;
    sift_featmap m = {0};
    assert_int_equal(sift_featmap_reserve(&m, 3), 0);
    *sift_featmap_slot(&m, 0) = 7;
    *sift_featmap_slot(&m, UINT64_MAX) = 0;
    *sift_featmap_slot(&m, 1ull << 63) = SIFT_FEATMAP_NONE - 1;
    assert_int_equal(m.count, 3);
    assert_int_equal(sift_featmap_get(&m, 0), 7);
    assert_int_equal(sift_featmap_get(&m, UINT64_MAX), 0);
    assert_int_equal(sift_featmap_get(&m, 1ull << 63), SIFT_FEATMAP_NONE - 1);
    assert_int_equal(sift_featmap_get(&m, 1), SIFT_FEATMAP_NONE);
    sift_featmap_free(&m);
}

/* The slot of a key already there is its own: the value stays and the count does not grow. */
static void a_key_has_one_slot(void **state)
{
    (void)state;
    sift_featmap m = {0};
    assert_int_equal(sift_featmap_reserve(&m, 2), 0);
    uint32_t *v = sift_featmap_slot(&m, 42);
    *v = 5;
    assert_ptr_equal(sift_featmap_slot(&m, 42), v);
    assert_int_equal(*sift_featmap_slot(&m, 42), 5);
    assert_int_equal(m.count, 1);
    *sift_featmap_slot(&m, 43) = 6;
    assert_int_equal(m.count, 2);
    assert_int_equal(sift_featmap_get(&m, 42), 5);
    assert_int_equal(sift_featmap_get(&m, 43), 6);
    sift_featmap_free(&m);
}

/* Growing one key at a time and all at once give the same table contents. */
static void lookups_hold_across_growth(void **state)
{
    (void)state;
    enum { N = 20000 };
    const size_t steps[] = {1, 7, N};
    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        sift_featmap m = {0};
        fill(&m, N, steps[k]);
        assert_int_equal(m.count, N);
        assert_int_equal(m.cap & (m.cap - 1), 0); /* a power of two */
        assert_true(m.count <= m.cap / 4 * 3);    /* room left for misses to end */
        for (size_t i = 0; i < N; i++)
            if (sift_featmap_get(&m, key_of(i)) != i)
                fail_msg("step %zu: key %zu (%#llx) lost", steps[k], i,
                         (unsigned long long)key_of(i));
        for (size_t i = N; i < N + 1000; i++)
            assert_int_equal(sift_featmap_get(&m, key_of(i)), SIFT_FEATMAP_NONE);
        sift_featmap_free(&m);
    }
}

/* Inserts into reserved room never move the table: the fuzzer's hot path does not allocate. */
static void reserved_room_is_not_reallocated(void **state)
{
    (void)state;
    sift_featmap m = {0};
    assert_int_equal(sift_featmap_reserve(&m, 1000), 0);
    const uint64_t *keys = m.keys;
    size_t cap = m.cap;
    for (size_t i = 0; i < 1000; i++)
        *sift_featmap_slot(&m, key_of(i)) = (uint32_t)i;
    assert_ptr_equal(m.keys, keys);
    assert_int_equal(m.cap, cap);
    /* Room that is there already is not made again. */
    assert_int_equal(sift_featmap_reserve(&m, 0), 0);
    assert_ptr_equal(m.keys, keys);
    sift_featmap_free(&m);
}

/* A size that cannot be allocated is refused and leaves the map as it was. */
static void impossible_sizes_are_refused(void **state)
{
    (void)state;
    sift_featmap m = {0};
    fill(&m, 100, 100);
    const uint64_t *keys = m.keys;
    size_t cap = m.cap;
    assert_int_equal(sift_featmap_reserve(&m, SIZE_MAX), -1);
    assert_int_equal(sift_featmap_reserve(&m, SIZE_MAX / 2), -1);
    assert_int_equal(sift_featmap_reserve(&m, SIZE_MAX / 16), -1);
    assert_ptr_equal(m.keys, keys);
    assert_int_equal(m.cap, cap);
    assert_int_equal(m.count, 100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(sift_featmap_get(&m, key_of(i)), i);
    sift_featmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_empty_map_finds_nothing),
        cmocka_unit_test(every_key_value_is_usable),
        cmocka_unit_test(a_key_has_one_slot),
        cmocka_unit_test(lookups_hold_across_growth),
        cmocka_unit_test(reserved_room_is_not_reallocated),
        cmocka_unit_test(impossible_sizes_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
