/* Tests of the substring search under the interposed memmem/strstr and the mutator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rt/memfind.h"

#include <stdlib.h>
#include <string.h>

/* The first occurrence, byte by byte: what both searches must agree with. */
static const uint8_t *reference(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
    if (m > n) return NULL;
    for (size_t i = 0; i + m <= n; i++)
        if (m == 0 || memcmp(hay + i, needle, m) == 0) return hay + i;
    return NULL;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static void check(const uint8_t *hay, size_t n, const uint8_t *needle, size_t m)
{
    const uint8_t *want = reference(hay, n, needle, m);
    const uint8_t *fast = sift_memfind(hay, n, needle, m);
    const uint8_t *hashed = sift_memfind_hashed(hay, n, needle, m);
    if (fast != want || hashed != want)
        fail_msg("haystack of %zu, needle of %zu: want offset %td, memfind %td, hashed %td", n, m,
                 want ? want - hay : -1, fast ? fast - hay : -1, hashed ? hashed - hay : -1);
}

/* Half of the rounds draw from text, half from the bytes of binary inputs (0 and 0xff most of
 * all), where the first byte of a needle makes a poor anchor. */
static uint8_t letter(uint64_t *seed, unsigned alphabet, int round)
{
    static const uint8_t binary[] = {0x00, 0xff, 0x01, 0x80};
    unsigned k = (unsigned)(next(seed) % alphabet);
    return round % 2 ? binary[k] : (uint8_t)('a' + k);
}

/* Fills the N bytes of HAY from ALPHABET, cuts a needle of M bytes from it half of the time
 * (when it fits) or draws one, and checks the search for it. */
static void fill_and_check(uint64_t *seed, uint8_t *hay, size_t n, uint8_t *needle, size_t m,
                           unsigned alphabet, int round)
{
    for (size_t i = 0; i < n; i++)
        hay[i] = letter(seed, alphabet, round);
    if (n && m <= n && next(seed) % 2) {
        size_t at = next(seed) % (n - m + 1);
        memcpy(needle, hay + at, m);
    } else {
        for (size_t i = 0; i < m; i++)
            needle[i] = letter(seed, alphabet, round);
    }
    check(hay, n, needle, m);
}

/* Small alphabets make partial matches common, and needles cut from the haystack make hits at
 * every place, the last one included. */
static void random_searches_agree_with_the_reference(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    uint8_t hay[300], needle[40];
    for (int round = 0; round < 20000; round++) {
        size_t n = next(&seed) % sizeof hay, m = next(&seed) % sizeof needle;
        unsigned alphabet = 1 + (unsigned)(next(&seed) % 4);
        fill_and_check(&seed, hay, n, needle, m, alphabet, round);
    }
}

/* Haystacks long enough for the search to choose its anchor byte from a sample, with needles
 * cut from them or drawn, of text and of binary bytes alike. */
static void long_haystacks_agree_with_the_reference(void **state)
{
    (void)state;
    uint64_t seed = 0x2545f4914f6cdd1dull;
    static uint8_t hay[6000];
    uint8_t needle[24];
    for (int round = 0; round < 2000; round++) {
        size_t n = SIFT_MEMFIND_SAMPLE_FROM + next(&seed) % (sizeof hay - SIFT_MEMFIND_SAMPLE_FROM);
        size_t m = 1 + next(&seed) % sizeof needle;
        unsigned alphabet = 1 + (unsigned)(next(&seed) % 4);
        fill_and_check(&seed, hay, n, needle, m, alphabet, round);
    }
}

/* A haystack of one byte against a needle of that byte but for its end: every place is a
 * candidate that almost matches, the case where the search goes over to hashing. */
static void near_misses_everywhere_still_find_the_answer(void **state)
{
    (void)state;
    size_t n = 1 << 22, m = 4096;
    uint8_t *hay = malloc(n + m), *needle = malloc(m);
    assert_non_null(hay);
    assert_non_null(needle);
    memset(hay, 'a', n + m);
    memset(needle, 'a', m);
    needle[m - 1] = 'b';
    assert_null(sift_memfind(hay, n, needle, m));
    /* The needle at the very end, found after the switch. */
    memcpy(hay + n, needle, m);
    assert_ptr_equal(sift_memfind(hay, n + m, needle, m), hay + n);
    free(hay);
    free(needle);
}

static void edges(void **state)
{
    (void)state;
    const uint8_t *s = (const uint8_t *)"abcabd";
    check(s, 6, (const uint8_t *)"", 0);
    check(s, 0, (const uint8_t *)"", 0);
    check(s, 6, (const uint8_t *)"abd", 3);
    check(s, 6, (const uint8_t *)"abcabd", 6);
    check(s, 5, (const uint8_t *)"abcabd", 6);
    check(s, 6, (const uint8_t *)"d", 1);
    check(s, 5, (const uint8_t *)"d", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_searches_agree_with_the_reference),
        cmocka_unit_test(long_haystacks_agree_with_the_reference),
        cmocka_unit_test(near_misses_everywhere_still_find_the_answer),
        cmocka_unit_test(edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
