/* Tests of the byte pair and triple sets (engine/base/ngrams.c): never a false "cannot occur", for
 * needles cut from the input and drawn at random, over inputs from a small alphabet and the
 * whole byte range, and after parts of an input change and their pairs are added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/ngrams.h"
#include "rt/memfind.h"

#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static uint8_t byte_of(uint64_t *s, unsigned alphabet)
{
    return (uint8_t)(alphabet == 256 ? next(s) : "\0\xff\x01\x80"[next(s) % alphabet]);
}

/* Checks 400 needles of 1-8 bytes, half of them cut from D, half random, against G. */
static void check_needles(const sift_ngrams *g, const uint8_t *d, size_t size, uint64_t *s,
                          unsigned alphabet)
{
    for (int k = 0; k < 400; k++) {
        uint8_t needle[8];
        size_t n = 1 + next(s) % 8;
        if (n <= size && k % 2) {
            memcpy(needle, d + next(s) % (size - n + 1), n);
            assert_true(sift_ngrams_may_hold(g, needle, n));
            continue;
        }
        for (size_t i = 0; i < n; i++)
            needle[i] = byte_of(s, alphabet);
        if (!sift_ngrams_may_hold(g, needle, n)) assert_null(sift_memfind(d, size, needle, n));
    }
}

static void no_false_negatives(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    uint8_t d[3000];
    sift_ngrams g;
    bool rejected = false;
    for (int round = 0; round < 60; round++) {
        unsigned alphabet = round % 2 ? 256 : 3;
        size_t size = next(&s) % sizeof d;
        for (size_t i = 0; i < size; i++)
            d[i] = byte_of(&s, alphabet);
        sift_ngrams_of(&g, d, size);
        check_needles(&g, d, size, &s, alphabet);
        /* Bytes changed in place, and their pairs (with the ones they border) added. */
        for (int change = 0; change < 20 && size > 8; change++) {
            size_t at = next(&s) % (size - 8), n = 1 + next(&s) % 8;
            for (size_t i = 0; i < n; i++)
                d[at + i] = byte_of(&s, 256);
            sift_ngrams_add(&g, d, size, at >= 2 ? at - 2 : 0, at + n);
        }
        check_needles(&g, d, size, &s, alphabet);
        uint8_t absent[4] = {0x42, 0x43, 0x44, 0x45};
        rejected |= size < 100 && !sift_ngrams_may_hold(&g, absent, 2) &&
                    !sift_ngrams_may_hold(&g, absent, 4);
    }
    /* The sets do rule needles out: short inputs of three symbols hold few of them. */
    assert_true(rejected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_false_negatives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
