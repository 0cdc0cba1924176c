/* Tests of the radix sorts (engine/base/radix.c) against qsort: both widths, lists short and
 * long, already sorted, reversed, with repeats, and with keys that differ only in their low
 * bytes, only in their high bytes, or anywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/radix.h"

#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static int by_value64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int by_value32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

enum shape { RANDOM, SORTED, REVERSED, SHAPES };

/* N keys of the given SHAPE whose varying bits are those of MASK. */
static void fill(uint64_t *keys, size_t n, uint64_t mask, enum shape shape, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = next(seed) & mask;
    if (shape != RANDOM) qsort(keys, n, sizeof(*keys), by_value64);
    if (shape == REVERSED)
        for (size_t i = 0; i < n / 2; i++) {
            uint64_t t = keys[i];
            keys[i] = keys[n - 1 - i];
            keys[n - 1 - i] = t;
        }
}

static void check(size_t n, uint64_t mask, enum shape shape, uint64_t *seed)
{
    uint64_t *keys = malloc((n + 1) * sizeof(*keys)), *want = malloc((n + 1) * sizeof(*want));
    uint64_t *tmp = malloc((n + 1) * sizeof(*tmp));
    uint32_t *k32 = malloc((n + 1) * sizeof(*k32)), *w32 = malloc((n + 1) * sizeof(*w32));
    uint32_t *t32 = malloc((n + 1) * sizeof(*t32));
    assert_true(keys && want && tmp && k32 && w32 && t32);
    fill(keys, n, mask, shape, seed);
    for (size_t i = 0; i < n; i++)
        k32[i] = w32[i] = (uint32_t)(keys[i] ^ keys[i] >> 32);
    memcpy(want, keys, n * sizeof(*keys));
    qsort(want, n, sizeof(*want), by_value64);
    qsort(w32, n, sizeof(*w32), by_value32);
    sift_radix_sort64(keys, tmp, n);
    sift_radix_sort32(k32, t32, n);
    if (n && memcmp(keys, want, n * sizeof(*keys)) != 0)
        fail_msg("64-bit keys: %zu of mask %llx, shape %d, out of order", n,
                 (unsigned long long)mask, shape);
    if (n && memcmp(k32, w32, n * sizeof(*k32)) != 0)
        fail_msg("32-bit keys: %zu of mask %llx, shape %d, out of order", n,
                 (unsigned long long)mask, shape);
    free(keys), free(want), free(tmp), free(k32), free(w32), free(t32);
}

static void agree_with_qsort(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 47, 48, 49, 300, 5000, 70000};
    static const uint64_t masks[] = {0x3, 0xfffff, 0xff00000000000000ull, 0x0300000000ffffffull,
                                     ~0ull};
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t m = 0; m < sizeof masks / sizeof *masks; m++)
            for (int shape = 0; shape < SHAPES; shape++)
                check(sizes[s], masks[m], (enum shape)shape, &seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(agree_with_qsort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
