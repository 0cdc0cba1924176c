/* Radix sorts (radix.h). One byte a pass, from the lowest: a pass over a byte that every key
 * shares moves nothing and is skipped, so dense indices, which fill only their low bytes, and
 * feature ids, whose high bytes name one of a few domains, take a pass per byte that varies. */
#include "engine/base/radix.h"

#include <string.h>

/* Below this many keys, insertion sort beats clearing and summing the byte counts. */
#define SMALL 48

static inline __attribute__((always_inline)) uint64_t load(const unsigned char *at, size_t width)
{
    if (width == 4) {
        uint32_t k;
        memcpy(&k, at, 4);
        return k;
    }
    uint64_t k;
    memcpy(&k, at, 8);
    return k;
}

static inline __attribute__((always_inline)) void store(unsigned char *at, size_t width, uint64_t k)
{
    if (width == 4) {
        uint32_t narrow = (uint32_t)k;
        memcpy(at, &narrow, 4);
    } else {
        memcpy(at, &k, 8);
    }
}

static inline __attribute__((always_inline)) void insertion(unsigned char *keys, size_t n,
                                                            size_t width)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t k = load(keys + i * width, width);
        size_t j = i;
        for (; j > 0 && load(keys + (j - 1) * width, width) > k; j--)
            store(keys + j * width, width, load(keys + (j - 1) * width, width));
        store(keys + j * width, width, k);
    }
}

/* The body of both sorts, with WIDTH a constant in each. */
static inline __attribute__((always_inline)) void sort(unsigned char *keys, unsigned char *tmp,
                                                       size_t n, size_t width)
{
    uint64_t prev = 0;
    size_t i = 0;
    for (; i < n; i++) {
        uint64_t k = load(keys + i * width, width);
        if (i && k < prev) break;
        prev = k;
    }
    if (i == n) return; /* already in order, as lists taken in map order often are */
    if (n < SMALL) {
        insertion(keys, n, width);
        return;
    }
    size_t count[8][256];
    memset(count, 0, width * sizeof(count[0]));
    for (i = 0; i < n; i++) {
        uint64_t k = load(keys + i * width, width);
        for (size_t d = 0; d < width; d++)
            count[d][(k >> (8 * d)) & 0xff]++;
    }
    unsigned char *from = keys, *to = tmp;
    for (size_t d = 0; d < width; d++) {
        uint64_t first = load(from, width);
        if (count[d][(first >> (8 * d)) & 0xff] == n) continue;
        size_t at = 0;
        for (size_t b = 0; b < 256; b++) {
            size_t c = count[d][b];
            count[d][b] = at;
            at += c;
        }
        for (i = 0; i < n; i++) {
            uint64_t k = load(from + i * width, width);
            store(to + count[d][(k >> (8 * d)) & 0xff]++ * width, width, k);
        }
        unsigned char *t = from;
        from = to;
        to = t;
    }
    if (from != keys) memcpy(keys, from, n * width);
}

void sift_radix_sort32(uint32_t *keys, uint32_t *tmp, size_t n)
{
    sort((unsigned char *)keys, (unsigned char *)tmp, n, 4);
}

void sift_radix_sort64(uint64_t *keys, uint64_t *tmp, size_t n)
{
    sort((unsigned char *)keys, (unsigned char *)tmp, n, 8);
}
