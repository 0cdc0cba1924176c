/* Internals shared by the mutation operators (mutate.c, mutate_cmp.c).
 *
 * An operator gets DATA with 1 <= SIZE <= MAX and returns the new size (1..MAX), or 0 when it
 * does not apply to this input (nothing written), so that the caller picks another one. */
#ifndef SIFT_MUTATE_OPS_H
#define SIFT_MUTATE_OPS_H

#include "engine/core/mutate.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t sift_mut_below(sift_mutator *m, uint64_t n)
{
    return sift_rng_below(m->rng, n);
}

static inline uint64_t sift_mut_load(const uint8_t *p, size_t w, bool big)
{
    uint64_t v = 0;
    for (size_t i = 0; i < w; i++)
        v |= (uint64_t)p[big ? w - 1 - i : i] << (8 * i);
    return v;
}

static inline void sift_mut_store(uint8_t *p, size_t w, uint64_t v, bool big)
{
    for (size_t i = 0; i < w; i++)
        p[big ? w - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static inline bool sift_mut_is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* Replaces the OLDN bytes at POS with SRC (NEWN bytes), moving the tail. 0 when the result
 * would not fit in MAX. */
size_t sift_mut_replace(uint8_t *d, size_t size, size_t max, size_t pos, size_t oldn,
                        const void *src, size_t newn);

/* Writes V in decimal, without a terminator; returns the length. */
size_t sift_mut_utoa(uint64_t v, char out[20]);

size_t sift_mut_crossover(sift_mutator *m, uint8_t *d, size_t size, size_t max);
size_t sift_mut_dict(sift_mutator *m, uint8_t *d, size_t size, size_t max);
size_t sift_mut_cmp(sift_mutator *m, uint8_t *d, size_t size, size_t max);

#endif
